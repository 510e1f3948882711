"""A session store that stops answering: 503 with Retry-After on every surface, and recovery without a restart."""

from __future__ import annotations

import io
import itertools
import json
import threading
import typing as t

import pytest
from flask import Flask

from flask_mcp import MCP, Context
from flask_mcp.core.server import Server
from flask_mcp.protocol.jsonrpc import SERVICE_UNAVAILABLE
from flask_mcp.stores.failures import store_errors
from flask_mcp.testing import MCPTestClient
from flask_mcp.transport.cgi import serve_cgi
from tests.conftest import RedisProcess
from tests.transport.test_cgi import parse

ACCEPT = "application/json, text/event-stream"


@pytest.fixture
def redis_process() -> t.Iterator[RedisProcess]:
    server = RedisProcess()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def app(redis_process: RedisProcess) -> Flask:
    server = MCP(name="outage")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool(rate_limit="100/minute")
    def limited() -> str:
        """A tool whose calls are counted in the store."""
        return "counted"

    @server.tool()
    def progress(ctx: Context) -> str:
        """A tool with a Context (its requests go through the mailbox)."""
        ctx.report_progress(1, total=1)
        return "done"

    app = Flask("outage")
    app.config.update(TESTING=True, MCP_CACHE_TYPE="RedisCache", MCP_CACHE_REDIS_URL=redis_process.url)
    server.init_app(app)
    return app


def assert_unavailable(response: t.Any, request_id: t.Any = None) -> None:
    """503, Retry-After, a JSON body naming the cause: never a 500, never the store's address."""
    assert response.status_code == 503, response.get_data(as_text=True)
    assert response.mimetype == "application/json"
    assert response.headers["Retry-After"] == "1"
    text = response.get_data(as_text=True)
    assert "127.0.0.1" not in text and "Traceback" not in text
    body = response.get_json()
    if "jsonrpc" in body:
        assert body["id"] == request_id and body["error"]["code"] == SERVICE_UNAVAILABLE
        assert "ConnectionError" in body["error"]["message"]
    else:  # the REST adapter's shape
        assert "session store did not answer" in body["error"]


def test_every_surface_answers_503_while_the_store_is_down(
    app: Flask, redis_process: RedisProcess, make_client: t.Callable[..., MCPTestClient]
) -> None:
    client = make_client(app)
    client.initialize()
    redis_process.stop()
    call = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}}
    assert_unavailable(client.post(call), 5)
    streamed = {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "progress", "arguments": {}}}
    assert_unavailable(client.post(streamed), 6)
    fresh = MCPTestClient(app)
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}},
    }
    assert_unavailable(fresh.post(initialize), 0)
    assert_unavailable(client.http.get("/mcp", headers=client.headers(Accept="text/event-stream")))
    assert_unavailable(client.http.delete("/mcp", headers=client.headers()))
    # The REST adapter needs the store only to count rate-limited calls.
    rest = client.http.post("/mcp/rest/tools/limited", json={}, headers={"Accept": "application/json"})
    assert_unavailable(rest)
    plain = client.http.post("/mcp/rest/tools/add", json={"a": 1, "b": 2}, headers={"Accept": "application/json"})
    assert plain.status_code == 200 and plain.get_json() == {"result": 3}


def test_the_registry_s_look_at_a_store_that_is_down_fails_no_request(
    app: Flask, redis_process: RedisProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request that loads no session looks at the shared registry's record once a second: a look that
    finds the store down leaves the registry as it stands, so a REST call of a plain tool is still served."""
    monkeypatch.setattr("flask_mcp.stores.shared_registry.REFRESH_INTERVAL", 0.0)  # every request looks
    redis_process.stop()
    headers = {"Accept": "application/json"}
    plain = app.test_client().post("/mcp/rest/tools/add", json={"a": 1, "b": 2}, headers=headers)
    assert plain.status_code == 200 and plain.get_json() == {"result": 3}
    assert_unavailable(app.test_client().post("/mcp/rest/tools/limited", json={}, headers=headers))


def test_recovery_needs_no_restart(
    app: Flask, redis_process: RedisProcess, make_client: t.Callable[..., MCPTestClient]
) -> None:
    """The store comes back empty (no persistence): the old session is gone (404), a new one works at once."""
    client = make_client(app)
    client.initialize()
    redis_process.stop()
    assert_unavailable(client.post({"jsonrpc": "2.0", "id": 1, "method": "ping"}), 1)
    redis_process.start()
    lost = client.post({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    assert lost.status_code == 404 and lost.get_json()["error"]["code"] == -32001
    client.initialize()  # what a client does on 404: start a new session
    assert client.call_tool("add", {"a": 2, "b": 2})["structuredContent"] == {"result": 4}


def test_an_outage_under_load_gives_no_500(
    app: Flask, redis_process: RedisProcess, make_client: t.Callable[..., MCPTestClient]
) -> None:
    """Clients calling tools while the store stops and starts again see 200, 503 or 404, never 500."""
    clients = [make_client(app) for _ in range(4)]
    for client in clients:
        client.initialize()
    statuses: list[int] = []
    lock = threading.Lock()
    outage_seen = threading.Event()
    stop = threading.Event()

    def hammer(client: MCPTestClient) -> None:
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": 1, "b": 1}},
        }
        for _ in range(2000):  # bounded, whatever happens
            if stop.is_set():
                return
            status = client.post(call).status_code
            with lock:
                statuses.append(status)
            if status == 503:
                outage_seen.set()

    threads = [threading.Thread(target=hammer, args=(client,)) for client in clients]
    for thread in threads:
        thread.start()
    redis_process.stop()
    assert outage_seen.wait(30)
    redis_process.start()
    stop.set()
    for thread in threads:
        thread.join(60)
    assert set(statuses) <= {200, 503, 404} and 503 in statuses


def test_store_errors_name_only_the_stores_own_exceptions(app: Flask) -> None:
    """A tool's own OSError is a tool failure, not an outage: only Redis's errors count for a Redis store."""
    import redis

    state = app.extensions["mcp"]
    assert state.store_errors == (redis.exceptions.RedisError, redis.exceptions.RedisClusterException)
    assert store_errors(object()) == ()
    assert Server(state.server.registry, name="n", version="1").unavailable == ()


def test_cgi_answers_503_while_the_store_is_down(
    app: Flask, redis_process: RedisProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    redis_process.stop()
    environ = {"REQUEST_METHOD": "POST", "PATH_INFO": "/tools/limited", "CONTENT_LENGTH": "2"}
    for key, value in {**environ, "CONTENT_TYPE": "application/json"}.items():
        monkeypatch.setenv(key, value)
    stdout = io.BytesIO()
    serve_cgi(app, stdin=io.BytesIO(b"{}"), stdout=stdout)
    result = parse(stdout.getvalue())
    assert (result.status, result.headers["Retry-After"]) == (503, "1")
    assert "session store did not answer" in result.json()["error"]


def test_an_open_stream_ends_with_an_error_event_when_the_store_fails(
    app: Flask, redis_process: RedisProcess, make_client: t.Callable[..., MCPTestClient]
) -> None:
    """A GET stream whose store stops answering ends, in bounded time, with an error event naming the cause."""
    client = make_client(app)
    client.initialize()
    response = client.http.get("/mcp", headers=client.headers(Accept="text/event-stream"), buffered=False)
    assert response.status_code == 200
    chunks = iter(response.response)
    assert next(chunks).startswith(b"id: ")  # primed: the stream waits for events
    redis_process.stop()
    rest = b"".join(chunks)  # the stream must end by itself
    response.close()
    data = [line[6:] for line in rest.splitlines() if line.startswith(b"data: ")]
    assert len(data) == 1
    error = json.loads(data[0])["error"]
    assert error["code"] == SERVICE_UNAVAILABLE and "ConnectionError" in error["message"]


def test_a_streamed_call_ends_with_its_response_when_the_store_fails(
    redis_process: RedisProcess, make_client: t.Callable[..., MCPTestClient]
) -> None:
    """The store dies while a tool streams: the stream still carries the tool's response and ends."""
    server, go_on = MCP(name="outage-stream"), threading.Event()

    @server.tool()
    def steps(ctx: Context) -> str:
        """Report progress, wait for the test, report again."""
        ctx.report_progress(1, total=2)
        go_on.wait(10)
        ctx.report_progress(2, total=2)
        return "finished"

    app = Flask("outage_stream")
    app.config.update(
        TESTING=True, MCP_CACHE_TYPE="RedisCache", MCP_CACHE_REDIS_URL=redis_process.url, MCP_SSE_KEEPALIVE=0.05
    )
    server.init_app(app)
    client = make_client(app)
    client.initialize()
    params = {"name": "steps", "arguments": {}, "_meta": {"progressToken": "p"}}
    call = {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params}
    response = client.http.post("/mcp", json=call, headers=client.headers(), buffered=False)
    assert response.mimetype == "text/event-stream"
    chunks = iter(response.response)
    assert next(chunks).startswith(b"id: ")  # primed
    assert b"notifications/progress" in next(chunks)
    redis_process.stop()
    go_on.set()
    rest = b"".join(itertools.islice(chunks, 100))  # ends by itself, well before 100 keep-alives
    response.close()
    assert not rest.endswith(b": keep-alive\n\n"), "the stream never ended"
    messages = [json.loads(line[6:]) for line in rest.splitlines() if line.startswith(b"data: ")]
    assert messages[-1]["id"] == 9 and messages[-1]["result"]["content"][0]["text"] == "finished"
