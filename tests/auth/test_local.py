"""The caller of stdio and the flask mcp commands: a token checked by the app's backend, or a configured principal."""

from __future__ import annotations

import io
import json
import typing as t

import pytest
from flask import Flask

from flask_mcp import MCP, ScopeRequired, serve_stdio
from flask_mcp.auth import TOKEN_ENV, LocalAuthError, local_principal

TOKENS = {"ada-token": {"subject": "ada", "scopes": ["notes:read"]}, "eve-token": {"subject": "eve", "scopes": []}}


def build(make_app: t.Callable[..., Flask], **config: t.Any) -> Flask:
    mcp = MCP(name="guarded")

    @mcp.tool(permissions=[ScopeRequired("notes:read")])
    def read_notes() -> str:
        return "the notes"

    @mcp.tool(permissions=[])
    def public() -> str:
        return "public"

    return make_app(mcp, MCP_AUTH_TOKENS=TOKENS, **config)


@pytest.fixture
def app(make_app: t.Callable[..., Flask]) -> Flask:
    return build(make_app)


@pytest.fixture(autouse=True)
def no_token_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)


def test_a_token_is_checked_by_the_apps_own_backend(app: Flask) -> None:
    principal = local_principal(app, "ada-token")
    assert principal is not None and (principal.subject, principal.scopes) == ("ada", frozenset({"notes:read"}))


def test_the_token_may_come_from_the_environment(app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, "eve-token")
    principal = local_principal(app)
    assert principal is not None and principal.subject == "eve"


def test_a_refused_token_says_so(app: Flask) -> None:
    with pytest.raises(LocalAuthError, match="the token was refused: Unauthorized: the access token is invalid"):
        local_principal(app, "forged")


def test_a_token_for_an_app_without_authentication_is_a_mistake(make_app: t.Callable[..., Flask]) -> None:
    with pytest.raises(LocalAuthError, match="no authentication configured"):
        local_principal(make_app(MCP(name="open")), "ada-token")


@pytest.mark.parametrize(
    ("configured", "subject", "scopes"),
    [("ops", "ops", frozenset()), ({"subject": "ops", "scopes": "notes:read admin"}, "ops", {"notes:read", "admin"})],
)
def test_a_configured_principal_serves_trusted_local_processes(
    make_app: t.Callable[..., Flask], configured: t.Any, subject: str, scopes: set[str]
) -> None:
    principal = local_principal(build(make_app, MCP_LOCAL_PRINCIPAL=configured))
    assert principal is not None and (principal.subject, set(principal.scopes)) == (subject, set(scopes))


def test_a_given_token_wins_over_the_configured_principal(make_app: t.Callable[..., Flask]) -> None:
    principal = local_principal(build(make_app, MCP_LOCAL_PRINCIPAL="ops"), "eve-token")
    assert principal is not None and principal.subject == "eve"


def test_without_either_nobody_calls(app: Flask) -> None:
    assert local_principal(app) is None


def test_a_configured_principal_needs_a_subject(make_app: t.Callable[..., Flask]) -> None:
    with pytest.raises(LocalAuthError, match="MCP_LOCAL_PRINCIPAL"):
        local_principal(build(make_app, MCP_LOCAL_PRINCIPAL={"scopes": ["x"]}))


def call_over_stdio(app: Flask, **options: t.Any) -> dict[str, t.Any]:
    line = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "read_notes"}}
    stdout = io.BytesIO()
    serve_stdio(app, io.BytesIO(json.dumps(line).encode() + b"\n"), stdout, **options)
    return t.cast(dict[str, t.Any], json.loads(stdout.getvalue()))


def test_stdio_serves_every_message_as_its_principal(app: Flask) -> None:
    assert call_over_stdio(app)["error"]["code"] == -31403  # nobody: what permissions protect is refused
    result = call_over_stdio(app, principal=local_principal(app, "ada-token"))["result"]
    assert result["content"][0]["text"] == "the notes"


def test_the_commands_take_a_token(app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = app.test_cli_runner()
    refused = runner.invoke(args=["mcp", "call", "read_notes"])
    assert refused.exit_code == 1 and "-31403" in refused.stderr and "--token" in refused.stderr
    assert runner.invoke(args=["mcp", "call", "public"]).exit_code == 0
    called = runner.invoke(args=["mcp", "call", "read_notes", "--token", "ada-token"])
    assert called.exit_code == 0, called.output
    assert json.loads(called.stdout)["content"][0]["text"] == "the notes"
    forged = runner.invoke(args=["mcp", "call", "read_notes", "--token", "forged"])
    assert forged.exit_code == 1 and "the token was refused" in forged.stderr
    monkeypatch.setenv(TOKEN_ENV, "eve-token")  # eve lacks the scope
    assert "-31403" in runner.invoke(args=["mcp", "call", "read_notes"]).stderr


def test_the_stdio_command_refuses_a_bad_token_before_serving(app: Flask) -> None:
    result = app.test_cli_runner().invoke(args=["mcp", "stdio", "--token", "forged"], input=b"")
    assert result.exit_code == 1 and "the token was refused" in result.stderr
