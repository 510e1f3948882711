"""An audit record carries the trace id of its call's span, when telemetry is on."""

from __future__ import annotations

import typing as t

from flask import Flask

from flask_mcp import MCP
from flask_mcp.audit.installed import audit_log_of
from flask_mcp.audit.reading import read_records
from tests.telemetry.conftest import Telemetry


def test_the_record_names_the_trace_of_its_span(
    calc: MCP, make_app: t.Callable[..., Flask], telemetry: Telemetry, make_client: t.Any, tmp_path: t.Any
) -> None:
    app = telemetry.instrument(
        make_app(calc, MCP_AUDIT=True, MCP_AUDIT_DATABASE_URI=f"sqlite:///{tmp_path / 'audit.sqlite3'}")
    )
    for era in ("handshake", "modern"):
        client = make_client(app, era=era)
        if era == "handshake":
            client.initialize()
        client.call_tool("add", {"a": 2, "b": 3})
    log = audit_log_of(app)
    assert log is not None and log.writer.flush()
    spans = [span for span in telemetry.mcp_spans() if span.name == "tools/call add"]
    assert {format(span.context.trace_id, "032x") for span in spans} == {
        record.trace_id for record in read_records(log.engine)
    }
    assert len(spans) == 2
    app.extensions["mcp"].shutdown()
