"""Authentication on the HTTP surfaces: 401 challenges, metadata, 403/429 mapping, owned sessions, REST, the SDK."""

from __future__ import annotations

import typing as t

import pytest
from flask import Flask

from flask_mcp import MCP
from flask_mcp.auth import StaticTokenBackend, current_principal
from flask_mcp.protocol.jsonrpc import PERMISSION_DENIED, RATE_LIMITED
from flask_mcp.protocol.jsonrpc import MCPError as CoreError

TOKENS = {"alice-token": {"subject": "alice", "scopes": ["read"]}, "bob-token": "bob"}
ACCEPT = "application/json, text/event-stream"
PING = {"jsonrpc": "2.0", "id": 7, "method": "ping"}
PRM = "http://localhost/.well-known/oauth-protected-resource/mcp"


def init_message() -> dict[str, t.Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }


@pytest.fixture
def server(mcp: MCP) -> MCP:
    @mcp.tool(permissions=[])
    def whoami() -> str:
        """The caller's subject."""
        principal = current_principal()
        return principal.subject if principal is not None else "nobody"

    @mcp.resource("policy://denied", permissions=[])
    def denied() -> str:
        raise CoreError(PERMISSION_DENIED, "Permission denied", {"requiredScopes": ["admin", "write"]})

    @mcp.resource("policy://limited", permissions=[])
    def limited() -> str:
        raise CoreError(RATE_LIMITED, "Rate limited", {"retryAfter": 2.5})

    return mcp


@pytest.fixture
def app(server: MCP, make_app: t.Callable[..., Flask]) -> Flask:
    return make_app(server, MCP_AUTH_TOKENS=TOKENS, MCP_AUTH_REQUIRED_SCOPES=["read"])


def headers(token: str | None = None, session: str | None = None) -> dict[str, str]:
    result = {"Accept": ACCEPT}
    if token is not None:
        result["Authorization"] = f"Bearer {token}"
    if session is not None:
        result["Mcp-Session-Id"] = session
    return result


def start(app: Flask, token: str) -> str:
    response = app.test_client().post("/mcp", json=init_message(), headers=headers(token))
    assert response.status_code == 200, response.get_data(as_text=True)
    return t.cast(str, response.headers["Mcp-Session-Id"])


# -- 401 and the metadata -------------------------------------------------------------


@pytest.mark.parametrize("method", ["POST", "GET", "DELETE"])
def test_no_credential_is_401_with_challenge(app: Flask, method: str, schema_checker: t.Any) -> None:
    """Without a token: 401, JSON-RPC body, resource_metadata and the required scope; no error= code."""
    response = app.test_client().open("/mcp", method=method, json=PING, headers=headers())
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == f'Bearer scope="read", resource_metadata="{PRM}"'
    body = response.get_json()
    schema_checker.check_envelope(None, body)
    assert "Unauthorized" in body["error"]["message"]


def test_without_required_scopes_the_challenge_names_none(server: MCP, make_app: t.Callable[..., Flask]) -> None:
    app = make_app(server, MCP_AUTH_TOKENS=TOKENS)
    response = app.test_client().post("/mcp", json=PING, headers=headers())
    assert response.headers["WWW-Authenticate"] == f'Bearer resource_metadata="{PRM}"'


@pytest.mark.parametrize("method", ["POST", "GET", "DELETE"])
def test_invalid_token_is_401_invalid_token(app: Flask, method: str) -> None:
    response = app.test_client().open("/mcp", method=method, json=PING, headers=headers("forged"))
    assert response.status_code == 401
    challenge = response.headers["WWW-Authenticate"]
    assert challenge.startswith('Bearer error="invalid_token"') and f'resource_metadata="{PRM}"' in challenge


@pytest.mark.parametrize("method", ["POST", "GET", "DELETE"])
def test_authentication_comes_before_the_session(app: Flask, method: str) -> None:
    """A live session id and an unknown one look the same without a credential."""
    live = start(app, "alice-token")
    client = app.test_client()
    answers = [
        client.open("/mcp", method=method, json=PING, headers=headers(session=session_id))
        for session_id in (live, "unknown-session")
    ]
    assert [a.status_code for a in answers] == [401, 401]
    assert answers[0].get_data() == answers[1].get_data()


@pytest.mark.parametrize("path", ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"])
def test_protected_resource_metadata(server: MCP, make_app: t.Callable[..., Flask], path: str) -> None:
    app = make_app(
        server,
        MCP_AUTH_TOKENS=TOKENS,
        MCP_AUTH_AUTHORIZATION_SERVERS=["https://auth.example.com"],
        MCP_AUTH_SCOPES_SUPPORTED=["read", "admin"],
    )
    response = app.test_client().get(path)
    assert response.status_code == 200 and response.mimetype == "application/json"
    assert response.get_json() == {
        "resource": "http://localhost/mcp",
        "authorization_servers": ["https://auth.example.com"],
        "scopes_supported": ["read", "admin"],
        "bearer_methods_supported": ["header"],
    }


def test_configured_resource_drives_metadata_and_challenge(server: MCP, make_app: t.Callable[..., Flask]) -> None:
    app = make_app(server, MCP_AUTH_TOKENS=TOKENS, MCP_AUTH_RESOURCE="https://mcp.example.com/mcp")
    client = app.test_client()
    assert (
        client.get("/.well-known/oauth-protected-resource/mcp").get_json()["resource"] == "https://mcp.example.com/mcp"
    )
    challenge = client.post("/mcp", json=PING, headers=headers()).headers["WWW-Authenticate"]
    assert 'resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"' in challenge


@pytest.mark.parametrize("host", ["evil.example", "localhost:80@evil.example", "[::1"])
def test_metadata_has_the_endpoints_host_guard(server: MCP, make_app: t.Callable[..., Flask], host: str) -> None:
    """The document names this server: a rebound or malformed Host gets the endpoint's JSON 403, not a resource."""
    app = make_app(server, MCP_AUTH_TOKENS=TOKENS)
    response = app.test_client().get(
        "/.well-known/oauth-protected-resource/mcp",
        headers={"Host": host},
        environ_overrides={"SERVER_NAME": "127.0.0.1"},
    )
    assert response.status_code == 403 and response.mimetype == "application/json"
    assert "resource" not in response.get_json()


def test_no_backend_no_metadata_and_open_endpoint(server: MCP, make_app: t.Callable[..., Flask]) -> None:
    app = make_app(server)
    client = app.test_client()
    assert client.get("/.well-known/oauth-protected-resource").status_code == 404
    assert app.extensions["mcp"].auth is None
    assert client.post("/mcp", json=init_message(), headers=headers()).status_code == 200


def test_constructor_backend(server: MCP, make_app: t.Callable[..., Flask]) -> None:
    """MCP(auth=...) wins over MCP_AUTH_TOKENS."""
    extension = MCP(name="ctor", auth=StaticTokenBackend({"ctor-token": "carol"}))
    app = make_app(extension, MCP_AUTH_TOKENS=TOKENS)
    assert start(app, "ctor-token")
    assert app.test_client().post("/mcp", json=init_message(), headers=headers("alice-token")).status_code == 401


def test_principal_reaches_the_tool(app: Flask) -> None:
    session = start(app, "alice-token")
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "whoami", "arguments": {}}}
    response = app.test_client().post("/mcp", json=call, headers=headers("alice-token", session))
    assert response.get_json()["result"]["content"][0]["text"] == "alice"


# -- 403 and 429 -------------------------------------------------------------------------


def read(app: Flask, uri: str, token: str = "alice-token") -> t.Any:
    session = start(app, token)
    message = {"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": uri}}
    return app.test_client().post("/mcp", json=message, headers=headers(token, session))


def test_permission_denied_is_403_insufficient_scope(app: Flask, schema_checker: t.Any) -> None:
    response = read(app, "policy://denied")
    assert response.status_code == 403
    assert response.headers["WWW-Authenticate"] == (
        f'Bearer error="insufficient_scope", scope="admin write", resource_metadata="{PRM}"'
    )
    body = response.get_json()
    schema_checker.check_envelope(None, body)
    assert body["error"]["code"] == PERMISSION_DENIED and body["id"] == 3


def test_rate_limited_is_429_retry_after(app: Flask) -> None:
    response = read(app, "policy://limited")
    assert response.status_code == 429
    assert response.headers["Retry-After"] == "3"
    assert response.get_json()["error"]["data"] == {"retryAfter": 2.5}


def test_mapping_without_auth(server: MCP, make_app: t.Callable[..., Flask]) -> None:
    """The statuses do not depend on a backend being configured."""
    app = make_app(server, MCP_STATELESS=True)
    message = {"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": "policy://denied"}}
    response = app.test_client().post("/mcp", json=message, headers=headers())
    assert response.status_code == 403
    assert response.headers["WWW-Authenticate"] == 'Bearer error="insufficient_scope", scope="admin write"'


# -- sessions bound to their principal ----------------------------------------------------


def test_another_principal_gets_the_unknown_session_404(app: Flask) -> None:
    """POST, GET and DELETE with alice's session id and bob's token: the very 404 of an unknown id."""
    alice = start(app, "alice-token")
    client = app.test_client()
    for method in ("POST", "GET", "DELETE"):
        stolen = client.open("/mcp", method=method, json=PING, headers=headers("bob-token", alice))
        unknown = client.open("/mcp", method=method, json=PING, headers=headers("bob-token", "no-such-session"))
        assert stolen.status_code == unknown.status_code == 404, method
        assert stolen.get_data() == unknown.get_data()
    # Still alive for its owner, who alone may end it.
    assert client.post("/mcp", json=PING, headers=headers("alice-token", alice)).status_code == 200
    assert client.delete("/mcp", headers=headers("alice-token", alice)).status_code == 204
    assert client.post("/mcp", json=PING, headers=headers("alice-token", alice)).status_code == 404


def test_second_initialize_is_refused_only_for_the_owner(app: Flask) -> None:
    alice = start(app, "alice-token")
    client = app.test_client()
    again = client.post("/mcp", json=init_message(), headers=headers("alice-token", alice))
    assert again.status_code == 400 and "already initialized" in again.get_json()["error"]["message"]
    # Bob cannot tell alice's id is live: for him it is a client-chosen id, ignored.
    fresh = client.post("/mcp", json=init_message(), headers=headers("bob-token", alice))
    assert fresh.status_code == 200 and fresh.headers["Mcp-Session-Id"] not in (alice, None)


def test_sessions_per_principal_cap_evicts_the_oldest(server: MCP, make_app: t.Callable[..., Flask]) -> None:
    app = make_app(server, MCP_AUTH_TOKENS=TOKENS, MCP_SESSIONS_PER_PRINCIPAL=2)
    clock = [1000.0]
    app.extensions["mcp"].sessions.clock = lambda: clock[0]
    ids = []
    for _ in range(3):
        ids.append(start(app, "alice-token"))
        clock[0] += 1
    bob = start(app, "bob-token")
    client = app.test_client()
    alive = [client.post("/mcp", json=PING, headers=headers("alice-token", s)).status_code for s in ids]
    assert alive == [404, 200, 200]
    assert client.post("/mcp", json=PING, headers=headers("bob-token", bob)).status_code == 200


def test_session_max_age(server: MCP, make_app: t.Callable[..., Flask]) -> None:
    """A session in constant use still ends MCP_SESSION_MAX_AGE seconds after it began."""
    app = make_app(server, MCP_AUTH_TOKENS=TOKENS, MCP_SESSION_MAX_AGE=100, MCP_SESSION_TTL=60)
    clock = [5000.0]
    app.extensions["mcp"].sessions.clock = lambda: clock[0]
    session = start(app, "alice-token")
    client = app.test_client()
    for _ in range(3):
        clock[0] += 30
        assert client.post("/mcp", json=PING, headers=headers("alice-token", session)).status_code == 200
    clock[0] += 11  # 101 seconds old
    response = client.post("/mcp", json=PING, headers=headers("alice-token", session))
    assert response.status_code == 404


# -- the REST adapter ------------------------------------------------------------------------


def test_rest_requires_the_token(app: Flask) -> None:
    client = app.test_client()
    refused = client.post("/mcp/rest/tools/whoami")
    assert refused.status_code == 401 and "error" in refused.get_json()
    assert refused.headers["WWW-Authenticate"] == f'Bearer scope="read", resource_metadata="{PRM}"'
    assert client.post("/mcp/rest/tools/nope").status_code == 401  # not even which tools exist
    assert client.post("/mcp/rest/tools/whoami", headers=headers("bad")).status_code == 401
    ok = client.post("/mcp/rest/tools/whoami", json={}, headers=headers("bob-token"))
    assert ok.status_code == 200 and ok.get_json() == {"result": "bob"}
    # The document needs the token too by default (the docs page asks to sign in), a bad one refused.
    assert client.get("/mcp/rest/openapi.json").status_code == 401
    assert client.get("/mcp/rest/openapi.json", headers=headers("bad")).status_code == 401
    assert client.get("/mcp/rest/openapi.json", headers=headers("bob-token")).status_code == 200


def test_rest_openapi_can_need_the_token(server: MCP, make_app: t.Callable[..., Flask]) -> None:
    app = make_app(server, MCP_AUTH_TOKENS=TOKENS, MCP_AUTH_OPENAPI=True)
    assert app.test_client().get("/mcp/rest/openapi.json").status_code == 401
    assert app.test_client().get("/mcp/rest/openapi.json", headers=headers("bob-token")).status_code == 200
    assert app.test_client().post("/mcp/rest/tools/whoami").status_code == 401


@pytest.mark.parametrize(("uri", "status"), [("policy://denied", 403), ("policy://limited", 429)])
def test_rest_maps_policy_errors(app: Flask, uri: str, status: int) -> None:
    response = app.test_client().get("/mcp/rest/resources", query_string={"uri": uri}, headers=headers("bob-token"))
    assert response.status_code == status and "error" in response.get_json()
    if status == 403:
        assert 'error="insufficient_scope", scope="admin write"' in response.headers["WWW-Authenticate"]
    else:
        assert response.headers["Retry-After"] == "3"


# -- the official SDK client --------------------------------------------------------------------


@pytest.mark.anyio
async def test_sdk_client_with_bearer_token(app: Flask, live_server: t.Any) -> None:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    from mcp.shared.exceptions import MCPError

    with live_server(app) as live:
        url = live.url + "/mcp"
        async with (
            create_mcp_http_client(headers={"Authorization": "Bearer alice-token"}) as http,
            Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
        ):
            result = await client.call_tool("whoami", {})
            assert [block.text for block in result.content] == ["alice"]
        with pytest.raises(ExceptionGroup) as refused:
            async with Client(url, mode="legacy") as client:
                await client.call_tool("whoami", {})
        assert refused.group_contains(MCPError, match="Unauthorized", depth=2)


@pytest.mark.parametrize(
    ("config", "hint"),
    [
        ({"MCP_AUTH_TOKENS": {"t": "ada"}}, "send the access token in an 'Authorization: Bearer <token>' header"),
        (
            {"MCP_AUTH_TOKENS": {"t": "ada"}, "MCP_AUTH_API_KEY_HEADER": "X-API-Key"},
            "'Authorization: Bearer <token>' header, or the key in a 'X-API-Key' header",
        ),
    ],
)
def test_the_401_says_how_to_authenticate(make_app: t.Any, config: dict[str, t.Any], hint: str) -> None:
    """A newcomer reading the error learns which header to send."""
    server = MCP(name="guarded")

    @server.tool(permissions=[])
    def hello() -> str:
        return "hello"

    response = (
        make_app(server, **config)
        .test_client()
        .post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers={"Accept": "application/json"})
    )
    assert response.status_code == 401
    assert hint in response.get_json()["error"]["message"]
