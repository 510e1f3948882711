"""What the OpenAPI document says about authentication: the backend's schemes and each tool's scopes."""

from __future__ import annotations

import typing as t

import pytest
from flask import Flask
from flask_httpauth import HTTPBasicAuth, HTTPDigestAuth, HTTPTokenAuth
from openapi_spec_validator import validate

from flask_mcp import MCP, Authenticated, ScopeRequired, permission
from flask_mcp.auth import (
    AuthBackend,
    FlaskLoginBackend,
    HTTPAuthBackend,
    JWTBackend,
    StaticTokenBackend,
)
from flask_mcp.policies.principal import Principal
from flask_mcp.transport.openapi import security_schemes

TOKENS = {"s3cr3t": {"subject": "ada", "scopes": ["orders:read", "orders:write"]}}
BEARER = {"bearerAuth": {"type": "http", "scheme": "bearer"}}


def register_tools(mcp: MCP) -> None:
    @mcp.tool(permissions=[ScopeRequired(["orders:read", "orders:write"]), ScopeRequired("orders:read")])
    def refund(order: int) -> str:
        """Refund an order."""
        return f"refunded {order}"

    @mcp.tool(permissions=[])
    def ping() -> str:
        return "pong"

    @mcp.tool(permissions=[Authenticated])
    def whoami() -> str:
        """Who is calling."""
        return "someone"

    @permission(scopes=["orders:admin"])
    def owner_only(context: t.Any) -> bool:
        return True

    @mcp.tool(permissions=[owner_only])
    def purge() -> str:
        return "purged"

    @mcp.resource("notes://welcome", permissions=[])
    def welcome() -> str:
        return "hello"


@pytest.fixture
def document(mcp: MCP, make_app: t.Callable[..., Flask]) -> dict[str, t.Any]:
    register_tools(mcp)
    app = make_app(mcp, MCP_STATELESS=True, MCP_AUTH_TOKENS=TOKENS, MCP_AUTH_OPENAPI=False)
    response = app.test_client().get("/mcp/rest/openapi.json")
    assert response.status_code == 200
    return t.cast(dict[str, t.Any], response.get_json())


def tool(document: dict[str, t.Any], name: str) -> dict[str, t.Any]:
    return t.cast(dict[str, t.Any], document["paths"][f"/mcp/rest/tools/{name}"]["post"])


def test_document_with_security_is_valid_openapi_31(document: dict[str, t.Any]) -> None:
    validate(document)


def test_bearer_scheme_declared(document: dict[str, t.Any]) -> None:
    assert document["components"]["securitySchemes"] == BEARER


def test_each_tool_requires_its_scopes(document: dict[str, t.Any]) -> None:
    # The union of what every permission names, in order, once each.
    assert tool(document, "refund")["security"] == [{"bearerAuth": ["orders:read", "orders:write"]}]
    assert tool(document, "purge")["security"] == [{"bearerAuth": ["orders:admin"]}]
    assert "Requires the scope(s): orders:read, orders:write." in tool(document, "refund")["description"]
    assert tool(document, "refund")["description"].startswith("Refund an order.")


def test_public_and_authenticated_tools_still_need_a_credential(document: dict[str, t.Any]) -> None:
    # With a backend every REST route refuses a request without a credential, whatever the tool's permissions.
    for name in ("ping", "whoami"):
        operation = tool(document, name)
        assert operation["security"] == [{"bearerAuth": []}]
        assert "401" in operation["responses"]
        assert "Requires the scope" not in operation.get("description", "")
    assert tool(document, "whoami")["description"] == "Who is calling."
    assert "description" not in tool(document, "ping")


def test_resource_and_mcp_operations_need_a_credential(document: dict[str, t.Any]) -> None:
    read = document["paths"]["/mcp/rest/resources"]["get"]
    endpoint = document["paths"]["/mcp"]["post"]
    for operation in (read, endpoint):
        assert operation["security"] == [{"bearerAuth": []}]
        assert "401" in operation["responses"]


def test_default_permissions_give_the_scopes(make_app: t.Callable[..., Flask]) -> None:
    mcp = MCP(name="defaults", default_permissions=[ScopeRequired("tools")])
    mcp.tool(name="plain")(lambda: 1)
    mcp.tool(name="open", permissions=[])(lambda: 2)
    app = make_app(mcp, MCP_STATELESS=True, MCP_AUTH_TOKENS=TOKENS, MCP_AUTH_OPENAPI=False)
    document = app.test_client().get("/mcp/rest/openapi.json").get_json()
    assert tool(document, "plain")["security"] == [{"bearerAuth": ["tools"]}]
    assert tool(document, "open")["security"] == [{"bearerAuth": []}]
    validate(document)


def test_api_key_header_is_an_alternative(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    mcp.tool(name="needs", permissions=[ScopeRequired("orders:read")])(lambda: 1)
    app = make_app(
        mcp, MCP_STATELESS=True, MCP_AUTH_TOKENS=TOKENS, MCP_AUTH_API_KEY_HEADER="X-API-Key", MCP_AUTH_OPENAPI=False
    )
    client = app.test_client()
    document = client.get("/mcp/rest/openapi.json").get_json()
    assert document["components"]["securitySchemes"] == {
        **BEARER,
        "apiKeyAuth": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
    }
    # Either one is enough: two requirement objects.
    assert tool(document, "needs")["security"] == [{"bearerAuth": ["orders:read"]}, {"apiKeyAuth": ["orders:read"]}]
    validate(document)
    # And the document says what the server does: the key alone is accepted.
    assert client.post("/mcp/rest/tools/needs", json={}, headers={"X-API-Key": "s3cr3t"}).status_code == 200


def test_the_document_served_with_a_token(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    """MCP_AUTH_OPENAPI protects the document; a token gets the same content."""
    register_tools(mcp)
    app = make_app(mcp, MCP_STATELESS=True, MCP_AUTH_TOKENS=TOKENS, MCP_AUTH_OPENAPI=True)
    client = app.test_client()
    assert client.get("/mcp/rest/openapi.json").status_code == 401
    document = client.get("/mcp/rest/openapi.json", headers={"Authorization": "Bearer s3cr3t"}).get_json()
    assert document["components"]["securitySchemes"] == BEARER


class Custom(AuthBackend):
    scheme = "Token"

    def authenticate(self, request: t.Any) -> Principal | None:
        return None


@pytest.mark.parametrize(
    ("backend", "expected"),
    [
        (StaticTokenBackend({"t": "me"}), BEARER),
        (
            JWTBackend(issuer="https://auth.example", secret="x" * 32, audience="api"),
            {"bearerAuth": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}},
        ),
        (HTTPAuthBackend(HTTPBasicAuth()), {"basicAuth": {"type": "http", "scheme": "basic"}}),
        (HTTPAuthBackend(HTTPDigestAuth()), {"digestAuth": {"type": "http", "scheme": "digest"}}),
        (HTTPAuthBackend(HTTPTokenAuth()), BEARER),
        (
            HTTPAuthBackend(HTTPTokenAuth(header="X-Token")),
            {"apiKeyAuth": {"type": "apiKey", "in": "header", "name": "X-Token"}},
        ),
        (FlaskLoginBackend(), {"cookieAuth": {"type": "apiKey", "in": "cookie", "name": "my_session"}}),
        (Custom(), {"tokenAuth": {"type": "http", "scheme": "token"}}),
    ],
    ids=["static", "jwt", "basic", "digest", "httpauth-token", "httpauth-header", "flask-login", "custom"],
)
def test_schemes_of_each_backend(backend: AuthBackend, expected: dict[str, t.Any]) -> None:
    assert security_schemes(backend, cookie_name="my_session") == expected


def test_flask_login_cookie_name_from_the_app(make_app: t.Callable[..., Flask]) -> None:
    mcp = MCP(name="cookies", auth=FlaskLoginBackend())
    mcp.tool(name="mine", permissions=[ScopeRequired("own")])(lambda: 1)
    app = make_app(mcp, MCP_STATELESS=True, MCP_AUTH_OPENAPI=False, SESSION_COOKIE_NAME="shop_session")
    document = app.test_client().get("/mcp/rest/openapi.json").get_json()
    assert document["components"]["securitySchemes"] == {
        "cookieAuth": {"type": "apiKey", "in": "cookie", "name": "shop_session"}
    }
    assert tool(document, "mine")["security"] == [{"cookieAuth": ["own"]}]
    validate(document)
