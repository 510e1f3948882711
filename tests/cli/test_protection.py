"""``flask mcp install`` for a protected app given no token: what to pass, or that the client signs in."""

from __future__ import annotations

import json
import typing as t
from pathlib import Path

import pytest
from flask import Flask

from flask_mcp import MCP
from flask_mcp.cli.protection import Protection, protection_of

REPO = Path(__file__).resolve().parents[2]
URL = "http://127.0.0.1:5000/mcp"
TOKENS = {"good-token": {"subject": "ada"}}
ISSUER = "https://auth.example.com"


@pytest.fixture(autouse=True)
def _from_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("FLASK_MCP_TOKEN", raising=False)


def install(app: Flask, *args: str) -> t.Any:
    return app.test_cli_runner().invoke(args=["mcp", "install", *args, "--app", "tests/stdio_app.py:app"])


def test_an_open_app_needs_nothing(make_app: t.Callable[..., Flask]) -> None:
    app = make_app(MCP(name="open"))
    assert protection_of(app) == Protection(token_required=False)
    result = install(app, "cursor", "--url", URL)
    assert result.exit_code == 0 and "Warning" not in result.stderr and "token" not in result.stderr


def test_static_tokens_require_a_token(make_app: t.Callable[..., Flask]) -> None:
    app = make_app(MCP(name="shop"), MCP_AUTH_TOKENS=TOKENS)
    assert protection_of(app) == Protection(token_required=True)


@pytest.mark.parametrize("client", ["cursor", "vscode", "claude-code", "claude-desktop", "print"])
def test_an_http_entry_without_a_token_is_warned_about(make_app: t.Callable[..., Flask], client: str) -> None:
    app = make_app(MCP(name="shop"), MCP_AUTH_TOKENS=TOKENS)
    result = install(app, client, "--url", URL)
    assert result.exit_code == 0, result.output
    assert "Warning: this app requires a bearer token, and the entry sends none" in result.stderr
    assert "refused (401) on every request" in result.stderr
    assert "--token-env VAR" in result.stderr and "--token TOKEN" in result.stderr
    assert "requires" not in result.stdout  # stdout holds the entry alone


def test_a_stdio_entry_without_a_token_is_warned_about(make_app: t.Callable[..., Flask]) -> None:
    app = make_app(MCP(name="shop"), MCP_AUTH_TOKENS=TOKENS)
    result = install(app, "claude-desktop")
    assert result.exit_code == 0, result.output
    assert "Warning: this app requires a bearer token, and the entry gives none" in result.stderr
    assert "MCP_LOCAL_PRINCIPAL" in result.stderr and "--token-env VAR" in result.stderr
    assert "OAuth" not in result.stderr
    assert json.loads(result.stdout)["mcpServers"]["shop"]["args"][-2:] == ["mcp", "stdio"]


def test_a_local_principal_serves_the_stdio_entry_without_a_warning(make_app: t.Callable[..., Flask]) -> None:
    app = make_app(MCP(name="shop"), MCP_AUTH_TOKENS=TOKENS, MCP_LOCAL_PRINCIPAL="ops")
    assert install(app, "cursor").stderr.count("Warning") == 0
    assert "Warning" in install(app, "cursor", "--url", URL).stderr  # HTTP has no local principal


def test_a_token_silences_the_warning(make_app: t.Callable[..., Flask]) -> None:
    app = make_app(MCP(name="shop"), MCP_AUTH_TOKENS=TOKENS)
    assert "requires a bearer token" not in install(app, "cursor", "--url", URL, "--token", "t").stderr
    assert "requires a bearer token" not in install(app, "cursor", "--token", "good-token").stderr


@pytest.fixture
def oauth_app(make_app: t.Callable[..., Flask]) -> Flask:
    """Tokens from an authorization server that the resource metadata names."""
    return make_app(MCP(name="shop"), MCP_AUTH_TOKENS=TOKENS, MCP_AUTH_AUTHORIZATION_SERVERS=[ISSUER])


@pytest.mark.parametrize(
    ("client", "who"),
    [
        ("cursor", "Cursor"),
        ("vscode", "VS Code"),
        ("claude-code", "Claude Code"),
        ("claude-desktop", "Claude Desktop (through mcp-remote)"),
    ],
)
def test_an_oauth_client_is_told_it_signs_in_itself(oauth_app: Flask, client: str, who: str) -> None:
    result = install(oauth_app, client, "--url", URL)
    assert result.exit_code == 0, result.output
    assert f"Note: this app signs clients in with OAuth ({ISSUER}): {who} opens a browser" in result.stderr
    assert "Warning" not in result.stderr


def test_print_says_which_clients_sign_in(oauth_app: Flask) -> None:
    result = install(oauth_app, "print", "--url", URL)
    assert "a client that supports MCP's OAuth sign-in needs no token" in result.stderr
    assert "--token-env VAR" in result.stderr


def test_stdio_of_an_oauth_app_says_there_is_no_sign_in(oauth_app: Flask) -> None:
    result = install(oauth_app, "vscode")
    assert "Warning: this app requires a bearer token" in result.stderr
    assert "Stdio has no OAuth sign-in" in result.stderr and "--url" in result.stderr


def test_the_oauth_server_is_found_through_the_resource_metadata(tmp_path: Path) -> None:
    pytest.importorskip("authlib")
    from tests.oauth.conftest import ISSUER as OWN_ISSUER
    from tests.oauth.conftest import build_app

    app = build_app(tmp_path)
    assert protection_of(app).authorization_servers == (OWN_ISSUER,)
    result = install(app, "claude-code", "--url", URL)
    assert f"signs clients in with OAuth ({OWN_ISSUER}): Claude Code opens a browser" in result.stderr
