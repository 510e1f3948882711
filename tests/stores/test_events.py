"""Event logs in the session cache, GET streams, broadcasts and resumption."""

from __future__ import annotations

import json
import queue
import threading
import typing as t
import uuid

import pytest
from flask import Flask
from flask_caching import Cache

from flask_mcp import MCP, Context
from flask_mcp.binding.caches import KEEPING_CACHE, BoundCache
from flask_mcp.policies.store_keys import key as store_key
from flask_mcp.stores.events import BROADCAST, DELIVERED_GRACE, GAP_GRACE, EventLog, event_count, parse_event_id
from tests.conftest import Clock


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


def test_a_reader_delivers_each_event_once_in_order(log: EventLog) -> None:
    reader = log.reader(None, BROADCAST, 0)
    log.append(None, BROADCAST, {"n": 1})
    log.append(None, BROADCAST, {"n": 2})
    assert [m["n"] for _, m in reader.read(log.last(None, BROADCAST), now=0.0)] == [1, 2]
    assert reader.read(log.last(None, BROADCAST), now=0.0) == []
    log.append(None, BROADCAST, {"n": 3})
    assert [m["n"] for _, m in reader.read(log.last(None, BROADCAST), now=0.0)] == [3]
    assert not reader.behind


def test_a_reader_waits_for_an_event_counted_but_not_stored_yet(log: EventLog) -> None:
    """Another process is between counting event 2 and storing it: event 3 must wait, not pass it."""
    reader = log.reader(None, BROADCAST, 0)
    log.append(None, BROADCAST, {"n": 1})
    log.append(None, BROADCAST, {"n": 2})
    log.append(None, BROADCAST, {"n": 3})
    log.cache.delete(store_key("ev", "*", BROADCAST, 2))  # as if event 2 were not stored yet
    assert [m["n"] for _, m in reader.read(3, now=10.0)] == [1]
    assert reader.behind
    log.cache.set(store_key("ev", "*", BROADCAST, 2), {"n": 2})  # the other process stores it
    assert [m["n"] for _, m in reader.read(3, now=10.5)] == [2, 3]
    assert not reader.behind


def test_a_reader_gives_up_an_event_that_never_comes_after_the_grace(log: EventLog) -> None:
    reader = log.reader(None, BROADCAST, 0)
    for n in (1, 2, 3):
        log.append(None, BROADCAST, {"n": n})
    log.cache.delete(store_key("ev", "*", BROADCAST, 1))  # lost (evicted, expired)
    assert reader.read(3, now=0.0) == []
    assert reader.read(3, now=GAP_GRACE / 2) == []
    assert reader.read(3, now=GAP_GRACE) == []  # steps over event 1 ...
    assert [m["n"] for _, m in reader.read(3, now=GAP_GRACE)] == [2, 3]  # ... and reads on


def test_a_reader_starts_over_with_a_counter_that_started_over(log: EventLog) -> None:
    """A broadcast counter evicted from the store starts again at 1: nothing new is taken for old."""
    reader = log.reader(None, BROADCAST, 0)
    for n in (1, 2, 3):
        log.append(None, BROADCAST, {"n": n})
    assert len(reader.read(3, now=0.0)) == 3
    log.cache.clear()
    log.append(None, BROADCAST, {"n": "new"})
    assert [m["n"] for _, m in reader.read(log.last(None, BROADCAST), now=0.0)] == ["new"]


def test_the_broadcast_counter_does_not_expire_with_its_events(redis_url: str) -> None:
    """Readers keep their place in the broadcast for hours; a restarted count would look delivered.

    On Redis, INCR keeps a key's lifetime: a counter made with one would
    expire however busy it is.
    """
    app = Flask(__name__)
    prefix = f"events-ttl-{uuid.uuid4().hex}:"
    cache = Cache(app, config={"CACHE_TYPE": "RedisCache", "CACHE_REDIS_URL": redis_url, "CACHE_KEY_PREFIX": prefix})
    with app.app_context():
        log = EventLog(cache, ttl=60)
        log.append(None, BROADCAST, {"n": 1})
        log.append("s1", "stream", {"n": 1})
        client = cache.cache._write_client
        assert client.ttl(prefix + log.counter_key(None, BROADCAST)) == -1  # no expiry
        assert 0 < client.ttl(prefix + log.counter_key("s1", "stream")) <= 60
        assert 0 < client.ttl(prefix + store_key("ev", "*", BROADCAST, 1)) <= 60


def test_a_stream_its_handler_numbers_reads_like_an_appended_one(log: EventLog) -> None:
    assert log.write("s1", "req", 1, {"n": 1}, carries=41) == "req:1"
    assert log.write("s1", "req", 2, {"n": 2}) == "req:2"
    assert log.last("s1", "req") == 2 and log.carried("s1", "req") == {"request": 41}
    assert [m["n"] for _, m in log.reader("s1", "req", 0).read(log.last("s1", "req"), now=0.0)] == [1, 2]
    assert log.after("s2", "req", 0) == []  # another session's


@pytest.mark.parametrize(
    ("counter", "count"),
    [(None, 0), (0, 0), (7, 7), ("7", 7), ({"n": 9, "first": 6, "events": []}, 9), ({"first": 1}, 0), ({"n": "9"}, 0)],
)
def test_a_counter_is_a_count_or_a_tail_holding_one(counter: t.Any, count: int) -> None:
    """What a stream's counter holds reads as its count; a tail without a whole-number count reads as none."""
    assert event_count(counter) == count


@pytest.mark.parametrize("earlier", [0, 2], ids=["written-whole", "after-a-batch"])
def test_a_stream_that_ends_with_its_response_is_kept_in_one_entry(earlier: int, memory_clock: Clock) -> None:
    """The batch with the response is one entry, the count too, read from anywhere in it, for its lifetime only."""
    app = Flask(__name__)
    cache = Cache(app, config={"CACHE_TYPE": KEEPING_CACHE})
    with app.app_context():
        log = EventLog(cache, ttl=300)
        backend = cache.cache
        if earlier:
            log.write_many("s1", "req", [(n, {"n": n}) for n in range(1, earlier + 1)], carries=9)
        before = len(backend._cache)
        numbers = range(earlier + 1, earlier + 5)
        ends = [(n, json.dumps({"n": n}).encode()) for n in numbers]
        log.write_many("s1", "req", ends, carries=None if earlier else 9, timeout=DELIVERED_GRACE, ends=True)
        assert len(backend._cache) - before == (0 if earlier else 1)  # the tail, in the count's place
        top = log.last("s1", "req")
        assert top == earlier + 4
        everything = [(f"req:{n}", {"n": n}) for n in range(1, top + 1)]
        for place in range(top + 1):  # resumed after any event, before the tail, in it, or after it
            assert log.after("s1", "req", place) == everything[place:], place
            assert log.after("s1", "req", place, top) == everything[place:], place
            assert log.reader("s1", "req", place).read(top, now=0.0) == everything[place:], place
        # A stream that ends with its response never lost its request: nothing notes it.
        assert log.carried("s1", "req") == ({"request": 9} if earlier else None)
        assert log.after("s2", "req", 0) == []  # another session's
        memory_clock.advance(DELIVERED_GRACE + 1)
        assert log.after("s1", "req", earlier) == [] and log.last("s1", "req") == 0


def test_a_delivered_stream_is_kept_the_grace_only(memory_clock: Clock) -> None:
    """Busy streaming must not fill the store for the events' whole lifetime: a stream that reached its
    client whole is kept for a client that lost its last bytes, no longer."""
    app = Flask(__name__)
    cache = Cache(app, config={"CACHE_TYPE": KEEPING_CACHE})
    with app.app_context():
        log = EventLog(cache, ttl=300)
        for number in (1, 2, 3):
            log.write("s1", "done", number, {"n": number}, carries=7 if number == 1 else None)
            log.write("s1", "open", number, {"n": number}, carries=8 if number == 1 else None)
        log.delivered("s1", "done", 3)
        memory_clock.advance(DELIVERED_GRACE - 1)
        assert [m["n"] for _, m in log.after("s1", "done", 0)] == [1, 2, 3]  # resumable within the grace
        memory_clock.advance(2)
        assert log.after("s1", "done", 0) == [] and log.carried("s1", "done") is None
        assert log.last("s1", "done") == 0
        assert [m["n"] for _, m in log.after("s1", "open", 0)] == [1, 2, 3]  # not delivered: kept
        assert log.carried("s1", "open") == {"request": 8}


def test_a_delivered_stream_is_kept_the_grace_only_on_redis(redis_url: str) -> None:
    app = Flask(__name__)
    prefix = f"events-grace-{uuid.uuid4().hex}:"
    cache = Cache(app, config={"CACHE_TYPE": "RedisCache", "CACHE_REDIS_URL": redis_url, "CACHE_KEY_PREFIX": prefix})
    with app.app_context():
        from flask_mcp.stores.topology import fitted

        log = EventLog(BoundCache(fitted(cache.cache)), ttl=300)
        log.write("s1", "done", 1, {"n": 1}, carries=7)
        log.write("s1", "done", 2, {"n": 2})
        log.delivered("s1", "done", 2)
        client = cache.cache._write_client
        keys = [store_key("ev", "s1", "done", 1), store_key("ev", "s1", "done", 2)]
        keys += [store_key("evq", "s1", "done"), log.counter_key("s1", "done")]
        assert all(0 < client.ttl(prefix + key) <= DELIVERED_GRACE for key in keys)


def test_broadcast_is_shared_by_every_session(log: EventLog) -> None:
    log.append(None, BROADCAST, {"m": 1})
    assert log.after("any", BROADCAST, 0) == log.after("other", BROADCAST, 0) == [(f"{BROADCAST}:1", {"m": 1})]


@pytest.mark.parametrize(
    ("value", "expected"), [("abc:3", ("abc", 3)), ("a:b:0", ("a:b", 0)), ("abc", None), ("abc:x", None), (":1", None)]
)
def test_parse_event_id(value: str, expected: tuple[str, int] | None) -> None:
    assert parse_event_id(value) == expected


BAD_EVENT_IDS = [
    "abc:²",  # isdigit() but not int()
    "abc:٣",  # int() reads it as 3
    "abc:\uff11",
    "abc:" + "9" * 5000,  # past int()'s digit limit
    f"abc:{2**53 + 1}",  # past the largest event number
    "abc:-1",
    "abc:+1",
    "abc:1_0",
    "abc: 1",
    "a b:1",  # not the alphabet of the server's stream names
    "ab\u00e7:1",
    "x" * 65 + ":1",  # a stream name longer than any the server makes
    "abc",
    ":1",
]


@pytest.mark.parametrize("value", BAD_EVENT_IDS)
def test_parse_event_id_refuses_what_the_server_never_sent(value: str) -> None:
    assert parse_event_id(value) is None


@pytest.mark.parametrize(
    ("inside", "outside"),
    [(f"{'x' * 64}:1", f"{'x' * 65}:1"), (f"abc:{2**53}", f"abc:{2**53 + 1}"), ("a-b_c:0", "a.b:0")],
)
def test_parse_event_id_bounds(inside: str, outside: str) -> None:
    assert parse_event_id(inside) is not None
    assert parse_event_id(outside) is None


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
    # Without a session a GET belongs to no handshake: the modern era has no GET (405).
    refused = client.http.get("/mcp", headers={"Accept": "text/event-stream"})
    assert (refused.status_code, refused.headers["Allow"]) == (405, "POST, OPTIONS")
    assert client.http.get("/mcp", headers={"Accept": "text/event-stream", "Mcp-Session-Id": "nope"}).status_code == 404
    client.initialize()
    assert client.http.get("/mcp", headers=client.headers(Accept="application/json")).status_code == 406
    stateless = make_client(make_app(MCP(), MCP_STATELESS=True))
    assert stateless.http.get("/mcp", headers={"Accept": "text/event-stream"}).status_code == 405


@pytest.mark.parametrize("value", BAD_EVENT_IDS)
def test_a_bad_last_event_id_is_a_json_400(streaming_mcp: MCP, make_app, make_client, value: str) -> None:
    """Not a fresh stream (the client would silently miss events), not a 500."""
    client = make_client(make_app(streaming_mcp))
    client.initialize()
    # Set in the environ as a server would: any text, not only what the test client can encode.
    response = client.http.get(
        "/mcp",
        headers=client.headers(Accept="text/event-stream"),
        environ_overrides={"HTTP_LAST_EVENT_ID": value},
        buffered=False,  # a stream would run for MCP_SSE_MAX_LIFETIME
    )
    response.close()
    assert response.status_code == 400
    assert response.mimetype == "application/json"
    error = response.get_json()["error"]
    assert error == {"code": -32600, "message": "Bad Request: Last-Event-ID is not an event id this server sent"}


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


def test_run_time_disable_enable_and_removal_reach_the_sessions_stream(
    streaming_mcp: MCP, make_app, make_client
) -> None:
    app = make_app(streaming_mcp)
    client = make_client(app)
    client.initialize()
    response, events = open_stream(client)
    changed = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {}}
    templates = {"jsonrpc": "2.0", "method": "notifications/resources/list_changed", "params": {}}
    with app.app_context():
        streaming_mcp.disable("add")
        assert next(events)["message"] == changed
        assert "add" not in {tool["name"] for tool in client.list_tools()}
        streaming_mcp.enable("add")
        assert next(events)["message"] == changed
        streaming_mcp.remove_tool("polite")
        assert next(events)["message"] == changed
        streaming_mcp.remove_template("docs://{slug}")
        assert next(events)["message"] == templates
    response.close()
    assert {tool["name"] for tool in client.list_tools()} == {"add"}
    assert client.list_resource_templates() == []


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
    posted.close()  # as a WSGI server closes a response it sent: the handler goes on
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


# -- streams that cannot starve the server ------------------------------------------


def eventually(condition: t.Callable[[], bool], timeout: float = 10.0) -> bool:
    """Whether *condition* becomes true within *timeout* seconds (looked at every 10 ms)."""
    done = threading.Event()
    for _ in range(int(timeout / 0.01)):
        if condition():
            return True
        done.wait(0.01)
    return condition()


def hold_stream(client: t.Any) -> tuple[threading.Event, threading.Event, threading.Thread]:
    """Open a stream in its own thread (as a server would) and keep it open until *release* is set."""
    primed, release = threading.Event(), threading.Event()

    def hold() -> None:
        response, _ = open_stream(client)
        primed.set()
        release.wait(10)
        response.close()

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    return primed, release, thread


def test_a_streamed_call_its_client_got_whole_is_kept_the_grace_only(
    streaming_mcp: MCP, make_app, make_client, memory_clock: Clock
) -> None:
    """A closed stream's client must come back: its log stays for the events' lifetime."""

    @streaming_mcp.tool
    def chatty(ctx: Context) -> str:
        ctx.info("one")
        return "two"

    app = make_app(streaming_mcp)
    client = make_client(app)
    client.initialize()
    streamed = client.post({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "chatty"}})
    whole = list(parse_events(iter([streamed.get_data()])))
    assert whole[-1]["message"]["id"] == 5
    closed = client.post({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "polite"}})
    (priming,) = list(parse_events(iter([closed.get_data()])))
    closed.close()  # the handler goes on and logs its result
    with app.app_context():
        log = app.extensions["mcp"].events
        delivered, kept = whole[-1]["id"].rpartition(":")[0], priming["id"].rpartition(":")[0]
        assert len(log.after(client.session_id, delivered, 0)) == 2
        memory_clock.advance(DELIVERED_GRACE + 1)
        assert log.after(client.session_id, delivered, 0) == []
        assert [m["id"] for _, m in log.after(client.session_id, kept, 0)] == [6]


def test_a_process_holds_at_most_max_streams(streaming_mcp: MCP, make_app, make_client) -> None:
    """Past MCP_MAX_STREAMS a GET is 503 with Retry-After; requests are still answered; a closed stream frees a slot."""
    app = make_app(streaming_mcp, MCP_MAX_STREAMS=2)
    state = app.extensions["mcp"]
    clients = [make_client(app) for _ in range(3)]
    for client in clients:
        client.initialize()
    held = [hold_stream(clients[0]), hold_stream(clients[1])]
    for primed, _, _ in held:
        assert primed.wait(10)
    refused = clients[2].http.get("/mcp", headers=clients[2].headers(Accept="text/event-stream"))
    assert refused.status_code == 503 and refused.mimetype == "application/json"
    assert refused.headers["Retry-After"] == str(refused.get_json()["error"]["data"]["retryAfter"])
    assert clients[2].request("ping") == {}  # the server still answers
    _, release, thread = held[0]
    release.set()
    thread.join(10)
    third = hold_stream(clients[2])
    assert third[0].wait(10) and state.streams.open == 2
    for _, release, thread in (held[1], third):
        release.set()
        thread.join(10)
    assert state.streams.open == 0


def test_an_idle_stream_ends_by_itself(streaming_mcp: MCP, make_app, make_client) -> None:
    """No event for MCP_SSE_IDLE_TIMEOUT seconds: the stream ends (the client reconnects with Last-Event-ID)."""
    app = make_app(streaming_mcp, MCP_SSE_IDLE_TIMEOUT=0.2, MCP_SSE_KEEPALIVE=0.05)
    client = make_client(app)
    client.initialize()
    response, events = open_stream(client)
    assert list(events) == []  # the generator is exhausted: the stream ended
    response.close()
    assert app.extensions["mcp"].streams.open == 0


def test_resuming_far_behind_replays_only_the_newest_events(streaming_mcp: MCP, make_app, make_client) -> None:
    """``Last-Event-ID: all:0`` after 300 broadcasts replays MCP_SSE_REPLAY_MAX of them, the newest."""
    app = make_app(streaming_mcp, MCP_SSE_REPLAY_MAX=20, MCP_SSE_IDLE_TIMEOUT=0.2)
    state = app.extensions["mcp"]
    with app.app_context():
        for n in range(300):
            state.events.append(
                None, BROADCAST, {"jsonrpc": "2.0", "method": "notifications/message", "params": {"n": n}}
            )
    client = make_client(app)
    client.initialize()
    response, events = open_stream(client, f"{BROADCAST}:0")
    replayed = [event["message"]["params"]["n"] for event in events]
    response.close()
    assert replayed == list(range(280, 300))


def test_idle_streams_cost_the_store_one_read_per_tick(streaming_mcp: MCP, make_app, make_client) -> None:
    """Twenty idle GET streams read nothing themselves: the process's one watcher reads for all, once per tick."""
    app = make_app(streaming_mcp, MCP_SSE_POLL_INTERVAL=0.01, MCP_MAX_STREAMS=30)
    state = app.extensions["mcp"]
    clients = [make_client(app) for _ in range(20)]
    for client in clients:
        client.initialize()
    backend = app.extensions["cache"][state.events.cache]
    readers_of_the_store: list[str] = []
    original_get = backend.get

    def get(key: str) -> t.Any:
        readers_of_the_store.append(threading.current_thread().name)
        return original_get(key)

    def get_many(*keys: str) -> list[t.Any]:
        readers_of_the_store.append(threading.current_thread().name)
        return [original_get(key) for key in keys]

    backend.get, backend.get_many = get, get_many
    readers = [first_event_in_thread(client) for client in clients]
    for primed, _ in readers:
        assert primed.wait(10)
    assert eventually(lambda: len(state.waker._waiters) == 20)  # every stream is waiting now
    before, ticks = len(readers_of_the_store), state.waker.reads
    assert eventually(lambda: state.waker.reads >= ticks + 20)
    window = readers_of_the_store[before:]
    assert set(window) <= {"mcp-waker"}  # no stream read the store while idle
    assert len(window) <= state.waker.reads - ticks + 1  # one batched read per tick, for all twenty
    with app.app_context():
        state.events.append(None, BROADCAST, {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    for _, first in readers:
        assert first.get(timeout=10)["message"]["method"] == "notifications/tools/list_changed"
