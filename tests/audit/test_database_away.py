"""The audit trail's database away at start: calls are served, and rows are written once it is back."""

from __future__ import annotations

import logging
import typing as t

import pytest

from tests.conftest import free_port
from tests.oauth.postgres import PostgresCluster, unavailable_reason


def test_an_audit_trail_whose_database_is_away_at_start_writes_once_it_is_back(
    make_app: t.Any, make_client: t.Any, caplog: pytest.LogCaptureFixture
) -> None:
    from flask_mcp import MCP
    from flask_mcp.audit.installed import audit_log_of
    from flask_mcp.audit.reading import read_records

    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    port = free_port()
    mcp = MCP(name="audited")

    @mcp.tool
    def add(a: int, b: int) -> int:
        return a + b

    uri = f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    with caplog.at_level(logging.WARNING, logger="flask_mcp"):
        app = make_app(mcp, MCP_AUDIT=True, MCP_AUDIT_DATABASE_URI=uri, MCP_STATELESS=True)
    assert "the audit trail's database could not be reached while the app was set up" in caplog.text
    client = make_client(app, era="modern")
    assert client.call_tool("add", {"a": 1, "b": 2})["structuredContent"] == {"result": 3}  # served meanwhile
    log = audit_log_of(app)
    assert log is not None
    log.writer.flush()  # that call's row is lost, and said so in the log
    cluster = PostgresCluster(port)
    try:
        assert client.call_tool("add", {"a": 2, "b": 3})["structuredContent"] == {"result": 5}
        assert log.writer.flush()
        assert [record.tool for record in read_records(log.engine)] == ["add"]
    finally:
        log.close()
        cluster.stop()
