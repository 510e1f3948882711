"""Spans nest where they belong: under Flask's server span, around the tool's own spans, in the
client's trace, and out to the client and into a task's run."""

from __future__ import annotations

import logging
import typing as t

import pytest
from flask import Flask
from opentelemetry.instrumentation.flask import FlaskInstrumentor
from opentelemetry.trace import SpanKind

from flask_mcp import MCP, Context
from flask_mcp.core.tasks import EXTENSION
from tests.telemetry.conftest import Telemetry

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"
TRACESTATE = "rojo=00f067aa0ba902b7"


@pytest.fixture
def traced(telemetry: Telemetry, make_app: t.Any) -> t.Iterator[Flask]:
    """An app with a tool that makes a span of its own, one that elicits, and one that runs as a task."""
    extension = MCP(name="traced", version="1.0.0")
    inner = telemetry.tracer_provider.get_tracer("the-tool")

    @extension.tool
    def lookup(key: str) -> str:
        """Looks something up, in a span of its own (as a database client's instrumentation would)."""
        with inner.start_as_current_span("SELECT things"):
            return key.upper()

    @extension.tool
    def confirm(ctx: Context) -> str:
        """Asks the user."""
        answer = ctx.elicit("Sure?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}, key="sure")
        return str(answer.action)

    @extension.tool(task="optional")
    def later(n: int) -> int:
        """Runs as a task."""
        with inner.start_as_current_span("task work"):
            return n * 2

    app = telemetry.instrument(make_app(extension, MCP_TASK_POLL_INTERVAL=0.01))
    FlaskInstrumentor().instrument_app(app, tracer_provider=telemetry.tracer_provider)
    yield app
    FlaskInstrumentor().uninstrument_app(app)
    app.extensions["mcp"].server.tasks.runner.shutdown(wait=False)


def test_the_mcp_span_is_under_flask_s_and_the_tool_s_spans_under_it(
    traced: Flask, make_client: t.Any, telemetry: Telemetry
) -> None:
    client = make_client(traced)
    client.initialize()
    client.call_tool("lookup", {"key": "x"})
    mcp_span = telemetry.only("tools/call lookup")
    http_span = next(
        span
        for span in telemetry.spans()
        if span.name == "POST /mcp" and span.context.span_id == mcp_span.parent.span_id
    )  # type: ignore[union-attr]
    assert http_span.kind == SpanKind.SERVER
    tool_span = next(span for span in telemetry.spans() if span.name == "SELECT things")
    assert tool_span.parent.span_id == mcp_span.context.span_id  # type: ignore[union-attr]
    assert {tool_span.context.trace_id, http_span.context.trace_id} == {mcp_span.context.trace_id}


@pytest.mark.parametrize("era", ["handshake", "modern"])
def test_the_trace_context_in_meta_continues_the_client_s_trace(
    traced: Flask, make_client: t.Any, telemetry: Telemetry, era: str
) -> None:
    client = make_client(traced, era=era)
    if era == "handshake":
        client.initialize()
    meta = {"traceparent": TRACEPARENT, "tracestate": TRACESTATE}
    client.request("tools/call", {"name": "lookup", "arguments": {"key": "x"}, "_meta": meta})
    span = telemetry.only("tools/call lookup")
    assert format(span.context.trace_id, "032x") == TRACE_ID
    assert format(span.parent.span_id, "016x") == PARENT_ID  # type: ignore[union-attr]
    assert span.parent.is_remote  # type: ignore[union-attr]
    assert span.context.trace_state.get("rojo") == "00f067aa0ba902b7"
    # The HTTP request that carried it is linked, not the parent.
    http_span = [span for span in telemetry.spans() if span.name == "POST /mcp"][-1]
    assert [link.context.span_id for link in span.links] == [http_span.context.span_id]


@pytest.mark.parametrize("traceparent", ["garbage", "00-" + "0" * 32 + "-" + "0" * 16 + "-01", 42, "x" * 9000])
def test_a_bad_trace_context_is_ignored(
    traced: Flask, make_client: t.Any, telemetry: Telemetry, traceparent: t.Any
) -> None:
    client = make_client(traced, era="modern")
    client.request("tools/call", {"name": "lookup", "arguments": {"key": "x"}, "_meta": {"traceparent": traceparent}})
    span = telemetry.only("tools/call lookup")
    http_span = next(span for span in telemetry.spans() if span.name == "POST /mcp")
    assert span.parent.span_id == http_span.context.span_id  # type: ignore[union-attr]


@pytest.mark.parametrize("era", ["handshake", "modern"])
@pytest.mark.parametrize(
    "meta",
    [
        {"traceparent": "00-" + "a" * 32 + "-" + "b" * 16 + "-01-" + "x" * 600},
        {"traceparent": "ff-" + TRACE_ID + "-" + PARENT_ID + "-01"},
        {"traceparent": TRACEPARENT.replace("4", "é")},
        {"traceparent": ["not", "a", "string"]},
        {"traceparent": {"nested": TRACEPARENT}},
        {"traceparent": None, "tracestate": TRACESTATE},
    ],
)
def test_a_malformed_or_oversized_traceparent_is_ignored_without_a_word(
    traced: Flask,
    make_client: t.Any,
    telemetry: Telemetry,
    caplog: pytest.LogCaptureFixture,
    era: str,
    meta: dict[str, t.Any],
) -> None:
    client = make_client(traced, era=era)
    if era == "handshake":
        client.initialize()
    caplog.clear()
    with caplog.at_level(logging.DEBUG):
        result = client.request("tools/call", {"name": "lookup", "arguments": {"key": "x"}, "_meta": meta})
    assert result["content"][0]["text"] == "X"
    span = telemetry.only("tools/call lookup")
    assert not span.parent.is_remote  # type: ignore[union-attr]  # the HTTP span's child, as without one
    assert [record for record in caplog.records if record.levelno >= logging.WARNING] == []


@pytest.mark.parametrize(
    "tracestate",
    [
        "x" * 600,  # over the W3C's 512
        ",".join(f"k{n}=v" for n in range(40)),  # over 32 members
        "Not A Member!",
        "rojo=" + "v" * 300,
        "é=1",
        42,
    ],
)
def test_a_bad_tracestate_is_dropped_and_the_trace_still_continued(
    traced: Flask, make_client: t.Any, telemetry: Telemetry, caplog: pytest.LogCaptureFixture, tracestate: t.Any
) -> None:
    client = make_client(traced, era="modern")
    meta = {"traceparent": TRACEPARENT, "tracestate": tracestate, "baggage": "x" * 9000}
    with caplog.at_level(logging.DEBUG):
        client.request("tools/call", {"name": "lookup", "arguments": {"key": "x"}, "_meta": meta})
    span = telemetry.only("tools/call lookup")
    assert format(span.context.trace_id, "032x") == TRACE_ID
    assert dict(span.context.trace_state) == {}
    assert [record for record in caplog.records if record.levelno >= logging.WARNING] == []


def test_a_bad_trace_context_of_a_refused_message_is_ignored(
    traced: Flask, telemetry: Telemetry, caplog: pytest.LogCaptureFixture
) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/list",
        "params": {"_meta": {"traceparent": TRACEPARENT, "tracestate": "bad state!!", "baggage": "=;="}},
    }
    headers = {"Mcp-Session-Id": "no-such-session", "Accept": "application/json, text/event-stream"}
    with caplog.at_level(logging.DEBUG):
        assert traced.test_client().post("/mcp", json=body, headers=headers).status_code == 404
    span = telemetry.only("tools/list")
    assert format(span.context.trace_id, "032x") == TRACE_ID
    assert [record for record in caplog.records if record.levelno >= logging.WARNING] == []


def test_a_request_to_the_client_carries_the_trace(traced: Flask, make_client: t.Any, telemetry: Telemetry) -> None:
    asked: list[dict[str, t.Any]] = []

    def answer(key: str, request: dict[str, t.Any]) -> dict[str, t.Any]:
        asked.append(request)
        return {"action": "accept", "content": {"ok": True}}

    client = make_client(traced)
    client.initialize(capabilities={"elicitation": {}})
    result = client.call_tool("confirm", {}, answers=answer)
    assert result["content"][0]["text"] == "accept", result
    span = telemetry.only("tools/call confirm")
    (request,) = asked
    traceparent = request["params"]["_meta"]["traceparent"]
    assert traceparent.startswith(f"00-{span.context.trace_id:032x}-{span.context.span_id:016x}-")


def test_a_modern_round_s_questions_carry_the_trace(traced: Flask, make_client: t.Any, telemetry: Telemetry) -> None:
    client = make_client(traced, era="modern", capabilities={"elicitation": {}})
    result = client.request("tools/call", {"name": "confirm", "arguments": {}})
    assert result["resultType"] == "input_required"
    span = telemetry.only("tools/call confirm")
    meta = result["inputRequests"]["sure"]["params"]["_meta"]
    assert meta["traceparent"].startswith(f"00-{span.context.trace_id:032x}-{span.context.span_id:016x}-")


@pytest.mark.parametrize("era", ["handshake", "modern"])
def test_a_task_s_run_continues_the_trace_of_the_call_that_created_it(
    traced: Flask, make_client: t.Any, telemetry: Telemetry, era: str
) -> None:
    if era == "modern":
        client = make_client(traced, era="modern", capabilities={"extensions": {EXTENSION: {}}})
        task_id = client.request("tools/call", {"name": "later", "arguments": {"n": 4}})["taskId"]
    else:
        client = make_client(traced)
        client.initialize(capabilities={"tasks": {}})
        created = client.request("tools/call", {"name": "later", "arguments": {"n": 4}, "task": {}})
        task_id = created["task"]["taskId"]
    assert client.wait_for_task(task_id)["status"] == "completed"
    calls = [span for span in telemetry.mcp_spans() if span.name == "tools/call later"]
    created_span, run_span = sorted(calls, key=lambda span: span.start_time or 0)
    assert run_span.context.trace_id == created_span.context.trace_id
    assert run_span.parent.span_id == created_span.context.span_id  # type: ignore[union-attr]
    assert "network.transport" not in (run_span.attributes or {})
    work = next(span for span in telemetry.spans() if span.name == "task work")
    assert work.parent.span_id == run_span.context.span_id  # type: ignore[union-attr]
