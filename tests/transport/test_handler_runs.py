"""A streamed handler beside its response: inline in a greenlet (the default), or on a thread of its own.

Both ways answer the same bytes, and the stream's response is the one the
plain JSON answer carries; what differs is who runs the handler.
"""

from __future__ import annotations

import gc
import json
import queue
import re
import threading
import typing as t
import weakref

import pytest
from flask import Flask
from hypothesis import given, settings
from hypothesis import strategies as st

from flask_mcp import MCP, Context
from flask_mcp.protocol.envelope import CLIENT_CAPABILITIES, PROTOCOL_VERSION
from flask_mcp.testing.client import ACCEPT
from flask_mcp.transport import handler_runs
from flask_mcp.transport.channel import HTTPChannel
from flask_mcp.transport.handler_runs import DONE, MESSAGE, InlineRun
from flask_mcp.transport.inline_stream import InlineStream
from tests.threads import raised_in_another_thread

MODERN = "2026-07-28"


def build(threads_seen: list[threading.Thread] | None = None) -> MCP:
    mcp = MCP(name="runs")

    @mcp.tool()
    def steps(a: int, b: int, ctx: Context) -> dict[str, t.Any]:
        """Add, reporting three steps when asked for progress."""
        if threads_seen is not None:
            threads_seen.append(threading.current_thread())
        if ctx.progress_token is not None:
            for step in (1, 2, 3):
                ctx.report_progress(step, 3, message=f"step {step}")
        return {"sum": a + b, "note": "ünïcode ✓"}

    return mcp


def post(app: Flask, era: str, session: str | None, request_id: int, progress: bool) -> tuple[str, bytes]:
    """POST ``steps(40, 2)``; the answer's type and bytes."""
    meta: dict[str, t.Any] = {"progressToken": "p"} if progress else {}
    headers = {"Accept": ACCEPT}
    if era == "modern":
        meta |= {PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: {}}
        headers |= {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "steps"}
    else:
        headers |= {"MCP-Protocol-Version": "2025-11-25", "Mcp-Session-Id": t.cast(str, session)}
    params = {"name": "steps", "arguments": {"a": 40, "b": 2}, **({"_meta": meta} if meta else {})}
    body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    response = app.test_client().post("/mcp", json=body, headers=headers)
    return response.mimetype, response.get_data()


def session_of(app: Flask) -> str:
    hello = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    response = app.test_client().post("/mcp", json=hello, headers={"Accept": ACCEPT})
    session = response.headers["Mcp-Session-Id"]
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    headers = {"Accept": ACCEPT, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
    assert app.test_client().post("/mcp", json=initialized, headers=headers).status_code == 202
    return t.cast(str, session)


def data_lines(stream: bytes) -> list[bytes]:
    lines = stream.split(b"\n")
    return [line.removeprefix(b"data: ") for line in lines if line.startswith(b"data: ") and line != b"data: "]


@pytest.mark.parametrize("era", ["handshake", "modern"])
def test_the_stream_answers_byte_for_byte_what_the_json_answer_does_either_way(
    make_app: t.Callable[..., Flask], era: str
) -> None:
    """The same call: its stream's last event is the plain answer's body, and inline and threaded streams match."""
    streams = {}
    for threads in (False, True):
        app = make_app(build(), MCP_STREAM_THREADS=threads)
        session = session_of(app) if era == "handshake" else None
        kind, plain = post(app, era, session, 11, progress=False)
        assert kind == "application/json"
        kind, stream = post(app, era, session, 11, progress=True)
        assert kind == "text/event-stream"
        *notes, last = data_lines(stream)
        assert last == plain  # byte for byte, key order and non-ASCII text included
        assert [json.loads(note)["params"]["message"] for note in notes] == ["step 1", "step 2", "step 3"]
        # Event ids name a random stream: the rest of the stream is the same bytes.
        streams[threads] = re.sub(rb"id: [\w-]+:", b"id: S:", stream)
    assert streams[False] == streams[True]


def test_an_inline_handler_runs_in_the_requests_thread_and_starts_none(make_app: t.Callable[..., Flask]) -> None:
    seen: list[threading.Thread] = []
    app = make_app(build(seen), MCP_STREAM_THREADS=False)
    before = {thread.name for thread in threading.enumerate()}
    kind, _ = post(app, "modern", None, 1, progress=True)
    assert kind == "text/event-stream"
    assert seen == [threading.current_thread()]  # the test client calls the app in this thread
    assert not {thread.name for thread in threading.enumerate()} - before


def test_a_threaded_handler_runs_on_a_thread_of_its_own(make_app: t.Callable[..., Flask]) -> None:
    seen: list[threading.Thread] = []
    app = make_app(build(seen), MCP_STREAM_THREADS=True)
    post(app, "modern", None, 1, progress=True)
    assert seen[0] is not threading.current_thread() and seen[0].name == "mcp-request-1"


def test_progress_from_a_handlers_own_threads_goes_out_in_order(make_app: t.Callable[..., Flask]) -> None:
    """Inline, an item from another thread cannot switch: it waits for the handler to give way, in order."""
    mcp = MCP(name="workers")

    @mcp.tool()
    def fan_out(ctx: Context) -> str:
        ctx.report_progress(1, 4)
        worker = threading.Thread(target=lambda: [ctx.report_progress(step, 4) for step in (2, 3)])
        worker.start()
        worker.join()
        ctx.report_progress(4, 4)
        return "done"

    app = make_app(mcp)
    headers = {"Accept": ACCEPT, "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "fan_out"}
    meta = {PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: {}, "progressToken": "p"}
    body = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "fan_out", "_meta": meta}}
    stream = app.test_client().post("/mcp", json=body, headers=headers).get_data()
    *notes, last = data_lines(stream)
    assert [json.loads(note)["params"]["progress"] for note in notes] == [1, 2, 3, 4]
    assert json.loads(last)["result"]["content"][0]["text"] == "done"


def test_a_handler_waiting_for_the_client_lets_its_stream_send_keep_alives(make_app: t.Callable[..., Flask]) -> None:
    """Inline, the stream has no turn while the handler waits, unless the wait gives it one."""
    mcp = MCP(name="asks")
    answered: queue.Queue[t.Any] = queue.Queue()

    @mcp.tool()
    def ask(ctx: Context) -> str:
        try:
            ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
        except Exception as exc:  # the client never answers: the wait times out
            answered.put(exc)
        return "asked"

    app = make_app(mcp, MCP_SSE_KEEPALIVE=0.05, MCP_CLIENT_REQUEST_TIMEOUT=0.5)
    headers = {"Accept": ACCEPT, "MCP-Protocol-Version": "2025-11-25"}
    body = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "ask"}}
    capabilities = {"elicitation": {}}
    hello = {"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {"name": "t", "version": "1"}}
    client = app.test_client()
    hello_message = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}
    opened = client.post("/mcp", json=hello_message, headers={"Accept": ACCEPT})
    headers["Mcp-Session-Id"] = opened.headers["Mcp-Session-Id"]
    client.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    stream = client.post("/mcp", json=body, headers=headers).get_data()
    assert b"elicitation/create" in stream
    after_request = stream.split(b"elicitation/create", 1)[1]
    assert after_request.count(b": keep-alive\n\n") >= 2  # several keep-alives during a half-second wait
    assert not answered.empty()


def test_an_inline_run_read_from_another_thread_says_what_to_set() -> None:
    """A WSGI server that reads the body in another thread than it called the app in cannot resume a greenlet."""
    run = InlineRun()
    run.start(lambda: run.put((DONE, None, {}), last=True), "r")
    failure = raised_in_another_thread(run.get)
    assert isinstance(failure, RuntimeError) and "MCP_STREAM_THREADS" in str(failure)
    assert run.get() == (DONE, None, {})  # the thread it belongs to still can


def test_an_inline_run_hands_over_items_in_order_and_keeps_the_last() -> None:
    run = InlineRun()
    given: list[str] = []

    def work() -> None:
        for number in (1, 2):
            run.put((MESSAGE, str(number), {}))
            given.append(f"after {number}")
        run.put((DONE, "3", {}), last=True)
        given.append("ended")

    run.start(work, "r")
    assert run.get() == (MESSAGE, "1", {}) and given == []
    assert run.get() == (MESSAGE, "2", {}) and given == ["after 1"]
    assert run.get() == (DONE, "3", {}) and given == ["after 1", "after 2", "ended"]
    assert run.ended


def test_an_inline_run_hands_over_what_other_threads_put_before_the_handler_ended_then_its_response() -> None:
    run = InlineRun()

    def work() -> None:
        worker = threading.Thread(target=lambda: run.put((MESSAGE, "from a worker", {})))
        worker.start()
        worker.join()
        run.put((DONE, "last", {}), last=True)

    run.start(work, "r")
    assert run.get() == (MESSAGE, "from a worker", {})
    assert run.get() == (DONE, "last", {})


def _two_items(run: InlineRun) -> t.Callable[[], None]:
    def work() -> None:
        run.put((MESSAGE, "1", {}))
        run.put((DONE, "2", {}), last=True)

    return work


def _idle_runners() -> list[t.Any]:
    return list(getattr(handler_runs._idle, "runners", []))


def test_a_thread_runs_one_handler_after_another_in_the_same_runner() -> None:
    """A greenlet's start maps a stack of its own: a call that ended hands its runner to the next."""
    first = InlineRun()
    first.start(_two_items(first), "a")
    assert first.get() == (MESSAGE, "1", {}) and first.get() == (DONE, "2", {})
    second, third = InlineRun(), InlineRun()
    second.start(_two_items(second), "b")
    assert second.greenlet is first.greenlet
    assert second.get() == (MESSAGE, "1", {})  # the runner is busy with it: the next call takes another
    third.start(_two_items(third), "c")
    assert third.greenlet is not second.greenlet
    for run in (third, second):
        run.finish()
        assert run.ended and run.get() == (DONE, "2", {})


@settings(max_examples=10, deadline=None, database=None)
@given(at_once=st.integers(min_value=0, max_value=2 * handler_runs.MAX_IDLE_RUNNERS))
def test_a_thread_keeps_at_most_max_idle_runners(at_once: int) -> None:
    """As many handlers as ran at once in one thread (gevent's requests), up to the bound, wait idle."""

    def in_a_thread() -> None:
        runs = [InlineRun() for _ in range(at_once)]
        for run in runs:
            run.start(_two_items(run), "r")
            assert run.get() == (MESSAGE, "1", {})
        for run in runs:
            assert run.get() == (DONE, "2", {})
        idle = _idle_runners()
        assert len(idle) == min(at_once, handler_runs.MAX_IDLE_RUNNERS)
        assert all(not runner.dead for runner in idle)

    failures: queue.Queue[BaseException] = queue.Queue()

    def checked() -> None:
        try:
            in_a_thread()
        except BaseException as exc:
            failures.put(exc)

    thread = threading.Thread(target=checked)  # a thread of its own: no runner idles in it yet
    thread.start()
    thread.join()
    if not failures.empty():
        raise failures.get()


def test_a_handler_that_raises_past_its_run_reaches_the_request() -> None:
    """Nothing is lost to the runner's loop: what escapes the handler reaches the view or response."""
    run = InlineRun()

    def work() -> None:
        raise KeyboardInterrupt

    run.start(work, "r")
    with pytest.raises(KeyboardInterrupt):
        run.get()
    assert run.ended


@pytest.mark.parametrize("progress", [False, True], ids=["json-answer", "event-stream"])
@pytest.mark.parametrize("era", ["handshake", "modern"])
def test_an_ended_call_leaves_nothing_to_the_garbage_collector(
    make_app: t.Callable[..., Flask], monkeypatch: pytest.MonkeyPatch, era: str, progress: bool
) -> None:
    """Freed as it ends: no reference cycle, and nothing of it kept by the idle runner that ran it.

    What a busy server leaves to the collector, the collector's passes charge to every request.
    """
    # A 2026-07-28 call's inline channel is its stream (inline_stream.py); a handshake one's an HTTPChannel.
    kind_of_channel: type[t.Any] = InlineStream if era == "modern" else HTTPChannel
    channels: list[weakref.ref[t.Any]] = []
    made = kind_of_channel.__init__

    def noting(channel: t.Any, *args: t.Any, **kwargs: t.Any) -> None:
        made(channel, *args, **kwargs)
        channels.append(weakref.ref(channel))

    monkeypatch.setattr(kind_of_channel, "__init__", noting)
    app = make_app(build())
    session = session_of(app) if era == "handshake" else None
    post(app, era, session, 1, progress)  # the thread's runner made, the imports done
    gc.collect()
    gc.disable()
    try:
        kind, _ = post(app, era, session, 2, progress)
        assert kind == ("text/event-stream" if progress else "application/json")
        assert len(channels) == 2 and channels[-1]() is None
    finally:
        gc.enable()
