"""A 2026-07-28 call of a context tool, streamed from a greenlet of the request's thread.

The stream is the handler's channel, its run and the response's body at
once; these tests hold it to what the handshake era's inline run promises:
the same bytes, the handler's threads heard in order, the view's app context
kept until the handler ends, and what escapes the handler reaching the request.
"""

from __future__ import annotations

import json
import queue
import threading
import typing as t

import greenlet
import pytest
from flask import Flask, g
from flask.globals import _cv_app

from flask_mcp import MCP, Context
from flask_mcp.protocol.envelope import CLIENT_CAPABILITIES, PROTOCOL_VERSION
from flask_mcp.testing.client import ACCEPT
from flask_mcp.transport.inline_stream import InlineStream
from tests.threads import raised_in_another_thread

MODERN = "2026-07-28"


def call(app: Flask, tool: str, request_id: int = 1, **options: t.Any) -> t.Any:
    """POST a 2026-07-28 ``tools/call`` of *tool*, asking for progress; the test client's response."""
    headers = {"Accept": ACCEPT, "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": tool}
    meta = {PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: {}, "progressToken": "p"}
    body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": tool, "_meta": meta}}
    return app.test_client().post("/mcp", json=body, headers=headers, **options)


def messages(stream: bytes) -> list[dict[str, t.Any]]:
    return [json.loads(line[6:]) for line in stream.split(b"\n") if line.startswith(b"data: ")]


def test_a_stream_only_the_handlers_threads_spoke_on_starts_with_theirs(make_app: t.Callable[..., Flask]) -> None:
    """The handler itself sends nothing: what its threads sent before its response still goes out, first."""
    mcp = MCP(name="threads")

    @mcp.tool()
    def delegated(ctx: Context) -> str:
        worker = threading.Thread(target=lambda: [ctx.report_progress(step, 2) for step in (1, 2)])
        worker.start()
        worker.join()
        return "done"

    response = call(make_app(mcp), "delegated")
    assert response.mimetype == "text/event-stream"
    *notes, last = messages(response.get_data())
    assert [note["params"]["progress"] for note in notes] == [1, 2]
    assert last["result"]["content"][0]["text"] == "done"


def test_a_message_a_handlers_thread_sends_after_the_response_is_dropped() -> None:
    """The response ends the stream: nothing a thread of the handler sends later follows it."""
    stream = InlineStream(15.0, lambda response: b"{}")
    channels: list[t.Any] = []

    def handle(channel: t.Any) -> dict[str, t.Any]:
        channels.append(channel)
        channel.notify("notifications/progress", {"progressToken": "p", "progress": 1})
        return {}

    assert stream.run(handle) is None
    assert b"notifications/progress" in next(stream)
    assert next(stream) == b"event: message\ndata: {}\n\n"
    late = threading.Thread(target=lambda: channels[0].notify("notifications/message", {"data": "late"}))
    late.start()
    late.join()
    assert list(stream) == []


def test_the_handler_shares_the_views_app_context_torn_down_after_its_end(make_app: t.Callable[..., Flask]) -> None:
    """As a plain tool, it sees the view's ``g``; its stream outlives the view, and the teardown waits for it."""
    mcp = MCP(name="context")
    events: list[tuple[str, object]] = []

    @mcp.tool()
    def where(ctx: Context) -> str:
        events.append(("handler began in", _cv_app.get()))
        ctx.report_progress(1, 2)  # the view returns here: the answer is a stream
        events.append(("handler ended in", _cv_app.get()))
        return str(g.get("seen_by_the_view", "not seen"))

    app = make_app(mcp)

    @app.before_request
    def mark() -> None:
        g.seen_by_the_view = "seen"

    @app.teardown_appcontext
    def torn(exc: BaseException | None) -> None:
        events.append(("torn down", _cv_app.get()))

    response = call(app, "where", buffered=False)
    assert response.mimetype == "text/event-stream"
    assert [event for event, _ in events] == ["handler began in"]  # the view ended, its context kept
    stream = response.get_data()
    response.close()
    assert messages(stream)[-1]["result"]["content"][0]["text"] == "seen"
    assert [event for event, _ in events] == ["handler began in", "handler ended in", "torn down"]
    assert len({id(context) for _, context in events}) == 1  # one context: the view's
    assert _cv_app.get(None) is None  # nothing left pushed in the test's own context


def test_a_stream_closed_before_the_response_finishes_its_handler_cancelled(make_app: t.Callable[..., Flask]) -> None:
    """The server closes the body early (the client left): the handler runs to its end, told it was cancelled."""
    mcp = MCP(name="left")
    seen: queue.Queue[bool] = queue.Queue()

    @mcp.tool()
    def long(ctx: Context) -> str:
        ctx.report_progress(1, 2)
        seen.put(ctx.cancelled)
        ctx.report_progress(2, 2)  # unsent: nobody reads the stream any more
        return "never read"

    response = call(make_app(mcp), "long", buffered=False)
    first = next(iter(response.response))
    assert b"notifications/progress" in first
    response.close()
    assert seen.get_nowait() is True
    assert _cv_app.get(None) is None


def test_what_escapes_the_handler_reaches_the_request() -> None:
    stream = InlineStream(15.0, lambda response: b"")

    def handle(channel: t.Any) -> dict[str, t.Any]:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        stream.run(handle)
    assert stream.ended


def test_a_stream_read_from_another_thread_says_what_to_set() -> None:
    """A WSGI server that reads the body in another thread than it called the app in cannot resume a greenlet."""
    stream = InlineStream(15.0, lambda response: json.dumps(response).encode())

    def handle(channel: t.Any) -> dict[str, t.Any]:
        channel.notify("notifications/message", {"level": "info", "data": "one"})
        return {"jsonrpc": "2.0", "id": 1, "result": {}}

    assert stream.run(handle) is None
    assert b"notifications/message" in next(stream)
    failure = raised_in_another_thread(lambda: next(stream))
    assert isinstance(failure, RuntimeError) and "MCP_STREAM_THREADS" in str(failure)
    assert list(stream) == [b'event: message\ndata: {"jsonrpc": "2.0", "id": 1, "result": {}}\n\n']


@pytest.mark.parametrize("looks", [0, 1, 5])
def test_a_handler_looking_at_cancelled_gives_the_stream_its_keep_alives(looks: int) -> None:
    """Each look past the keep-alive interval is one keep-alive; before the first message, none can go out."""
    stream = InlineStream(0.0, lambda response: b"{}")

    def handle(channel: t.Any) -> dict[str, t.Any]:
        channel.cancelled()  # nothing answered yet: the view waits, nothing sent
        channel.notify("notifications/progress", {"progressToken": "p", "progress": 1})
        for _ in range(looks):
            assert channel.cancelled() is False
        return {}

    assert stream.run(handle) is None
    chunks = list(stream)
    assert chunks[0].startswith(b"event: message") and chunks[-1] == b"event: message\ndata: {}\n\n"
    assert chunks[1:-1] == [b": keep-alive\n\n"] * looks


@pytest.mark.parametrize(
    ("meta", "in_the_view"),
    [
        ({}, True),
        ({"progressToken": None}, True),
        ({"progressToken": "p"}, False),
        ({"io.modelcontextprotocol/logLevel": "info"}, False),
    ],
    ids=["nothing asked", "no token", "progress asked", "log messages asked"],
)
def test_a_call_that_asked_for_nothing_its_handler_sends_runs_in_the_view(
    make_app: t.Callable[..., Flask], meta: dict[str, t.Any], in_the_view: bool
) -> None:
    """No greenlet for a handler that can send nothing: the answer is its result."""
    mcp = MCP(name="quiet")
    ran_in: list[object] = []

    @mcp.tool()
    def sums(a: int, b: int, ctx: Context) -> int:
        ran_in.append(greenlet.getcurrent())
        ctx.report_progress(1, 1)
        ctx.info("summing")
        return a + b

    app = make_app(mcp)
    headers = {"Accept": ACCEPT, "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "sums"}
    envelope = {PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: {}, **meta}
    params = {"name": "sums", "arguments": {"a": 1, "b": 2}, "_meta": envelope}
    body = {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": params}
    response = app.test_client().post("/mcp", json=body, headers=headers)
    assert (ran_in[0] is greenlet.getcurrent()) is in_the_view
    if in_the_view:
        assert response.mimetype == "application/json"
        result = response.get_json()["result"]
    else:
        assert response.mimetype == "text/event-stream"
        *notes, last = messages(response.get_data())
        assert notes and {note["method"] for note in notes} <= {"notifications/progress", "notifications/message"}
        result = last["result"]
    assert result["structuredContent"] == {"result": 3}


def test_what_a_handler_run_in_the_view_sends_all_the_same_goes_out_with_its_response() -> None:
    """Should a handler that could send nothing send something, it is not lost: it precedes the response."""
    stream = InlineStream(15.0, lambda response: b"{}")

    def handle(channel: t.Any) -> dict[str, t.Any]:
        channel.notify("notifications/message", {"level": "info", "data": "anyway"})
        assert channel.cancelled() is False
        return {}

    assert stream.run(handle, here=True) is None
    chunks = list(stream)
    assert len(chunks) == 2 and b'"anyway"' in chunks[0] and chunks[1] == b"event: message\ndata: {}\n\n"
