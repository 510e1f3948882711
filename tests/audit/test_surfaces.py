"""A row for every ended call, on every surface, with who, through what, how approved and how it ended."""

from __future__ import annotations

import io
import json
import typing as t

import marshmallow as ma
import pydantic
import pytest
from flask import Flask

from flask_mcp import MCP, ScopeRequired
from flask_mcp.audit.installed import audit_log_of
from flask_mcp.audit.reading import read_records
from flask_mcp.core.approval import APPROVAL_KEY
from flask_mcp.core.audit import AuditRecord, arguments_digest
from flask_mcp.core.tasks import EXTENSION
from flask_mcp.signals import call_audited
from flask_mcp.transport.cgi import serve_cgi
from flask_mcp.transport.stdio import serve_stdio
from tests.conftest import BOTH_DATABASES

FORM = {"elicitation": {}}
TOKENS = {"alice-token": {"subject": "alice", "scopes": ["notes"], "client_id": "notes-app"}}


class Login(ma.Schema):
    login = ma.fields.String(required=True)
    password = ma.fields.String(required=True, load_only=True)


class Card(pydantic.BaseModel):
    holder: str
    number: pydantic.SecretStr


def notes_server() -> MCP:
    mcp = MCP(name="notes", default_permissions=[ScopeRequired("notes")])

    @mcp.tool(permissions=[])
    def add(a: int, b: int) -> int:
        return a + b

    @mcp.tool(input_schema=Login)
    def sign_in(login: str, password: str) -> str:
        return f"hello {login}"

    @mcp.tool
    def pay(card: Card) -> str:
        return f"charged {card.holder}"

    @mcp.tool(confirm=True)
    def wipe(box: str) -> str:
        return f"wiped {box}"

    @mcp.tool(rate_limit="1/hour")
    def rare() -> str:
        return "once"

    @mcp.tool(permissions=[ScopeRequired("admin")])
    def admin() -> str:
        return "admin"

    @mcp.tool(task="optional")
    def crunch(rows: int) -> int:
        return rows * 2

    @mcp.resource("notes://{note_id}", permissions=[])
    def note(note_id: str) -> str:
        return f"note {note_id}"

    return mcp


@pytest.fixture
def app(make_app: t.Callable[..., Flask], database_uri: str) -> t.Iterator[Flask]:
    app = make_app(
        notes_server(),
        MCP_AUDIT=True,
        MCP_AUDIT_ARGUMENTS=True,
        MCP_AUDIT_READS=True,
        MCP_AUDIT_DATABASE_URI=database_uri,
        MCP_AUTH_TOKENS=TOKENS,
        MCP_TASK_POLL_INTERVAL=0.01,
    )
    yield app
    app.extensions["mcp"].shutdown()


def trail(app: Flask, **filters: t.Any) -> list[AuditRecord]:
    log = audit_log_of(app)
    assert log is not None and log.writer.flush()
    return read_records(log.engine, **filters)


def only(app: Flask, **filters: t.Any) -> AuditRecord:
    (found,) = trail(app, **filters)
    return found


@BOTH_DATABASES
def test_a_handshake_call_names_its_caller_client_session_and_revision(app: Flask, make_client: t.Any) -> None:
    client = make_client(app, token="alice-token")
    client.initialize()
    client.call_tool("add", {"b": 2, "a": 1})
    row = only(app)
    assert (row.tool, row.kind, row.surface, row.outcome, row.approval) == ("add", "tool", "mcp", "ok", "none")
    assert (row.principal, row.client, row.session) == ("alice", "notes-app", client.session_id)
    assert row.revision == "2025-11-25" and row.arguments == {"a": 1, "b": 2}
    assert row.arguments_digest == arguments_digest({"a": 1, "b": 2}) and row.duration_ms >= 0


def test_a_modern_call_and_a_read_are_recorded(app: Flask, make_client: t.Any) -> None:
    client = make_client(app, era="modern", token="alice-token")
    client.request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
    client.request("resources/read", {"uri": "notes://7"})
    read, call = trail(app)
    assert (call.surface, call.revision, call.outcome, call.client) == ("mcp", "2026-07-28", "ok", "notes-app")
    assert (read.kind, read.tool, read.outcome) == ("resource", "notes://7", "ok")


def test_an_anonymous_client_is_named_as_it_declared(make_app: t.Any, make_client: t.Any, tmp_path: t.Any) -> None:
    app = make_app(notes_server(), MCP_AUDIT=True, MCP_AUDIT_DATABASE_URI=f"sqlite:///{tmp_path / 'a.sqlite3'}")
    client = make_client(app, era="modern")
    client.request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
    assert only(app).client == "flask_mcp.testing" and only(app).principal is None
    app.extensions["mcp"].shutdown()


def test_secret_fields_are_never_stored(app: Flask, make_client: t.Any) -> None:
    client = make_client(app, era="modern", token="alice-token")
    client.request("tools/call", {"name": "sign_in", "arguments": {"login": "ada", "password": "hunter2"}})
    client.request("tools/call", {"name": "pay", "arguments": {"card": {"holder": "ada", "number": "4242"}}})
    pay, sign_in = trail(app)
    assert sign_in.arguments == {"login": "ada"}
    assert sign_in.arguments_digest == arguments_digest({"login": "ada", "password": "hunter2"})
    assert pay.arguments == {"card": {"holder": "ada"}}


def test_refusals_and_failures_say_how_the_call_ended(app: Flask, make_client: t.Any) -> None:
    client = make_client(app, era="modern", token="alice-token")
    client.request("tools/call", {"name": "rare", "arguments": {}})
    assert client.error("tools/call", {"name": "rare", "arguments": {}})
    assert client.error("tools/call", {"name": "admin", "arguments": {}})
    client.request("tools/call", {"name": "add", "arguments": {"a": "x"}})
    invalid, denied, limited, once = trail(app)
    assert once.outcome == "ok"
    assert (limited.outcome, limited.error_code) == ("rate_limited", "-31429")
    assert (denied.outcome, denied.error_code) == ("refused", "-31403")
    assert invalid.outcome == "tool_error"


@pytest.mark.parametrize(
    ("action", "approval", "outcome"), [("accept", "accepted", "ok"), ("decline", "declined", "refused")]
)
def test_the_approval_is_recorded_with_who_answered(
    app: Flask, make_client: t.Any, action: str, approval: str, outcome: str
) -> None:
    client = make_client(app, era="modern", capabilities=FORM, token="alice-token")
    params = {"name": "wipe", "arguments": {"box": "b"}}
    first = client.request("tools/call", params)
    assert trail(app) == []  # asking is not an end
    retry = {**params, "inputResponses": {APPROVAL_KEY: {"action": action}}, "requestState": first["requestState"]}
    client.request("tools/call", retry)
    row = only(app)
    assert (row.approval, row.approval_mode, row.approver, row.outcome) == (approval, "form", "alice", outcome)
    if outcome == "refused":
        assert row.error_code == "not_approved"


def test_rest_and_cgi_calls_are_recorded(app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    headers = {"Authorization": "Bearer alice-token"}
    assert app.test_client().post("/mcp/rest/tools/add", json={"a": 1, "b": 2}, headers=headers).status_code == 200
    rest = app.test_client().post("/mcp/rest/tools/wipe", json={"box": "b"}, headers=headers)
    assert rest.status_code == 403
    body = b'{"a": 2, "b": 3}'
    for key, value in {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/tools/add",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(body)),
        "HTTP_AUTHORIZATION": "Bearer alice-token",
    }.items():
        monkeypatch.setenv(key, value)
    serve_cgi(app, stdin=io.BytesIO(body), stdout=io.BytesIO())
    cgi, refused, rest_ok = trail(app)
    assert (rest_ok.surface, rest_ok.outcome, rest_ok.principal) == ("rest", "ok", "alice")
    assert (refused.surface, refused.outcome, refused.error_code) == ("rest", "refused", "approval_required")
    assert (cgi.surface, cgi.outcome, cgi.arguments) == ("cgi", "ok", {"a": 2, "b": 3})


def test_stdio_and_the_command_line_are_recorded(app: Flask) -> None:
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "desktop", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 1}}},
    ]  # fmt: skip
    stdout = io.BytesIO()
    serve_stdio(app, io.BytesIO(b"".join(json.dumps(line).encode() + b"\n" for line in lines)), stdout)
    assert app.test_cli_runner().invoke(args=["mcp", "call", "add", "a=2", "b=2"]).exit_code == 0
    cli, stdio = trail(app)
    assert (stdio.surface, stdio.client, stdio.revision) == ("stdio", "desktop", "2025-11-25")
    assert (cli.surface, cli.client, cli.revision) == ("cli", "flask mcp", "2026-07-28")


def test_a_task_is_recorded_when_it_ends(app: Flask, make_client: t.Any) -> None:
    client = make_client(app, era="modern", capabilities={"extensions": {EXTENSION: {}}}, token="alice-token")
    created = client.request("tools/call", {"name": "crunch", "arguments": {"rows": 4}})
    assert created["resultType"] == "task"
    done = client.wait_for_task(created["taskId"])
    assert done["status"] == "completed"
    row = only(app, tool="crunch")
    assert (row.surface, row.outcome, row.principal, row.arguments) == ("task", "ok", "alice", {"rows": 4})


def test_a_signal_carries_each_record_to_other_sinks(app: Flask, make_client: t.Any) -> None:
    seen: list[AuditRecord] = []

    def receive(sender: t.Any, record: AuditRecord, **extra: t.Any) -> None:
        seen.append(record)

    call_audited.connect(receive, app)
    try:
        make_client(app, era="modern", token="alice-token").request(
            "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}
        )
    finally:
        call_audited.disconnect(receive, app)
    assert [record.tool for record in seen] == ["add"] and trail(app) == seen


def test_the_table_lives_in_flask_sqlalchemys_database(make_app: t.Any, tmp_path: t.Any) -> None:
    from flask_sqlalchemy import SQLAlchemy
    from sqlalchemy import inspect

    app = Flask("with_db", instance_path=str(tmp_path / "instance"))
    app.config.update(TESTING=True, MCP_AUDIT=True, SQLALCHEMY_DATABASE_URI=f"sqlite:///{tmp_path / 'app.sqlite3'}")
    db = SQLAlchemy(app)
    notes_server().init_app(app)
    with app.app_context():
        assert inspect(db.engine).has_table("mcp_audit")
        assert audit_log_of(app) is not None and audit_log_of(app).engine is db.engine  # type: ignore[union-attr]
    app.extensions["mcp"].shutdown()


def test_a_failing_receiver_fails_neither_the_call_nor_its_record(
    app: Flask, make_client: t.Any, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(sender: t.Any, record: AuditRecord, **extra: t.Any) -> None:
        raise RuntimeError("the SIEM is down")

    call_audited.connect(broken, app)
    try:
        client = make_client(app, era="modern", token="alice-token")
        result = client.request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
    finally:
        call_audited.disconnect(broken, app)
    assert result["content"][0]["text"] == "3" and only(app).outcome == "ok"
    assert "receiver of call_audited failed" in caplog.text
