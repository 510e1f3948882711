"""Registration (RFC 7591), revocation (RFC 7009), metadata (RFC 8414) and the JWKS."""

from __future__ import annotations

from pathlib import Path

import pytest
from flask import Flask

from tests.oauth.conftest import RESOURCE, Flow, build_app, call_tool

PUBLIC = {"client_name": "c", "redirect_uris": ["http://127.0.0.1:9/cb"], "token_endpoint_auth_method": "none"}


@pytest.mark.parametrize(
    "path",
    ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"],
)
def test_metadata_at_the_urls_clients_try(app: Flask, path: str) -> None:
    answer = app.test_client().get(path)
    document = answer.get_json()
    assert answer.status_code == 200 and answer.headers["Access-Control-Allow-Origin"] == "*"
    assert document["issuer"] == "http://localhost"
    assert document["code_challenge_methods_supported"] == ["S256"]
    assert document["authorization_response_iss_parameter_supported"] is True
    assert document["scopes_supported"] == ["notes:read", "notes:write"]
    assert "none" in document["token_endpoint_auth_methods_supported"]
    for name in (
        "authorization_endpoint",
        "token_endpoint",
        "registration_endpoint",
        "revocation_endpoint",
        "jwks_uri",
    ):
        assert document[name].startswith("http://localhost/oauth/")


def test_an_issuer_with_a_path_is_served_at_every_form(tmp_path: Path) -> None:
    app = build_app(tmp_path, MCP_OAUTH_ISSUER="http://localhost/auth")
    client = app.test_client()
    for path in (
        "/.well-known/oauth-authorization-server/auth",
        "/.well-known/openid-configuration/auth",
        "/auth/.well-known/openid-configuration",
    ):
        assert client.get(path).get_json()["issuer"] == "http://localhost/auth", path


def test_resource_metadata_links_the_authorization_server(app: Flask) -> None:
    document = app.test_client().get("/.well-known/oauth-protected-resource/mcp").get_json()
    assert document["resource"] == RESOURCE and document["authorization_servers"] == ["http://localhost"]
    assert document["scopes_supported"] == ["notes:read", "notes:write"]


def test_scopes_follow_the_tools_permissions(app: Flask) -> None:
    from flask_mcp import ScopeRequired

    mcp = app.extensions["flask_mcp.oauth"].scopes.mcp
    mcp.tool(name="delete_note", permissions=[ScopeRequired("notes:delete")])(lambda: "gone")
    assert (
        "notes:delete"
        in app.test_client().get("/.well-known/oauth-authorization-server").get_json()["scopes_supported"]
    )


def test_jwks_publishes_public_keys_only(app: Flask) -> None:
    keys = app.test_client().get("/oauth/jwks.json").get_json()["keys"]
    assert len(keys) == 1 and keys[0]["kty"] == "RSA" and keys[0]["use"] == "sig" and "d" not in keys[0]


def test_registration_returns_a_public_client_without_secret(app: Flask) -> None:
    answer = app.test_client().post("/oauth/register", json=PUBLIC)
    body = answer.get_json()
    assert answer.status_code == 201 and body["client_id"] and "client_secret" not in body
    assert answer.headers["Cache-Control"] == "no-store"


def test_a_confidential_client_secret_is_kept_as_a_digest(app: Flask) -> None:
    body = (
        app.test_client()
        .post("/oauth/register", json={**PUBLIC, "token_endpoint_auth_method": "client_secret_post"})
        .get_json()
    )
    client = app.extensions["flask_mcp.oauth"].store.client(body["client_id"])
    assert body["client_secret"] not in str(client.secret_hash) and client.check_client_secret(body["client_secret"])


@pytest.mark.parametrize(
    "metadata",
    [
        {**PUBLIC, "redirect_uris": ["http://evil.example/cb"]},
        {**PUBLIC, "redirect_uris": ["javascript:alert(1)"]},
        {**PUBLIC, "redirect_uris": ["https://app.example/cb#x"]},
        {**PUBLIC, "redirect_uris": []},
        {**PUBLIC, "redirect_uris": "https://app.example/cb"},
        {**PUBLIC, "grant_types": ["client_credentials"]},
        {**PUBLIC, "token_endpoint_auth_method": "private_key_jwt"},
        {**PUBLIC, "scope": "admin"},
        {**PUBLIC, "client_name": "x" * 5000},
    ],
)
def test_bad_registrations_are_refused(app: Flask, metadata: dict[str, object]) -> None:
    answer = app.test_client().post("/oauth/register", json=metadata)
    assert answer.status_code == 400 and answer.get_json()["error"].startswith("invalid_")


@pytest.mark.parametrize("body", [b"[]", b"not json", b'"x"', b"{"])
def test_a_registration_that_is_no_json_object_is_a_400(app: Flask, body: bytes) -> None:
    answer = app.test_client().post("/oauth/register", data=body, content_type="application/json")
    assert answer.status_code == 400 and answer.get_json()["error"] == "invalid_client_metadata"


def test_registration_behind_an_initial_access_token(tmp_path: Path) -> None:
    app = build_app(tmp_path, MCP_OAUTH_REGISTRATION_TOKEN="let-me-in")
    client = app.test_client()
    assert client.post("/oauth/register", json=PUBLIC).status_code in (400, 401, 403)
    assert client.post("/oauth/register", json=PUBLIC, headers={"Authorization": "Bearer nope"}).status_code != 201
    assert client.post("/oauth/register", json=PUBLIC, headers={"Authorization": "Bearer let-me-in"}).status_code == 201


def test_registration_is_rate_limited_per_address(tmp_path: Path) -> None:
    app = build_app(tmp_path, MCP_OAUTH_REGISTRATION_RATE_LIMIT="2/hour")
    client = app.test_client()
    here = {"REMOTE_ADDR": "10.0.0.1"}
    assert [client.post("/oauth/register", json=PUBLIC, environ_base=here).status_code for _ in range(3)] == [
        201,
        201,
        429,
    ]
    assert client.post("/oauth/register", json=PUBLIC, environ_base={"REMOTE_ADDR": "10.0.0.2"}).status_code == 201


def test_registration_can_be_turned_off(tmp_path: Path) -> None:
    app = build_app(tmp_path, MCP_OAUTH_REGISTRATION=False)
    assert "registration_endpoint" not in app.test_client().get("/.well-known/oauth-authorization-server").get_json()
    assert app.test_client().post("/oauth/register", json=PUBLIC).status_code >= 400


def test_unused_registrations_expire(tmp_path: Path) -> None:
    app = build_app(tmp_path, MCP_OAUTH_UNUSED_CLIENT_TTL=60)
    store = app.extensions["flask_mcp.oauth"].store
    flow = Flow(app)
    idle = app.test_client().post("/oauth/register", json=PUBLIC).get_json()["client_id"]
    flow.tokens("alice")
    now = store.clock()
    store.clock = lambda: now + 120
    assert app.test_cli_runner().invoke(args=["mcp", "oauth", "prune"]).exit_code == 0
    assert store.client(idle) is None and store.client(flow.client_id) is not None


def test_revoking_an_access_token_makes_the_next_call_401(app: Flask) -> None:
    flow = Flow(app)
    tokens = flow.tokens("alice")
    assert call_tool(app, tokens["access_token"], "whoami").status_code == 200
    answer = flow.client.post("/oauth/revoke", data={"token": tokens["access_token"], "client_id": flow.client_id})
    assert answer.status_code == 200
    assert call_tool(app, tokens["access_token"], "whoami").status_code == 401


def test_revoking_a_refresh_token_revokes_its_family(app: Flask) -> None:
    flow = Flow(app)
    tokens = flow.tokens("alice")
    flow.client.post("/oauth/revoke", data={"token": tokens["refresh_token"], "client_id": flow.client_id})
    assert flow.refresh(tokens["refresh_token"]).status_code == 400
    assert call_tool(app, tokens["access_token"], "whoami").status_code == 401


def test_another_client_cannot_revoke_a_token(app: Flask) -> None:
    flow, other = Flow(app), Flow(app)
    tokens = flow.tokens("alice")
    other.client.post("/oauth/revoke", data={"token": tokens["refresh_token"], "client_id": other.client_id})
    assert flow.refresh(tokens["refresh_token"]).status_code == 200


def test_unknown_tokens_revoke_quietly(app: Flask) -> None:
    flow = Flow(app)
    for token in ("nothing", "a.b.c", "x" * 3000):
        assert flow.client.post("/oauth/revoke", data={"token": token, "client_id": flow.client_id}).status_code == 200
