"""``subscriptions/listen`` (2026-07-28) over real HTTP: the long-lived stream of change notifications.

Against a live threaded werkzeug server: the acknowledgement comes first
with the accepted filter, every message is tagged with the listen request's
id (keeping its JSON type), each stream gets only the notifications it asked
for, the stream ends with its result after ``MCP_LISTEN_MAX_LIFETIME``,
``MCP_MAX_STREAMS`` bounds open streams, and malformed requests are answered
as JSON, not as a stream. Then across processes: two gunicorn processes
sharing a real Redis, the change made on one reaching a stream held by the
other (with the delivery latency printed, not asserted).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import math
import os
import statistics
import threading
import time
import typing as t
import urllib.parse
import uuid

import pytest
from flask import Flask, Response

from flask_mcp import MCP
from flask_mcp.globals import find_state
from flask_mcp.protocol.jsonrpc import HEADER_MISMATCH, INVALID_PARAMS, SERVICE_UNAVAILABLE
from flask_mcp.testing import SchemaValidator
from flask_mcp.testing.client import ACCEPT

from ..conftest import LiveServer
from .test_streaming import Event, Gunicorn, gunicorn, read_events

MODERN = "2026-07-28"
#: Seconds any single wait of a test may take before it counts as a hang.
WAIT = 15.0
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
#: Change notification -> its definition in the official schema.
DEFINITIONS = {
    "notifications/subscriptions/acknowledged": "SubscriptionsAcknowledgedNotification",
    "notifications/tools/list_changed": "ToolListChangedNotification",
    "notifications/prompts/list_changed": "PromptListChangedNotification",
    "notifications/resources/list_changed": "ResourceListChangedNotification",
    "notifications/resources/updated": "ResourceUpdatedNotification",
}
TOOLS_CHANGED = "notifications/tools/list_changed"
PROMPTS_CHANGED = "notifications/prompts/list_changed"
RESOURCES_CHANGED = "notifications/resources/list_changed"
UPDATED = "notifications/resources/updated"
#: Triggers sent across gunicorn processes to measure the delivery latency.
TRIGGERS = 20


# -- the server under test ------------------------------------------------------------


def build_mcp() -> MCP:
    """Two tools, two prompts and two resources, and tools that change what is served."""
    mcp = MCP(name="listen-test", version="1.0.0")
    disabled: set[tuple[str, str]] = set()
    lock = threading.Lock()

    @mcp.tool
    def search(query: str) -> str:
        """Search the notes."""
        return f"found {query}"

    @mcp.tool
    def flip(kind: t.Literal["tool", "prompt", "resource"], name: str) -> str:
        """Disable the component if it is served, enable it otherwise (in every process)."""
        with lock:
            if (kind, name) in disabled:
                mcp.enable(name, kind)
                disabled.discard((kind, name))
                return "enabled"
            mcp.disable(name, kind)
            disabled.add((kind, name))
            return "disabled"

    @mcp.tool
    def touch(uri: str) -> str:
        """Announce that a resource changed."""
        mcp.notify_resource_updated(uri)
        return uri

    @mcp.prompt
    def greet(name: str) -> str:
        """Greet somebody."""
        return f"Hello {name}"

    @mcp.prompt
    def summarize(text: str) -> str:
        """Summarize a text."""
        return f"Summarize: {text}"

    @mcp.resource("notes://1")
    def first_note() -> str:
        """The first note."""
        return "one"

    @mcp.resource("notes://2")
    def second_note() -> str:
        """The second note."""
        return "two"

    return mcp


def gunicorn_app() -> Flask:
    """The app served by gunicorn (``tests.transport.test_listen:gunicorn_app()``), configured from ``MCP_CACHE_*``."""
    app = Flask(__name__)
    app.config.update({key: value for key, value in os.environ.items() if key.startswith("MCP_CACHE_")})
    build_mcp().init_app(app)

    @app.after_request
    def tag_worker(response: Response) -> Response:
        response.headers["X-Worker-Pid"] = str(os.getpid())
        return response

    return app


@pytest.fixture
def served(
    make_app: t.Callable[..., Flask],
) -> t.Callable[..., contextlib.AbstractContextManager[tuple[Flask, MCP, Endpoint]]]:
    """``with served(**config) as (app, mcp, endpoint)``: the test app on a live threaded server."""

    @contextlib.contextmanager
    def serve(**config: t.Any) -> t.Iterator[tuple[Flask, MCP, Endpoint]]:
        mcp = build_mcp()
        app = make_app(mcp, **config)
        with LiveServer(app) as server:
            yield app, mcp, Endpoint(f"{server.url}/mcp")

    return serve


# -- raw HTTP ---------------------------------------------------------------------------


def listen_request(request_id: t.Any, notifications: dict[str, t.Any] | None) -> dict[str, t.Any]:
    """A ``subscriptions/listen`` request; ``None`` leaves ``notifications`` out."""
    params: dict[str, t.Any] = {"_meta": META}
    if notifications is not None:
        params["notifications"] = notifications
    return {"jsonrpc": "2.0", "id": request_id, "method": "subscriptions/listen", "params": params}


def tool_call(name: str, arguments: dict[str, t.Any], request_id: t.Any = "call-1") -> dict[str, t.Any]:
    """A modern ``tools/call`` request."""
    params = {"name": name, "arguments": arguments, "_meta": META}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def routing_headers(message: dict[str, t.Any]) -> dict[str, str]:
    """The headers a modern request repeats from its body."""
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": message["method"]}
    if message["method"] == "tools/call":
        headers["Mcp-Name"] = message["params"]["name"]
    return headers


class Stream:
    """One open listen stream: the HTTP response, then its messages one at a time."""

    def __init__(self, connection: http.client.HTTPConnection, response: http.client.HTTPResponse) -> None:
        self.connection = connection
        self.response = response
        self.events: list[Event] = []
        self._events = read_events(iter(response.readline, b""))

    def next(self) -> dict[str, t.Any]:
        """The next message (blocks up to :data:`WAIT` seconds on the socket)."""
        event = next(self._events)
        self.events.append(event)
        return event.message

    def rest(self) -> list[dict[str, t.Any]]:
        """Every message until the server ends the stream."""
        return [event.message for event in self._events]

    def close(self) -> None:
        """Close the connection (the response holds the socket too once the connection passed it on)."""
        self.response.close()
        self.connection.close()


class Endpoint:
    """The MCP endpoint spoken to with ``http.client``, one connection per request."""

    def __init__(self, url: str) -> None:
        parsed = urllib.parse.urlsplit(url)
        self.host, self.port, self.path = parsed.hostname or "", parsed.port or 80, parsed.path

    def start(self, message: dict[str, t.Any], headers: dict[str, str] | None = None) -> http.client.HTTPConnection:
        """Send *message* with its routing headers (or *headers* instead); the caller gets the response."""
        connection = http.client.HTTPConnection(self.host, self.port, timeout=WAIT)
        all_headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
        all_headers.update(routing_headers(message) if headers is None else headers)
        connection.request("POST", self.path, body=json.dumps(message), headers=all_headers)
        return connection

    def send(
        self, message: dict[str, t.Any], headers: dict[str, str] | None = None
    ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        """POST *message*; the caller reads the response."""
        connection = self.start(message, headers)
        return connection, connection.getresponse()

    def post(
        self, message: dict[str, t.Any], headers: dict[str, str] | None = None
    ) -> tuple[http.client.HTTPResponse, dict[str, t.Any]]:
        """POST *message* and read a JSON answer."""
        connection, response = self.send(message, headers)
        with contextlib.closing(connection):
            body = response.read()
        assert response.headers["Content-Type"] == "application/json", (response.status, body)
        return response, json.loads(body)

    @contextlib.contextmanager
    def listen(self, request_id: t.Any, notifications: dict[str, t.Any]) -> t.Iterator[Stream]:
        """An open listen stream, closed on exit."""
        connection, response = self.send(listen_request(request_id, notifications))
        stream = Stream(connection, response)
        try:
            assert response.status == 200, response.read()
            assert response.headers["Content-Type"] == "text/event-stream"
            yield stream
        finally:
            stream.close()


# -- checks -----------------------------------------------------------------------------


def check_notification(checker: SchemaValidator, message: dict[str, t.Any], request_id: t.Any) -> str:
    """Assert *message* is a notification of the stream opened by *request_id*; return its method."""
    assert "id" not in message, message
    checker.check("JSONRPCNotification", message)
    checker.check("ServerNotification", message)
    checker.check(DEFINITIONS[message["method"]], message)
    tag = message["params"]["_meta"][SUBSCRIPTION_ID]
    assert tag == request_id and type(tag) is type(request_id), message
    return t.cast(str, message["method"])


def check_events(stream: Stream) -> None:
    """Every event read so far is a ``message`` event without an ``id:`` (a listen stream is not resumable)."""
    for event in stream.events:
        assert "id" not in event.fields, event.fields
        assert event.fields.get("event") == "message", event.fields


def acknowledged(checker: SchemaValidator, stream: Stream, request_id: t.Any) -> dict[str, t.Any]:
    """Read the acknowledgement, which must come first; return the accepted filter."""
    ack = stream.next()
    assert check_notification(checker, ack, request_id) == "notifications/subscriptions/acknowledged"
    return t.cast(dict[str, t.Any], ack["params"]["notifications"])


def changes(checker: SchemaValidator, stream: Stream, request_id: t.Any, count: int) -> list[tuple[str, t.Any]]:
    """The next *count* notifications, as (method, uri or None)."""
    found = []
    for _ in range(count):
        message = stream.next()
        method = check_notification(checker, message, request_id)
        found.append((method, message["params"].get("uri")))
    return found


# -- 1. the acknowledgement and the tagging ----------------------------------------------


@pytest.mark.parametrize("request_id", ["listen-1", 7])
def test_acknowledgement_comes_first_and_every_message_is_tagged(
    served: t.Any, modern_schema_checker: SchemaValidator, request_id: t.Any
) -> None:
    """The stream opens with the accepted filter, then carries the change, all tagged with the request id."""
    wanted = {
        "toolsListChanged": True,
        "promptsListChanged": False,
        "resourceSubscriptions": ["notes://1", "notes://1"],
    }
    with served() as (_app, _mcp, endpoint), endpoint.listen(request_id, wanted) as stream:
        headers = stream.response.headers
        assert (headers["Cache-Control"], headers["X-Accel-Buffering"]) == ("no-cache", "no")
        accepted = acknowledged(modern_schema_checker, stream, request_id)
        assert accepted == {"toolsListChanged": True, "resourceSubscriptions": ["notes://1"]}
        modern_schema_checker.check("SubscriptionFilter", accepted)
        response, answer = endpoint.post(tool_call("flip", {"kind": "tool", "name": "search"}))
        assert response.status == 200 and answer["result"]["content"][0]["text"] == "disabled", answer
        response, answer = endpoint.post(tool_call("touch", {"uri": "notes://1"}))
        assert response.status == 200 and not answer["result"].get("isError"), answer
        assert changes(modern_schema_checker, stream, request_id, 2) == [(TOOLS_CHANGED, None), (UPDATED, "notes://1")]
        check_events(stream)


def test_idle_stream_carries_keepalive_comments(served: t.Any, modern_schema_checker: SchemaValidator) -> None:
    """While nothing changes the stream carries SSE comments, not events."""
    with served(MCP_SSE_KEEPALIVE=0.05) as (_app, _mcp, endpoint), endpoint.listen("idle", {}) as stream:
        assert acknowledged(modern_schema_checker, stream, "idle") == {}
        comments = []
        for line in iter(stream.response.readline, b""):
            if line.strip():
                assert line.startswith(b":"), line  # nothing but comments: no change was made
                comments.append(line)
            if len(comments) == 2:
                break
        assert comments == [b": keep-alive\n"] * 2


# -- 2. and 3. what reaches which stream --------------------------------------------------


def test_tool_change_reaches_only_streams_that_asked_for_it(
    served: t.Any, modern_schema_checker: SchemaValidator
) -> None:
    """tools/list_changed reaches a toolsListChanged stream, not a prompts-only one (and the reverse)."""
    with (
        served() as (app, mcp, endpoint),
        endpoint.listen("tools", {"toolsListChanged": True}) as tools,
        endpoint.listen("prompts", {"promptsListChanged": True, "toolsListChanged": False}) as prompts,
    ):
        assert acknowledged(modern_schema_checker, tools, "tools") == {"toolsListChanged": True}
        assert acknowledged(modern_schema_checker, prompts, "prompts") == {"promptsListChanged": True}
        with app.app_context():
            mcp.disable("search")
            mcp.disable("greet", kind="prompt")
            mcp.enable("search")
        assert changes(modern_schema_checker, tools, "tools", 2) == [(TOOLS_CHANGED, None)] * 2
        assert changes(modern_schema_checker, prompts, "prompts", 1) == [(PROMPTS_CHANGED, None)]
        check_events(tools)
        check_events(prompts)


def test_resource_updates_reach_only_streams_subscribed_to_the_uri(
    served: t.Any, modern_schema_checker: SchemaValidator
) -> None:
    """resources/updated reaches the streams subscribed to its URI; resources/list_changed those that asked."""
    with (
        served() as (app, mcp, endpoint),
        endpoint.listen(1, {"resourceSubscriptions": ["notes://1"]}) as first,
        endpoint.listen(2, {"resourceSubscriptions": ["notes://2", "notes://3"]}) as second,
        endpoint.listen(3, {"resourcesListChanged": True}) as listing,
    ):
        assert acknowledged(modern_schema_checker, first, 1) == {"resourceSubscriptions": ["notes://1"]}
        assert acknowledged(modern_schema_checker, second, 2) == {"resourceSubscriptions": ["notes://2", "notes://3"]}
        assert acknowledged(modern_schema_checker, listing, 3) == {"resourcesListChanged": True}
        with app.app_context():
            mcp.notify_resource_updated("notes://1")
            mcp.notify_resource_updated("notes://2")
            mcp.disable("notes://2", kind="resource")
            mcp.notify_resource_updated("notes://1")
            mcp.notify_resource_updated("notes://2")
            mcp.enable("notes://2", kind="resource")
            mcp.notify_resource_updated("notes://1")
            mcp.notify_resource_updated("notes://2")
        assert changes(modern_schema_checker, first, 1, 3) == [(UPDATED, "notes://1")] * 3
        assert changes(modern_schema_checker, second, 2, 3) == [(UPDATED, "notes://2")] * 3
        assert changes(modern_schema_checker, listing, 3, 2) == [(RESOURCES_CHANGED, None)] * 2
        for stream in (first, second, listing):
            check_events(stream)


# -- 4. the end of a stream --------------------------------------------------------------


@pytest.mark.parametrize("request_id", ["short", 0])
def test_stream_ends_with_its_result_after_the_lifetime(
    served: t.Any, modern_schema_checker: SchemaValidator, request_id: t.Any
) -> None:
    """After MCP_LISTEN_MAX_LIFETIME the stream ends with the listen response, tagged, and nothing after it."""
    with (
        served(MCP_LISTEN_MAX_LIFETIME=0.5) as (_app, _mcp, endpoint),
        endpoint.listen(request_id, {"toolsListChanged": True}) as stream,
    ):
        acknowledged(modern_schema_checker, stream, request_id)
        final = stream.next()
        assert stream.rest() == []
        check_events(stream)
    assert final == {
        "jsonrpc": "2.0",
        "id": request_id,
        "result": {"resultType": "complete", "_meta": {SUBSCRIPTION_ID: request_id}},
    }
    assert type(final["result"]["_meta"][SUBSCRIPTION_ID]) is type(request_id)
    modern_schema_checker.check_envelope("subscriptions/listen", final)
    modern_schema_checker.check("SubscriptionsListenResultResponse", final)


# -- 5. MCP_MAX_STREAMS --------------------------------------------------------------------


def test_max_streams_refuses_a_second_listen_until_the_first_is_closed(
    served: t.Any, modern_schema_checker: SchemaValidator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With one slot, a second listen gets 503 + Retry-After; once the first client leaves, a listen is accepted."""
    with served(MCP_MAX_STREAMS=1, MCP_SSE_KEEPALIVE=0.05) as (app, _mcp, endpoint):
        slots = find_state(app).streams  # type: ignore[union-attr]
        released = threading.Event()
        give_back = slots.give_back

        def noting_give_back(*sock: t.Any) -> None:
            give_back(*sock)
            released.set()

        monkeypatch.setattr(slots, "give_back", noting_give_back)
        with endpoint.listen("first", {"toolsListChanged": True}) as first:
            acknowledged(modern_schema_checker, first, "first")
            response, refused = endpoint.post(listen_request("second", {"toolsListChanged": True}))
            assert response.status == 503 and response.headers["Retry-After"] == "5", refused
            modern_schema_checker.check_envelope("subscriptions/listen", refused)
            assert refused["id"] == "second" and refused["error"]["code"] == SERVICE_UNAVAILABLE
            assert refused["error"]["data"] == {"retryAfter": 5}
            assert not released.is_set()
        # The server notices the client left at its next keep-alive write, and gives the slot back.
        assert released.wait(WAIT), "the closed stream's slot was never given back"
        for _attempt in range(100):
            connection, response = endpoint.send(listen_request("third", {"toolsListChanged": True}))
            stream = Stream(connection, response)
            if response.status == 200:
                break
            assert response.status == 503, response.read()
            stream.close()
        else:
            pytest.fail("no listen was accepted after the first stream closed")
        try:
            acknowledged(modern_schema_checker, stream, "third")
        finally:
            stream.close()


def test_a_gone_clients_slot_is_free_for_the_next_listen_at_once(
    served: t.Any, modern_schema_checker: SchemaValidator
) -> None:
    """At the cap, a client that closed its stream gives its slot up before its next keep-alive (a minute here)."""
    with served(MCP_MAX_STREAMS=1, MCP_SSE_KEEPALIVE=60) as (app, _mcp, endpoint):
        with endpoint.listen("first", {"toolsListChanged": True}) as first:
            acknowledged(modern_schema_checker, first, "first")
        # The first client has closed its connection; its stream has written nothing since.
        connection, response = endpoint.send(listen_request("second", {"toolsListChanged": True}))
        stream = Stream(connection, response)
        try:
            assert response.status == 200, response.read()
            acknowledged(modern_schema_checker, stream, "second")
            assert find_state(app).streams.open == 1  # type: ignore[union-attr]
        finally:
            stream.close()


# -- 6. errors are answered as JSON ------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "headers", "code"),
    [
        pytest.param(listen_request("bad", None), None, INVALID_PARAMS, id="notifications-missing"),
        pytest.param(listen_request("bad", {"toolsListChanged": "yes"}), None, INVALID_PARAMS, id="flag-not-boolean"),
        pytest.param(
            listen_request("bad", {"toolsListChanged": True}),
            {"MCP-Protocol-Version": MODERN},
            HEADER_MISMATCH,
            id="mcp-method-missing",
        ),
        pytest.param(
            listen_request("bad", {"toolsListChanged": True}),
            {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"},
            HEADER_MISMATCH,
            id="mcp-method-mismatch",
        ),
    ],
)
def test_malformed_listen_is_answered_as_json(
    served: t.Any,
    modern_schema_checker: SchemaValidator,
    message: dict[str, t.Any],
    headers: dict[str, str] | None,
    code: int,
) -> None:
    """A listen request that cannot be served gets a 400 JSON-RPC error, not a stream."""
    with served() as (_app, _mcp, endpoint):
        response, answer = endpoint.post(message, headers)
    assert response.status == 400, answer
    assert answer["id"] == "bad" and answer["error"]["code"] == code, answer
    modern_schema_checker.check_envelope("subscriptions/listen", answer)
    if code == HEADER_MISMATCH:
        modern_schema_checker.check("HeaderMismatchError", answer)


# -- 7. across processes: gunicorn and Redis ------------------------------------------------


@contextlib.contextmanager
def listen_gunicorn(**env: str) -> t.Iterator[Gunicorn]:
    """:func:`gunicorn_app` under gunicorn (gthread) on a free port."""
    with gunicorn(app="tests.transport.test_listen:gunicorn_app()", **env) as server:
        yield server


def test_change_on_one_gunicorn_process_reaches_a_stream_on_another(
    redis_url: str, modern_schema_checker: SchemaValidator
) -> None:
    """Two gunicorn processes share Redis: a tool list change made on B reaches the listen stream held by A."""
    env = {
        "MCP_CACHE_TYPE": "RedisCache",
        "MCP_CACHE_REDIS_URL": redis_url,
        "MCP_CACHE_KEY_PREFIX": f"flask_mcp_listen:{uuid.uuid4().hex}:",
    }
    latencies: list[float] = []
    with listen_gunicorn(**env) as server_a, listen_gunicorn(**env) as server_b:
        a, b = Endpoint(server_a.url), Endpoint(server_b.url)
        with a.listen("cross", {"toolsListChanged": True}) as stream:
            pid_a = stream.response.headers["X-Worker-Pid"]
            acknowledged(modern_schema_checker, stream, "cross")
            for number in range(TRIGGERS):
                sent = time.perf_counter()
                connection = b.start(tool_call("flip", {"kind": "tool", "name": "search"}, number))
                with contextlib.closing(connection):
                    assert changes(modern_schema_checker, stream, "cross", 1) == [(TOOLS_CHANGED, None)]
                    latencies.append(time.perf_counter() - sent)
                    response = connection.getresponse()
                    body = json.loads(response.read())
                assert response.status == 200 and response.headers["X-Worker-Pid"] != pid_a, body
                assert body["result"]["content"][0]["text"] == ("disabled", "enabled")[number % 2], body
            check_events(stream)
    ordered = sorted(latencies)
    p95 = ordered[math.ceil(0.95 * len(ordered)) - 1]
    print(
        f"\nsubscriptions/listen across gunicorn processes (Redis), {len(latencies)} triggers: "
        f"median {statistics.median(latencies) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms, "
        f"max {ordered[-1] * 1000:.1f} ms"
    )
