"""New sessions are admitted per caller and while the store has room; a flood costs nobody else a session."""

from __future__ import annotations

import typing as t
import uuid

import pytest
from flask import Flask

from flask_mcp import MCP
from flask_mcp.binding.caches import KeepingCache
from flask_mcp.core.client import ClientState
from flask_mcp.protocol.jsonrpc import RATE_LIMITED, SERVICE_UNAVAILABLE
from flask_mcp.testing import MCPTestClient
from tests.conftest import redis_server

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "flood", "version": "1"}},
}


@pytest.fixture
def server() -> MCP:
    server = MCP(name="admission")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return server


def client_at(make_client: t.Callable[..., MCPTestClient], app: Flask, address: str) -> MCPTestClient:
    """A client whose requests come from *address*."""
    client = make_client(app)
    client.http.environ_base["REMOTE_ADDR"] = address
    return client


def flood(app: Flask, address: str, count: int) -> list[t.Any]:
    """*count* initialize requests from *address*, as one misbehaving client sends them; their responses."""
    http = app.test_client()
    http.environ_base["REMOTE_ADDR"] = address
    headers = {"Accept": "application/json, text/event-stream"}
    return [http.post("/mcp", json=INITIALIZE, headers=headers) for _ in range(count)]


def assert_refused(response: t.Any, status: int, code: int) -> None:
    assert response.status_code == status
    assert response.mimetype == "application/json"
    body = response.get_json()
    assert body["id"] == 0 and body["error"]["code"] == code
    assert int(response.headers["Retry-After"]) == body["error"]["data"]["retryAfter"] >= 1
    assert "Mcp-Session-Id" not in response.headers


def test_each_caller_has_a_budget_of_new_sessions(
    server: MCP, make_app: t.Callable[..., Flask], make_client: t.Callable[..., MCPTestClient]
) -> None:
    """Past MCP_SESSION_RATE_LIMIT a caller gets 429; other callers, and live sessions, are untouched."""
    app = make_app(server, MCP_SESSION_RATE_LIMIT="3/hour")
    victim = client_at(make_client, app, "192.0.2.1")
    victim.initialize()
    responses = flood(app, "198.51.100.7", 5)
    assert [r.status_code for r in responses] == [200, 200, 200, 429, 429]
    assert_refused(responses[-1], 429, RATE_LIMITED)
    assert victim.call_tool("add", {"a": 1, "b": 2})["structuredContent"] == {"result": 3}
    client_at(make_client, app, "192.0.2.2").initialize()


def test_a_full_store_refuses_newcomers_instead_of_evicting(
    server: MCP, make_app: t.Callable[..., Flask], make_client: t.Callable[..., MCPTestClient]
) -> None:
    """At MCP_MAX_SESSIONS initialize gets 503; every live session keeps working; a DELETE makes room."""
    app = make_app(server, MCP_MAX_SESSIONS=4, MCP_SESSION_RATE_LIMIT=None)
    clients = [client_at(make_client, app, f"192.0.2.{n}") for n in range(4)]
    for client in clients:
        client.initialize()
    assert_refused(flood(app, "198.51.100.7", 1)[0], 503, SERVICE_UNAVAILABLE)
    for n, client in enumerate(clients):
        assert client.call_tool("add", {"a": n, "b": 1})["structuredContent"] == {"result": n + 1}
    assert clients[0].http.delete("/mcp", headers=clients[0].headers()).status_code == 204
    assert flood(app, "198.51.100.7", 1)[0].status_code == 200


def test_sessions_that_idled_out_make_room(
    server: MCP, make_app: t.Callable[..., Flask], make_client: t.Callable[..., MCPTestClient]
) -> None:
    """Expired sessions are swept before the store is judged full."""
    app = make_app(server, MCP_MAX_SESSIONS=2, MCP_SESSION_RATE_LIMIT=None, MCP_SESSION_TTL=1)
    backend = app.extensions["cache"][app.extensions["mcp"].sessions.cache]
    for response in flood(app, "198.51.100.7", 2):
        assert response.status_code == 200
    # Age every entry past its expiry instead of waiting for it.
    with backend._lock:
        backend._cache = {key: (1.0, value) for key, (_, value) in backend._cache.items()}
    assert flood(app, "198.51.100.7", 1)[0].status_code == 200


def test_a_flood_of_initialize_costs_nobody_else_a_session(
    server: MCP, make_app: t.Callable[..., Flask], make_client: t.Callable[..., MCPTestClient]
) -> None:
    """The attack: one anonymous client sends thousands of initialize; earlier sessions all survive."""
    # Without the cap, SimpleCache would evict at its threshold: victims first among them.
    app = make_app(server, MCP_MAX_SESSIONS=200, MCP_CACHE_THRESHOLD=800)
    victims = [client_at(make_client, app, f"192.0.2.{n}") for n in range(20)]
    for victim in victims:
        victim.initialize()
    statuses = [response.status_code for response in flood(app, "198.51.100.7", 1500)]
    # Room for 180 more; then 503 until the client's budget of 1,000 attempts an hour is spent; then 429.
    assert statuses == [200] * 180 + [503] * 820 + [429] * 500
    for n, victim in enumerate(victims):
        assert victim.call_tool("add", {"a": n, "b": n})["structuredContent"] == {"result": 2 * n}


def test_short_lived_entries_never_evict_a_session(
    server: MCP, make_app: t.Callable[..., Flask], make_client: t.Callable[..., MCPTestClient]
) -> None:
    """Answers, events and counters live in a cache of their own: filling it to overflowing spares the sessions."""
    app = make_app(server, MCP_EPHEMERAL_CACHE_THRESHOLD=100)
    state = app.extensions["mcp"]
    victim = make_client(app)
    victim.initialize()
    assert state.mailbox.cache is not state.sessions.cache
    with app.app_context():
        for n in range(1000):
            state.mailbox.cache.set(f"await:{uuid.uuid4().hex}:{n}", True)
    assert victim.call_tool("add", {"a": 2, "b": 3})["structuredContent"] == {"result": 5}


def test_ephemeral_cache_follows_the_session_cache(server: MCP, make_app: t.Callable[..., Flask]) -> None:
    """Same backend and settings; MCP_EPHEMERAL_CACHE_* override single settings.

    In process memory, the ephemeral SimpleCache is one that never evicts a live entry.
    """
    app = make_app(server, MCP_EPHEMERAL_CACHE_THRESHOLD=123)
    state = app.extensions["mcp"]
    sessions, ephemeral = (app.extensions["cache"][c] for c in (state.sessions.cache, state.mailbox.cache))
    assert isinstance(ephemeral, type(sessions)) and type(ephemeral) is KeepingCache
    assert (sessions._threshold, ephemeral._threshold) == (40000, 123)


def test_ephemeral_keys_have_a_prefix_of_their_own(
    server: MCP, redis_url: str, make_app: t.Callable[..., Flask]
) -> None:
    """On Redis both caches share the server; the ephemeral one writes under ``<prefix>e:``."""
    import redis

    prefix = f"shop-{uuid.uuid4().hex}:"
    app = make_app(server, MCP_CACHE_TYPE="RedisCache", MCP_CACHE_REDIS_URL=redis_url, MCP_CACHE_KEY_PREFIX=prefix)
    state = app.extensions["mcp"]
    with app.app_context():
        session_id = state.sessions.create(ClientState())
        state.mailbox.expect(session_id, "srv-1")
    with redis.Redis.from_url(redis_url) as client:
        keys = sorted(key.decode() for key in client.scan_iter(match=prefix + "*"))
    assert keys == [f"{prefix}e:await:{{{session_id}}}:srv-1", f"{prefix}session:{{{session_id}}}"]


def test_redis_at_its_memory_limit_refuses_newcomers(make_client: t.Callable[..., MCPTestClient]) -> None:
    """A real redis-server with a small maxmemory: new sessions get 503 before Redis evicts a live one."""
    with redis_server("--maxmemory", "4mb", "--maxmemory-policy", "volatile-ttl") as url:
        server = MCP(name="redis-admission")

        @server.tool()
        def echo(text: str) -> str:
            """Echo the text."""
            return text

        app = Flask("redis_admission")
        app.config.update(
            TESTING=True, MCP_CACHE_TYPE="RedisCache", MCP_CACHE_REDIS_URL=url, MCP_SESSION_RATE_LIMIT=None
        )
        server.init_app(app)
        victims = [client_at(make_client, app, f"192.0.2.{n}") for n in range(10)]
        for victim in victims:
            victim.initialize()
        # Big client infos make each session heavy, so the limit is reached in a few hundred requests.
        heavy = {**INITIALIZE, "params": {**INITIALIZE["params"], "clientInfo": {"name": "x" * 15_000, "version": "1"}}}
        http = app.test_client()
        statuses = []
        for _ in range(1000):
            response = http.post("/mcp", json=heavy, headers={"Accept": "application/json, text/event-stream"})
            statuses.append(response.status_code)
            assert ("Mcp-Session-Id" in response.headers) is (response.status_code == 200)
            if response.status_code == 503:
                assert_refused(response, 503, SERVICE_UNAVAILABLE)
                break
        assert statuses[-1] == 503 and set(statuses[:-1]) == {200}
        import redis

        with redis.Redis.from_url(url) as client:
            assert client.info("stats")["evicted_keys"] == 0
        for victim in victims:
            assert victim.call_tool("echo", {"text": "still here"})["content"][0]["text"] == "still here"
