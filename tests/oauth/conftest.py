"""An app whose users sign in through a session, served by an OAuthServer, and a client that runs the flow."""

from __future__ import annotations

import base64
import hashlib
import secrets
import typing as t
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from flask import Flask, redirect, request, session

from flask_mcp import MCP, ScopeRequired
from flask_mcp.auth import current_principal
from flask_mcp.oauth import OAuthServer

RESOURCE = "http://localhost/mcp"
ISSUER = "http://localhost"
REDIRECT = "http://127.0.0.1:8765/callback"
USERS = {"alice": {"notes:read", "notes:write"}, "bob": {"notes:read"}}


def build_app(tmp_path: Path, **config: t.Any) -> Flask:
    """A Flask app with two users (alice may write, bob may not), a login view, and one MCP server."""
    app = Flask(__name__)
    app.config.update(
        TESTING=True,
        SECRET_KEY="test-" + secrets.token_hex(8),
        MCP_AUTH_RESOURCE=RESOURCE,
        MCP_AUTH_REQUIRED_SCOPES=["notes:read"],
        MCP_OAUTH_DATABASE_URI=f"sqlite:///{tmp_path / 'oauth.sqlite3'}",
        MCP_OAUTH_LOGIN_VIEW="login",
        MCP_OAUTH_SCOPES={"notes:read": "Read your notes", "notes:write": "Write notes for you"},
    )
    app.config.update(config)
    mcp = MCP(name="notes")

    @mcp.tool(permissions=[ScopeRequired("notes:read")])
    def whoami() -> str:
        principal = current_principal()
        return principal.subject if principal is not None else "nobody"

    @mcp.tool(permissions=[ScopeRequired("notes:write")])
    def write_note(text: str) -> str:
        return f"kept: {text}"

    @app.route("/login", methods=["GET", "POST"])
    def login() -> t.Any:
        if request.method == "POST":
            session["user"] = request.form["username"]
            target = request.args.get("next", "/")
            return redirect(target if target.startswith("/") and not target.startswith("//") else "/")
        return "login form"

    OAuthServer(
        mcp,
        app,
        user_loader=lambda: session.get("user"),
        subject=str,
        allowed_scopes=lambda user: USERS.get(user, set()),
    )
    return app


# The databases the app's tables live in (``database_uri``, ``BOTH_DATABASES``) are tests/conftest.py's.


@pytest.fixture
def app(tmp_path: Path, database_uri: str) -> Flask:
    return build_app(tmp_path, MCP_OAUTH_DATABASE_URI=database_uri)


def pkce() -> tuple[str, str]:
    """A verifier and its S256 challenge."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


class Flow:
    """Drives the authorization code flow through a Flask test client, as a browser and a client would."""

    def __init__(self, app: Flask, redirect_uri: str = REDIRECT) -> None:
        self.app = app
        self.browser = app.test_client()
        self.client = app.test_client()
        self.redirect_uri = redirect_uri
        self.verifier, self.challenge = pkce()
        registered = self.client.post(
            "/oauth/register",
            json={
                "client_name": "Test client",
                "redirect_uris": [redirect_uri],
                "grant_types": ["authorization_code", "refresh_token"],
                "token_endpoint_auth_method": "none",
            },
        )
        assert registered.status_code == 201, registered.get_data(as_text=True)
        self.client_id: str = registered.get_json()["client_id"]

    def login(self, user: str) -> None:
        self.browser.post("/login", data={"username": user})

    def authorize_params(self, scope: str = "notes:read", **overrides: t.Any) -> dict[str, t.Any]:
        params = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": self.redirect_uri,
            "scope": scope,
            "state": "st4te",
            "code_challenge": self.challenge,
            "code_challenge_method": "S256",
            "resource": RESOURCE,
        }
        params.update(overrides)
        return {key: value for key, value in params.items() if value is not None}

    def authorize(self, scope: str = "notes:read", **overrides: t.Any) -> t.Any:
        return self.browser.get("/oauth/authorize?" + urlencode(self.authorize_params(scope, **overrides)))

    def approve(self, scope: str = "notes:read", decision: str = "approve", **overrides: t.Any) -> t.Any:
        """Show the consent page and answer it; returns the response that redirects to the client."""
        query = urlencode(self.authorize_params(scope, **overrides))
        page = self.browser.get("/oauth/authorize?" + query)
        if page.status_code == 302:
            return page
        assert page.status_code == 200, page.get_data(as_text=True)
        token = csrf_of(page.get_data(as_text=True))
        return self.browser.post("/oauth/authorize?" + query, data={"csrf_token": token, "decision": decision})

    def code(self, scope: str = "notes:read") -> str:
        answer = self.approve(scope)
        assert answer.status_code == 302, answer.get_data(as_text=True)
        query = parse_qs(urlsplit(answer.headers["Location"]).query)
        assert query["iss"] == [ISSUER] and query["state"] == ["st4te"]
        return query["code"][0]

    def exchange(self, code: str, **overrides: t.Any) -> t.Any:
        data = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": self.redirect_uri,
            "client_id": self.client_id,
            "code_verifier": self.verifier,
            "resource": RESOURCE,
        }
        data.update(overrides)
        return self.client.post("/oauth/token", data={k: v for k, v in data.items() if v is not None})

    def tokens(self, user: str = "alice", scope: str = "notes:read") -> dict[str, t.Any]:
        self.login(user)
        answer = self.exchange(self.code(scope))
        assert answer.status_code == 200, answer.get_data(as_text=True)
        return t.cast("dict[str, t.Any]", answer.get_json())

    def refresh(self, refresh_token: str, **overrides: t.Any) -> t.Any:
        data = {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": self.client_id}
        data.update(overrides)
        return self.client.post("/oauth/token", data=data)


def csrf_of(html: str) -> str:
    marker = 'name="csrf_token" value="'
    start = html.index(marker) + len(marker)
    return html[start : html.index('"', start)]


def call_tool(app: Flask, token: str | None, name: str, arguments: dict[str, t.Any] | None = None) -> t.Any:
    """One stateless-style tools/call over HTTP (initialize first, handshake era)."""
    client = app.test_client()
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    init = client.post(
        "/mcp",
        headers=headers,
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
    )
    if init.status_code != 200:
        return init
    session_id = init.headers.get("Mcp-Session-Id")
    if session_id:
        headers["Mcp-Session-Id"] = session_id
    headers["MCP-Protocol-Version"] = "2025-11-25"
    client.post("/mcp", headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    return client.post(
        "/mcp",
        headers=headers,
        json={
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments or {}},
        },
    )


@pytest.fixture(autouse=True)
def local_network_only(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Client metadata fetches reach this machine only: names resolve to 127.0.0.1, and connections
    to any other address fail (a test may point a name elsewhere, to see the fetch refuse it first).

    Returns the list of (address, port) connections opened.
    """
    import socket

    from flask_mcp.oauth import safe_fetch

    opened: list[tuple[str, int]] = []

    def resolve(host: str, port: int) -> list[str]:
        return ["127.0.0.1"]

    def open_connection(address: str, port: int, timeout: float) -> socket.socket:
        if address not in ("127.0.0.1", "::1"):
            raise AssertionError(f"a test fetch tried to connect to {address}")
        opened.append((address, port))
        return socket.create_connection((address, port), timeout=timeout)

    monkeypatch.setattr(safe_fetch, "resolve", resolve)
    monkeypatch.setattr(safe_fetch, "open_connection", open_connection)
    return opened
