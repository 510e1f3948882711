"""The REST docs page of a protected app loads and offers Authorize; its document shows each reader what it may list."""

from __future__ import annotations

import io
import json
import typing as t
from pathlib import Path

import pytest
from flask import Flask
from openapi_spec_validator import validate
from werkzeug.test import EnvironBuilder

from flask_mcp import MCP, Authenticated, ScopeRequired
from flask_mcp.auth import JWTBackend
from flask_mcp.transport.cgi import handle_cgi
from flask_mcp.transport.openapi_access import oauth_schemes
from tests.oauth.conftest import build_app

TOKENS = {
    "reader": {"subject": "ada", "scopes": ["orders:read"]},
    "admin": {"subject": "grace", "scopes": ["orders:read", "orders:admin"]},
}
BEARER = {"bearerAuth": {"type": "http", "scheme": "bearer"}}
DOCUMENT = "/mcp/rest/openapi.json"


def register(mcp: MCP) -> None:
    @mcp.tool(permissions=[])
    def ping() -> str:
        return "pong"

    @mcp.tool(permissions=[Authenticated])
    def whoami() -> str:
        return "someone"

    @mcp.tool(permissions=[ScopeRequired("orders:read")])
    def orders() -> list[int]:
        return [1, 2]

    @mcp.tool(permissions=[ScopeRequired("orders:admin")])
    def purge() -> str:
        return "purged"


def tools_in(document: dict[str, t.Any]) -> set[str]:
    return {path.rsplit("/", 1)[-1] for path in document["paths"] if path.startswith("/mcp/rest/tools/")}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_a_protected_apps_document_needs_a_credential_by_default(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    """Tool names, descriptions and schemas are what tools/list gives only after authentication."""
    register(mcp)
    client = make_app(mcp, MCP_STATELESS=True, MCP_AUTH_TOKENS=TOKENS).test_client()
    assert client.get("/mcp/rest/docs").status_code == 200  # the page holds no data
    refused = client.get(DOCUMENT)
    assert refused.status_code == 401 and refused.headers["WWW-Authenticate"].startswith("Bearer ")
    assert "ping" not in refused.get_data(as_text=True)
    assert tools_in(client.get(DOCUMENT, headers=bearer("reader")).get_json()) == {"ping", "whoami", "orders", "purge"}


def test_a_protected_app_may_publish_its_document(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    register(mcp)
    client = make_app(mcp, MCP_STATELESS=True, MCP_AUTH_TOKENS=TOKENS, MCP_AUTH_OPENAPI=False).test_client()
    assert client.get("/mcp/rest/docs").status_code == 200
    response = client.get(DOCUMENT)
    assert response.status_code == 200
    document = response.get_json()
    validate(document)
    # Authorize has something to offer, and every operation says it needs it.
    assert document["components"]["securitySchemes"] == BEARER
    assert tools_in(document) == {"ping", "whoami", "orders", "purge"}
    assert document["paths"]["/mcp/rest/tools/orders"]["post"]["security"] == [{"bearerAuth": ["orders:read"]}]
    # The tools themselves still need the token.
    for name in ("ping", "orders"):
        refused = client.post(f"/mcp/rest/tools/{name}", json={})
        assert refused.status_code == 401
        assert refused.headers["WWW-Authenticate"].startswith("Bearer ")
    assert client.post("/mcp/rest/tools/orders", json={}, headers=bearer("reader")).get_json() == {"result": [1, 2]}
    assert client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).status_code == 401


def test_mcp_auth_openapi_makes_the_document_need_a_token(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    register(mcp)
    client = make_app(mcp, MCP_STATELESS=True, MCP_AUTH_TOKENS=TOKENS, MCP_AUTH_OPENAPI=True).test_client()
    refused = client.get(DOCUMENT)
    assert refused.status_code == 401 and "WWW-Authenticate" in refused.headers
    assert client.get("/mcp/rest/docs").status_code == 200  # the page never holds data
    assert client.get(DOCUMENT, headers=bearer("reader")).get_json()["components"]["securitySchemes"] == BEARER


@pytest.mark.parametrize("auth_openapi", [False, True])
def test_a_refused_credential_is_refused_for_the_document_too(
    mcp: MCP, make_app: t.Callable[..., Flask], auth_openapi: bool
) -> None:
    register(mcp)
    client = make_app(mcp, MCP_STATELESS=True, MCP_AUTH_TOKENS=TOKENS, MCP_AUTH_OPENAPI=auth_openapi).test_client()
    response = client.get(DOCUMENT, headers=bearer("forged"))
    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["WWW-Authenticate"]


@pytest.fixture
def filtered(mcp: MCP, make_app: t.Callable[..., Flask]) -> Flask:
    """Listings filtered by permissions: what each caller may use is all it is shown."""
    register(mcp)

    @mcp.resource("orders://latest", permissions=[ScopeRequired("orders:read")])
    def latest() -> str:
        return "order 2"

    return make_app(
        mcp, MCP_STATELESS=True, MCP_AUTH_TOKENS=TOKENS, MCP_FILTER_LISTINGS_BY_PERMISSIONS=True, MCP_AUTH_OPENAPI=False
    )


def test_the_anonymous_document_shows_only_what_an_anonymous_caller_may_list(filtered: Flask) -> None:
    client = filtered.test_client()
    document = client.get(DOCUMENT).get_json()
    validate(document)
    assert tools_in(document) == {"ping"}
    assert "/mcp/rest/resources" not in document["paths"]
    assert "purge" not in client.get(DOCUMENT).get_data(as_text=True)  # not a schema, not a word
    assert document["components"]["securitySchemes"] == BEARER


@pytest.mark.parametrize(
    ("token", "expected"),
    [("reader", {"ping", "whoami", "orders"}), ("admin", {"ping", "whoami", "orders", "purge"})],
)
def test_with_a_token_the_document_is_that_callers_listing(filtered: Flask, token: str, expected: set[str]) -> None:
    client = filtered.test_client()
    document = client.get(DOCUMENT, headers=bearer(token)).get_json()
    assert tools_in(document) == expected
    assert "/mcp/rest/resources" in document["paths"]
    # The same as the caller's tools/list.
    listed = client.post(
        "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={
            **bearer(token),
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-11-25",
        },
    ).get_json()
    assert {tool["name"] for tool in listed["result"]["tools"]} == expected
    # And the anonymous document is unchanged by the views built meanwhile.
    assert tools_in(client.get(DOCUMENT).get_json()) == {"ping"}


def test_a_tool_registered_later_shows_in_each_view(filtered: Flask, mcp: MCP) -> None:
    client = filtered.test_client()
    assert tools_in(client.get(DOCUMENT).get_json()) == {"ping"}
    mcp.tool(name="pong", permissions=[])(lambda: "ping")
    mcp.tool(name="secret", permissions=[ScopeRequired("orders:admin")])(lambda: "s")
    assert tools_in(client.get(DOCUMENT).get_json()) == {"ping", "pong"}
    assert {"pong", "secret"} <= tools_in(client.get(DOCUMENT, headers=bearer("admin")).get_json())


def cgi_get(app: Flask, headers: dict[str, str] | None = None) -> tuple[int, t.Any]:
    environ = EnvironBuilder(path="/openapi.json", headers=headers).get_environ()
    response = handle_cgi(app, environ, io.BytesIO())
    return response.status, json.loads(response.body)


def test_the_cgi_document_follows_the_same_rule(filtered: Flask) -> None:
    status, document = cgi_get(filtered)
    assert status == 200
    assert {path.rsplit("/", 1)[-1] for path in document["paths"]} == {"ping"}
    status, document = cgi_get(filtered, bearer("admin"))
    assert {path.rsplit("/", 1)[-1] for path in document["paths"]} == {"ping", "whoami", "orders", "purge"}
    assert cgi_get(filtered, bearer("forged"))[0] == 401


def test_the_apps_own_authorization_server_gives_the_oauth_flows(tmp_path: Path) -> None:
    app = build_app(tmp_path, MCP_AUTH_OPENAPI=False)  # the schemes are read here without signing in
    client = app.test_client()
    document = client.get(DOCUMENT).get_json()
    validate(document)
    schemes = document["components"]["securitySchemes"]
    assert schemes["bearerAuth"] == {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}
    flows = schemes["oauth2"]["flows"]
    assert flows["authorizationCode"] == {
        "authorizationUrl": "http://localhost/oauth/authorize",
        "tokenUrl": "http://localhost/oauth/token",
        "refreshUrl": "http://localhost/oauth/token",
        "scopes": {"notes:read": "", "notes:write": ""},
    }
    assert flows["clientCredentials"]["tokenUrl"] == "http://localhost/oauth/token"
    # What the server's own metadata says, and the scopes each tool needs.
    metadata = client.get("/.well-known/oauth-authorization-server").get_json()
    assert flows["authorizationCode"]["authorizationUrl"] == metadata["authorization_endpoint"]
    write = document["paths"]["/mcp/rest/tools/write_note"]["post"]["security"]
    assert {"oauth2": ["notes:write"]} in write and {"bearerAuth": ["notes:write"]} in write
    assert client.post("/mcp/rest/tools/whoami", json={}).status_code == 401


def test_external_authorization_servers_are_discovered(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    mcp.tool(name="ping", permissions=[])(lambda: "pong")
    mcp.auth = JWTBackend(issuer="https://id.example", secret="x" * 32, audience="https://api.example/mcp")
    app = make_app(
        mcp,
        MCP_STATELESS=True,
        MCP_AUTH_RESOURCE="https://api.example/mcp",
        MCP_AUTH_AUTHORIZATION_SERVERS=["https://id.example/tenant/", "https://login.example"],
        MCP_AUTH_OPENAPI=False,
    )
    client = app.test_client()
    document = client.get(DOCUMENT).get_json()
    validate(document)
    schemes = document["components"]["securitySchemes"]
    assert schemes["openIdConnect"] == {
        "type": "openIdConnect",
        "openIdConnectUrl": "https://id.example/tenant/.well-known/openid-configuration",
    }
    assert schemes["openIdConnect2"]["openIdConnectUrl"] == "https://login.example/.well-known/openid-configuration"
    # The page may fetch the discovery documents (and token endpoints) there, and nowhere else.
    policy = dict(
        directive.split(" ", 1)
        for directive in client.get("/mcp/rest/docs").headers["Content-Security-Policy"].split("; ")
    )
    assert policy["connect-src"] == "'self' https://id.example https://login.example"


def test_no_oauth_scheme_without_a_server() -> None:
    assert oauth_schemes(None, ()) == {}
    only_refresh = {"grant_types_supported": ["refresh_token"], "token_endpoint": "https://a/token"}
    assert oauth_schemes(only_refresh, ()) == {}


def test_the_page_comes_back_from_oauth_to_the_apps_redirect_page(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    register(mcp)
    client = make_app(
        mcp, MCP_STATELESS=True, MCP_AUTH_TOKENS=TOKENS, MCP_SWAGGER_UI_URL="https://cdn.example/ui"
    ).test_client()
    html = client.get("/mcp/rest/docs").get_data(as_text=True)
    # Even with the assets on a CDN: the redirect page must share the docs page's origin.
    assert 'data-oauth2-redirect-url="/mcp/rest/docs/swagger-ui/oauth2-redirect.html"' in html
    for name in ("oauth2-redirect.html", "oauth2-redirect.js"):
        assert client.get(f"/mcp/rest/docs/swagger-ui/{name}").status_code == 200
    initialiser = client.get("/mcp/rest/docs/swagger-initializer.js").get_data(as_text=True)
    assert "usePkceWithAuthorizationCodeGrant: true" in initialiser
    assert "data-oauth2-redirect-url" in initialiser
