"""Event logs in the session cache, GET streams, broadcasts and resumption."""

from __future__ import annotations

import json
import queue
import threading
import typing as t

import pytest
from flask import Flask
from flask_caching import Cache

from flask_mcp import MCP, Context
from flask_mcp.events import BROADCAST, EventLog, parse_event_id


def parse_events(chunks: t.Iterator[bytes]) -> t.Iterator[dict[str, t.Any]]:
    """Yield SSE events (``id``, ``data``, ...) as they arrive, skipping keep-alive comments."""
    buffer = b""
    for chunk in chunks:
        buffer += chunk
        while b"\n\n" in buffer:
            raw, buffer = buffer.split(b"\n\n", 1)
            fields: dict[str, t.Any] = {}
            for line in raw.decode().splitlines():
                if line.startswith(":"):
                    continue
                key, _, value = line.partition(": ")
                fields[key] = value
            if fields:
                if fields.get("data"):
                    fields["message"] = json.loads(fields["data"])
                yield fields


@pytest.fixture
def log() -> t.Iterator[EventLog]:
    app = Flask(__name__)
    cache = Cache(app, config={"CACHE_TYPE": "SimpleCache"})
    with app.app_context():
        yield EventLog(cache, ttl=60)


def test_event_log_numbers_and_replays_per_session(log: EventLog) -> None:
    assert log.append("s1", "stream", {"n": 1}) == "stream:1"
    assert log.append("s1", "stream", {"n": 2}) == "stream:2"
    log.append("s2", "stream", {"n": "other session"})
    assert log.last("s1", "stream") == 2
    assert log.after("s1", "stream", 0) == [("stream:1", {"n": 1}), ("stream:2", {"n": 2})]
    assert log.after("s1", "stream", 1) == [("stream:2", {"n": 2})]
    assert log.after("s2", "stream", 0) == [("stream:1", {"n": "other session"})]
    assert log.after("s3", "stream", 0) == []


def test_broadcast_is_shared_by_every_session(log: EventLog) -> None:
    log.append(None, BROADCAST, {"m": 1})
    assert log.after("any", BROADCAST, 0) == log.after("other", BROADCAST, 0) == [(f"{BROADCAST}:1", {"m": 1})]


@pytest.mark.parametrize(
    ("value", "expected"), [("abc:3", ("abc", 3)), ("a:b:0", ("a:b", 0)), ("abc", None), ("abc:x", None), (":1", None)]
)
def test_parse_event_id(value: str, expected: tuple[str, int] | None) -> None:
    assert parse_event_id(value) == expected


@pytest.fixture
def streaming_mcp(mcp: MCP) -> MCP:
    @mcp.tool
    def add(a: int, b: int) -> int:
        return a + b

    @mcp.resource("docs://{slug}")
    def doc(slug: str) -> str:
        return slug

    @mcp.tool
    def polite(ctx: Context) -> str:
        ctx.close_stream()  # the client must come back for the result
        return "done"

    return mcp


def open_stream(client: t.Any, last_event_id: str | None = None) -> tuple[t.Any, t.Iterator[dict[str, t.Any]]]:
    headers = client.headers(Accept="text/event-stream")
    if last_event_id:
        headers["Last-Event-ID"] = last_event_id
    response = client.http.get("/mcp", headers=headers, buffered=False)
    assert response.status_code == 200 and response.mimetype == "text/event-stream"
    events = parse_events(iter(response.response))
    priming = next(events)
    assert "id" in priming and "message" not in priming and int(priming["retry"]) > 0
    return response, events


def test_get_needs_a_live_session_and_sse(streaming_mcp: MCP, make_app, make_client) -> None:
    client = make_client(make_app(streaming_mcp))
    assert client.http.get("/mcp", headers={"Accept": "text/event-stream"}).status_code == 400
    assert client.http.get("/mcp", headers={"Accept": "text/event-stream", "Mcp-Session-Id": "nope"}).status_code == 404
    client.initialize()
    assert client.http.get("/mcp", headers=client.headers(Accept="application/json")).status_code == 406
    stateless = make_client(make_app(MCP(), MCP_STATELESS=True))
    assert stateless.http.get("/mcp", headers={"Accept": "text/event-stream"}).status_code == 405


def test_runtime_registration_announces_list_changed(streaming_mcp: MCP, make_app, make_client) -> None:
    app = make_app(streaming_mcp)
    client = make_client(app)
    assert client.initialize()["capabilities"]["tools"] == {"listChanged": True}
    response, events = open_stream(client)
    with app.app_context():
        streaming_mcp.tool(name="late")(lambda: "late")
    assert next(events)["message"] == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {}}
    response.close()
    assert "late" in {tool["name"] for tool in client.list_tools()}


def first_event_in_thread(
    client: t.Any, last_event_id: str | None = None
) -> tuple[threading.Event, queue.Queue[dict[str, t.Any]]]:
    """Read one stream in its own thread, as a server would serve it (a stream holds its request context)."""
    primed: threading.Event = threading.Event()
    first: queue.Queue[dict[str, t.Any]] = queue.Queue()

    def read() -> None:
        response, events = open_stream(client, last_event_id)
        primed.set()
        first.put(next(events))
        response.close()

    threading.Thread(target=read, daemon=True).start()
    return primed, first


def test_resource_updates_reach_only_subscribed_sessions(streaming_mcp: MCP, make_app, make_client) -> None:
    app = make_app(streaming_mcp)
    subscriber, bystander = make_client(app), make_client(app)
    subscriber.initialize()
    bystander.initialize()
    assert subscriber.request("resources/subscribe", {"uri": "docs://intro"}) == {}
    readers = [first_event_in_thread(subscriber), first_event_in_thread(bystander)]
    assert all(primed.wait(10) for primed, _ in readers)
    with app.app_context():
        streaming_mcp.notify_resource_updated("docs://intro")
        streaming_mcp.tool(name="marker")(lambda: "m")  # a broadcast both sessions get, after the update
    updated = {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "docs://intro"}}
    assert readers[0][1].get(timeout=10)["message"] == updated
    assert readers[1][1].get(timeout=10)["message"]["method"] == "notifications/tools/list_changed"
    assert subscriber.request("resources/unsubscribe", {"uri": "docs://intro"}) == {}


def test_a_closed_post_stream_is_resumed_with_last_event_id(streaming_mcp: MCP, make_app, make_client) -> None:
    app = make_app(streaming_mcp)
    client, stranger = make_client(app), make_client(app)
    client.initialize()
    stranger.initialize()
    call = {"jsonrpc": "2.0", "id": 41, "method": "tools/call", "params": {"name": "polite"}}
    posted = client.post(call)
    assert posted.mimetype == "text/event-stream"
    (priming,) = list(parse_events(iter([posted.get_data()])))
    assert "message" not in priming  # closed before the result
    response, events = open_stream(client, priming["id"])
    result = next(events)
    assert result["message"] == {"jsonrpc": "2.0", "id": 41, "result": {"content": [{"type": "text", "text": "done"}]}}
    assert result["id"].startswith(priming["id"].rpartition(":")[0] + ":")
    response.close()
    # What a GET with that event id replays is scoped to the session presenting it.
    stream = priming["id"].rpartition(":")[0]
    with app.app_context():
        events = app.extensions["mcp"].events
        assert [m["id"] for _, m in events.after(client.session_id, stream, 0)] == [41]
        assert events.after(stranger.session_id, stream, 0) == []
