"""The authorization code flow with MCP's profile: PKCE S256, resource, single-use codes, rotating refresh tokens."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import jwt
from flask import Flask

from tests.conftest import BOTH_DATABASES
from tests.oauth.conftest import ISSUER, RESOURCE, Flow, call_tool

# Grants, single-use codes and refresh rotation on SQLite and on PostgreSQL.
pytestmark = BOTH_DATABASES


def _query(response: object) -> dict[str, list[str]]:
    return parse_qs(urlsplit(response.headers["Location"]).query)  # type: ignore[attr-defined]


def test_code_flow_issues_a_jwt_for_the_resource(app: Flask) -> None:
    tokens = Flow(app).tokens("alice")
    claims = jwt.decode(tokens["access_token"], options={"verify_signature": False})
    assert claims["aud"] == RESOURCE and claims["iss"] == ISSUER and claims["sub"] == "alice"
    assert claims["scope"] == "notes:read" and tokens["token_type"] == "Bearer"
    assert tokens["expires_in"] == 600 and tokens["refresh_token"]
    assert jwt.get_unverified_header(tokens["access_token"])["typ"] == "at+jwt"


def test_missing_pkce_is_refused_at_the_authorization_request(app: Flask) -> None:
    flow = Flow(app)
    flow.login("alice")
    answer = flow.authorize(code_challenge=None, code_challenge_method=None)
    assert answer.status_code == 302
    query = _query(answer)
    assert query["error"] == ["invalid_request"] and query["iss"] == [ISSUER] and "code" not in query


def test_plain_pkce_is_refused(app: Flask) -> None:
    flow = Flow(app)
    flow.login("alice")
    for method in ("plain", None, "s256"):
        answer = flow.authorize(code_challenge=flow.challenge, code_challenge_method=method)
        assert _query(answer)["error"] == ["invalid_request"], method


def test_a_wrong_verifier_is_refused(app: Flask) -> None:
    flow = Flow(app)
    flow.login("alice")
    answer = flow.exchange(flow.code(), code_verifier="x" * 50)
    assert answer.status_code == 400 and answer.get_json()["error"] == "invalid_grant"
    missing = flow.exchange(flow.code(), code_verifier=None)
    assert missing.status_code == 400 and missing.get_json()["error"] == "invalid_request"


def test_resource_is_required_on_the_authorization_request(app: Flask) -> None:
    flow = Flow(app)
    flow.login("alice")
    assert _query(flow.authorize(resource=None))["error"] == ["invalid_target"]


def test_a_token_for_another_resource_is_refused(app: Flask) -> None:
    flow = Flow(app)
    flow.login("alice")
    for other in ("https://evil.example/mcp", RESOURCE + "/", "http://localhost/mcp2"):
        assert _query(flow.authorize(resource=other))["error"] == ["invalid_target"]
    code = flow.code()
    answer = flow.exchange(code, resource="https://evil.example/mcp")
    assert answer.status_code == 400 and answer.get_json()["error"] == "invalid_target"


def test_a_code_is_used_once_and_its_replay_revokes_what_it_issued(app: Flask) -> None:
    flow = Flow(app)
    flow.login("alice")
    code = flow.code()
    first = flow.exchange(code)
    assert first.status_code == 200
    second = flow.exchange(code)
    assert second.status_code == 400 and second.get_json()["error"] == "invalid_grant"
    # The tokens of the first redemption are revoked: someone else held the code.
    assert call_tool(app, first.get_json()["access_token"], "whoami").status_code == 401
    assert flow.refresh(first.get_json()["refresh_token"]).status_code == 400


def test_an_expired_code_is_refused(app: Flask) -> None:
    flow = Flow(app)
    flow.login("alice")
    code = flow.code()
    store = app.extensions["flask_mcp.oauth"].store
    now = store.clock()
    store.clock = lambda: now + 61
    answer = flow.exchange(code)
    assert answer.status_code == 400 and answer.get_json()["error"] == "invalid_grant"


def test_a_code_is_bound_to_its_redirect_uri_and_client(app: Flask) -> None:
    flow = Flow(app)
    other = Flow(app)
    flow.login("alice")
    code = flow.code()
    assert flow.exchange(code, redirect_uri="http://127.0.0.1:8765/other").status_code == 400
    code = flow.code()
    assert flow.exchange(code, client_id=other.client_id).status_code == 400


def test_refresh_rotates_and_a_replay_revokes_the_family(app: Flask) -> None:
    flow = Flow(app)
    tokens = flow.tokens("alice")
    rotated = flow.refresh(tokens["refresh_token"])
    assert rotated.status_code == 200
    new = rotated.get_json()
    assert new["refresh_token"] != tokens["refresh_token"] and new["scope"] == "notes:read"
    assert call_tool(app, new["access_token"], "whoami").status_code == 200
    store = app.extensions["flask_mcp.oauth"].store
    later = store.clock() + 11  # past MCP_OAUTH_REFRESH_GRACE: no longer the client racing itself
    store.clock = lambda: later
    replay = flow.refresh(tokens["refresh_token"])
    assert replay.status_code == 400 and replay.get_json()["error"] == "invalid_grant"
    # The whole family is gone: the rotated refresh token and the access tokens.
    assert flow.refresh(new["refresh_token"]).status_code == 400
    assert call_tool(app, new["access_token"], "whoami").status_code == 401
    assert call_tool(app, tokens["access_token"], "whoami").status_code == 401


def test_refresh_for_another_resource_or_client_is_refused(app: Flask) -> None:
    flow = Flow(app)
    tokens = flow.tokens("alice")
    assert flow.refresh(tokens["refresh_token"], resource="https://evil.example/mcp").status_code == 400
    other = Flow(app)
    assert flow.refresh(tokens["refresh_token"], client_id=other.client_id).status_code == 400


def test_a_public_client_gets_no_client_credentials(app: Flask) -> None:
    flow = Flow(app)
    answer = flow.client.post("/oauth/token", data={"grant_type": "client_credentials", "client_id": flow.client_id})
    assert answer.status_code in (400, 401) and "access_token" not in answer.get_json()


def test_unknown_scopes_are_refused(app: Flask) -> None:
    flow = Flow(app)
    flow.login("alice")
    assert _query(flow.authorize(scope="notes:read admin"))["error"] == ["invalid_scope"]


def test_the_tables_live_in_the_database_given(app: Flask, database_uri: str) -> None:
    engine = app.extensions["flask_mcp.oauth"].store.engine
    assert engine.dialect.name == database_uri.split(":", 1)[0].split("+", 1)[0]
    assert "mcp_oauth_refresh_token" in __import__("sqlalchemy").inspect(engine).get_table_names()
