"""What a streamed call keeps in the event log, and when (:class:`~flask_mcp.transport.channel.HTTPChannel`)."""

from __future__ import annotations

import contextlib
import os
import typing as t

import pytest
from flask import Flask
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flask_mcp import MCP, Context
from flask_mcp.stores.events import DELIVERED_GRACE, MAX_STREAM_NAME, EventLog, parse_event_id
from flask_mcp.transport import channel as channel_module
from flask_mcp.transport.channel import LOG_DELAY

from ..conftest import Clock
from ..stores.test_events import parse_events

PROGRESS_TOKEN = "p-1"


class Writes:
    """Each batch the event log is given: (event numbers, whether it noted the request, its lifetime)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.batches: list[tuple[list[int], bool, int | None]] = []
        write_many = EventLog.write_many

        def spy(  # type: ignore[no-untyped-def]
            log: EventLog, session_id: t.Any, stream: str, events: t.Any, carries: t.Any = None, timeout=None, **options
        ):
            self.batches.append(([number for number, _ in events], carries is not None, timeout))
            write_many(log, session_id, stream, events, carries, timeout, **options)

        monkeypatch.setattr(EventLog, "write_many", spy)


@pytest.fixture
def writes(monkeypatch: pytest.MonkeyPatch) -> Writes:
    return Writes(monkeypatch)


class Monotonic:
    """The channel's clock, moved by the test (the batches' :data:`LOG_DELAY`)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.now = 1000.0
        monkeypatch.setattr(channel_module, "monotonic", lambda: self.now)


@pytest.fixture
def talking(mcp: MCP) -> MCP:
    @mcp.tool
    def count(steps: int, ctx: Context) -> str:
        for step in range(1, steps + 1):
            ctx.report_progress(step, total=steps)
        return "counted"

    return mcp


@pytest.fixture
def served(talking: MCP, make_app: t.Callable[..., Flask], make_client: t.Callable[..., t.Any]) -> tuple[Flask, t.Any]:
    """An app serving ``count``, and a client in a handshake session with it."""
    app = make_app(talking)
    client = make_client(app)
    client.initialize()
    return app, client


def call_count(client: t.Any, steps: int, request_id: int = 7) -> t.Any:
    """POST ``count(steps)`` with a progress token; the response is read as it streams."""
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "count", "arguments": {"steps": steps}, "_meta": {"progressToken": PROGRESS_TOKEN}},
    }
    return client.http.post("/mcp", json=message, headers=client.headers(), buffered=False)


def logged(app: Flask, client: t.Any, stream: str) -> list[t.Any]:
    with app.app_context():
        log: EventLog = app.extensions["mcp"].events
        return [message for _, message in log.after(client.session_id, stream, 0)]


def test_a_short_stream_is_logged_once_with_its_response_for_the_grace(
    served: tuple[Flask, t.Any], writes: Writes
) -> None:
    """Three notes and the response within LOG_DELAY: one write, the request noted, kept for the grace only."""
    app, client = served
    response = call_count(client, 3)
    priming, *events = list(parse_events(iter(response.response)))
    response.close()
    assert [event["message"].get("method") for event in events] == ["notifications/progress"] * 3 + [None]
    assert writes.batches == [([1, 2, 3, 4], True, DELIVERED_GRACE)]
    stream = priming["id"].rpartition(":")[0]
    assert logged(app, client, stream) == [event["message"] for event in events]


def test_a_stream_that_breaks_keeps_everything_for_the_events_lifetime(
    served: tuple[Flask, t.Any], writes: Writes, memory_clock: Clock
) -> None:
    """The client leaves after the first note: what it missed is logged at once, and what follows as it comes."""
    app, client = served
    response = call_count(client, 3)
    events = parse_events(iter(response.response))
    priming, first = next(events), next(events)
    assert writes.batches == []  # the first note waits for the next batch
    response.close()  # the handler runs to its end; the client will resume
    assert writes.batches[0] == ([1], True, None)
    assert all(timeout is None for _, _, timeout in writes.batches)
    assert [number for numbers, _, _ in writes.batches for number in numbers] == [1, 2, 3, 4]
    memory_clock.advance(DELIVERED_GRACE + 1)
    kept = logged(app, client, priming["id"].rpartition(":")[0])
    assert kept[0] == first["message"] and kept[-1]["result"]["content"][0]["text"] == "counted"
    assert len(kept) == 4


def test_a_stream_that_breaks_at_its_response_keeps_the_response_too(
    served: tuple[Flask, t.Any], writes: Writes, memory_clock: Clock
) -> None:
    """The response was logged for the grace; the client never read it: it is logged again for the lifetime."""
    app, client = served
    response = call_count(client, 1)
    chunks = iter(response.response)
    events = parse_events(chunks)
    priming, _ = next(events), next(events)  # the note; the response is next, already logged
    next(chunks)  # the response's bytes, handed over: the client goes before they arrive
    assert writes.batches == [([1, 2], True, DELIVERED_GRACE)]
    with contextlib.suppress(StopIteration):
        chunks.close()  # type: ignore[attr-defined]
    response.close()
    memory_clock.advance(DELIVERED_GRACE + 1)
    assert len(logged(app, client, priming["id"].rpartition(":")[0])) == 2


def test_a_request_to_the_client_is_logged_before_it_goes_out(
    mcp: MCP, make_app: t.Callable[..., Flask], make_client: t.Callable[..., t.Any], writes: Writes
) -> None:
    """A client that misses the question resumes the stream to answer it: the question is in the log."""

    @mcp.tool
    def ask(ctx: Context) -> str:
        ctx.report_progress(1)
        return str(ctx.list_roots())

    app = make_app(mcp, MCP_CLIENT_REQUEST_TIMEOUT=0.05)
    client = make_client(app)
    client.initialize(capabilities={"roots": {}})
    message = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "tools/call",
        "params": {"name": "ask", "_meta": {"progressToken": PROGRESS_TOKEN}},
    }
    response = client.http.post("/mcp", json=message, headers=client.headers(), buffered=False)
    events = parse_events(iter(response.response))
    priming, _, question = next(events), next(events), next(events)
    assert question["message"]["method"] == "roots/list"
    assert writes.batches == [([1, 2], True, None)]
    assert logged(app, client, priming["id"].rpartition(":")[0])[-1] == question["message"]
    response.close()  # no answer comes: the handler times out, its result is logged for the client


@settings(max_examples=20, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(gap=st.floats(min_value=0, max_value=3 * LOG_DELAY))
def test_a_note_waits_at_most_log_delay_for_the_next_message(
    talking: MCP, make_app: t.Callable[..., Flask], make_client: t.Callable[..., t.Any], gap: float
) -> None:
    """Sent LOG_DELAY or more after the last batch, the handler's next message takes the waiting ones along."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        writes, clock = Writes(monkeypatch), Monotonic(monkeypatch)
        app = make_app(talking)
        client = make_client(app)
        client.initialize()
        response = call_count(client, 3)
        events = parse_events(iter(response.response))
        next(events), next(events)  # the priming event, the first note
        clock.now += gap
        next(events)  # the second note
        due = gap >= LOG_DELAY
        assert writes.batches == ([([1, 2], True, None)] if due else [])
        list(events)
        response.close()
        numbers = [number for numbers, _, _ in writes.batches for number in numbers]
        assert numbers == [1, 2, 3, 4]


def test_the_priming_event_goes_out_in_one_write_with_the_first_message(served: tuple[Flask, t.Any]) -> None:
    """A server writes each chunk with a system call: the priming event does not take one of its own."""
    _, client = served
    response = call_count(client, 2)
    chunks = list(response.response)
    response.close()
    assert len(chunks) == 3  # the priming event and the first note, the second note, the response
    priming, note = parse_events(iter(chunks[:1]))
    assert "message" not in priming and priming["id"].endswith(":0")
    assert note["message"]["params"]["progress"] == 1


def test_stream_names_are_unique_without_a_draw_each_and_a_forked_worker_draws_its_own() -> None:
    """A name is this process's prefix and a count: valid in an event id, never repeated, another per worker."""
    names = channel_module._stream_names
    drawn = [names.next() for _ in range(1000)]
    assert len(set(drawn)) == len(drawn)
    assert all(parse_event_id(f"{name}:1") == (name, 1) and len(name) <= MAX_STREAM_NAME for name in drawn)
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the worker a pre-forking server starts after the app was imported
        os.write(write, names.next().encode())
        os._exit(0)
    os.waitpid(child, 0)
    theirs = os.read(read, 256).decode()
    os.close(read), os.close(write)
    assert parse_event_id(f"{theirs}:1") is not None and not theirs.startswith(names.prefix)
