"""``mcp.server.operation.duration`` and ``mcp.server.session.duration``, and log records tied to spans."""

from __future__ import annotations

import io
import json
import logging
import typing as t

import pytest
from flask import Flask

from flask_mcp import MCP
from flask_mcp.telemetry.logs import TraceContextFilter
from flask_mcp.telemetry.tracer import DURATION_BUCKETS
from flask_mcp.transport.stdio import StdioServer
from tests.telemetry.conftest import Telemetry


@pytest.fixture
def app(calc: MCP, make_app: t.Callable[..., Flask], telemetry: Telemetry) -> Flask:
    return telemetry.instrument(make_app(calc))


def test_each_operation_is_measured_with_the_conventions_attributes(
    app: Flask, make_client: t.Any, telemetry: Telemetry
) -> None:
    client = make_client(app)
    client.initialize()
    client.call_tool("add", {"a": 1, "b": 2})
    client.call_tool("refuse", {"reason": "no"})
    client.error("tools/call", {"name": "unknown-" + "x" * 50, "arguments": {}})
    points = {
        (p.attributes.get("mcp.method.name"), p.attributes.get("gen_ai.tool.name"), p.attributes.get("error.type")): p
        for p in telemetry.points("mcp.server.operation.duration")
    }
    add = points[("tools/call", "add", None)]
    assert add.count == 1 and tuple(add.explicit_bounds) == DURATION_BUCKETS
    assert add.attributes["gen_ai.operation.name"] == "execute_tool"
    assert add.attributes["network.transport"] == "tcp"
    assert add.attributes["mcp.protocol.version"] == client.protocol_version
    assert points[("tools/call", "refuse", "tool_error")].count == 1
    # A name no tool has is _OTHER as a metric attribute; session ids and client addresses are none.
    assert points[("tools/call", "_OTHER", "-32602")].count == 1
    assert all("mcp.session.id" not in p.attributes and "client.address" not in p.attributes for p in points.values())
    assert ("initialize", None, None) in points


def test_a_deleted_session_s_duration_is_measured(app: Flask, make_client: t.Any, telemetry: Telemetry) -> None:
    client = make_client(app)
    client.initialize()
    assert client.http.delete("/mcp", headers=client.headers()).status_code == 204
    (point,) = telemetry.points("mcp.server.session.duration")
    assert point.count == 1 and point.sum >= 0
    assert point.attributes["mcp.protocol.version"] == client.protocol_version
    assert point.attributes["network.transport"] == "tcp"


def test_a_stdio_session_ends_with_stdin(app: Flask, telemetry: Telemetry) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    StdioServer(app, io.BytesIO(json.dumps(initialize).encode() + b"\n"), io.BytesIO()).run()
    (point,) = telemetry.points("mcp.server.session.duration")
    assert point.attributes["network.transport"] == "pipe"


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_flask_mcp_s_log_records_carry_the_current_trace(
    calc: MCP, make_app: t.Any, make_client: t.Any, telemetry: Telemetry
) -> None:
    @calc.tool
    def crash() -> str:
        """A bug."""
        raise RuntimeError("boom")

    app = telemetry.instrument(make_app(calc))
    handler = _Records()
    logger = logging.getLogger("flask_mcp")
    logger.addHandler(handler)
    try:
        make_client(app, era="modern").call_tool("crash", {})
        logger.warning("outside any span")
    finally:
        logger.removeHandler(handler)
    span = telemetry.only("tools/call crash")
    failed = next(record for record in handler.records if "crash" in record.getMessage())
    assert failed.otelTraceID == f"{span.context.trace_id:032x}"  # type: ignore[attr-defined]
    assert failed.otelSpanID == f"{span.context.span_id:016x}"  # type: ignore[attr-defined]
    assert handler.records[-1].otelTraceID == "0"  # type: ignore[attr-defined]
    assert sum(isinstance(kept, TraceContextFilter) for kept in logger.filters) == 1


def test_log_correlation_can_be_left_off(calc: MCP, make_app: t.Any) -> None:
    logger = logging.getLogger("flask_mcp")
    kept = [f for f in logger.filters if isinstance(f, TraceContextFilter)]
    for found in kept:
        logger.removeFilter(found)
    try:
        make_app(calc, MCP_OTEL_LOG_CORRELATION=False)
        assert not any(isinstance(f, TraceContextFilter) for f in logger.filters)
    finally:
        for found in kept:
            logger.addFilter(found)
