"""The access tokens on the resource side: every bearer surface takes them, nothing else passes."""

from __future__ import annotations

import time
from pathlib import Path

import jwt
import pytest
from flask import Flask
from joserfc import jwt as jose_jwt
from joserfc.jwk import KeySet, RSAKey

from flask_mcp.auth import LocalAuthError, local_principal
from tests.oauth.conftest import ISSUER, RESOURCE, Flow, build_app, call_tool

MODERN = "2026-07-28"


def _modern_call(app: Flask, token: str, name: str) -> object:
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
    }
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": name,
            "arguments": {},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    return app.test_client().post("/mcp", json=body, headers=headers)


def test_the_endpoint_takes_the_token_in_both_eras(app: Flask) -> None:
    token = Flow(app).tokens("alice")["access_token"]
    legacy = call_tool(app, token, "whoami")
    assert legacy.get_json()["result"]["content"][0]["text"] == "alice"
    modern = _modern_call(app, token, "whoami")
    assert modern.status_code == 200, modern.get_data(as_text=True)  # type: ignore[attr-defined]
    assert "alice" in modern.get_data(as_text=True)  # type: ignore[attr-defined]


def test_rest_takes_the_token(app: Flask) -> None:
    token = Flow(app).tokens("alice")["access_token"]
    client = app.test_client()
    answer = client.post("/mcp/rest/tools/whoami", json={}, headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 200 and "alice" in answer.get_data(as_text=True)
    assert client.post("/mcp/rest/tools/whoami", json={}).status_code == 401


def test_the_local_surfaces_take_the_token(app: Flask) -> None:
    token = Flow(app).tokens("alice")["access_token"]
    principal = local_principal(app, token)
    assert principal is not None and principal.subject == "alice" and principal.scopes == {"notes:read"}
    with pytest.raises(LocalAuthError):
        local_principal(app, token[:-4] + "AAAA")


def test_an_expired_token_is_401(app: Flask) -> None:
    flow = Flow(app)
    token = flow.tokens("alice")["access_token"]
    expires = jwt.decode(token, options={"verify_signature": False})["exp"]
    assert expires <= time.time() + 600
    answer = call_tool(app, _forge(app, exp=int(time.time()) - 10), "whoami")
    assert answer.status_code == 401 and "invalid_token" in answer.headers["WWW-Authenticate"]


def _forge(app: Flask, key: KeySet | None = None, **claims: object) -> str:
    """A token signed with the server's own key (or *key*), recorded as issued, with *claims* changed."""
    state = app.extensions["flask_mcp.oauth"]
    payload = {
        "iss": ISSUER,
        "aud": RESOURCE,
        "sub": "alice",
        "scope": "notes:read",
        "jti": "forged-" + str(len(claims)) + str(sorted(claims)),
        "iat": int(time.time()),
        "exp": int(time.time()) + 60,
        **claims,
    }
    state.store.save_access_token(str(payload["jti"]), None, "c", "alice", time.time() + 60)
    return jose_jwt.encode({"alg": "RS256", "typ": "at+jwt"}, payload, key or state.keys.signing_key())


@pytest.mark.parametrize(
    "claims",
    [
        {"aud": "https://other.example/mcp"},
        {"aud": [RESOURCE + "/"]},
        {"iss": "https://other.example"},
    ],
)
def test_a_token_for_another_resource_or_issuer_is_401(app: Flask, claims: dict[str, object]) -> None:
    assert call_tool(app, _forge(app), "whoami").status_code == 200
    assert call_tool(app, _forge(app, **claims), "whoami").status_code == 401


def test_a_token_signed_with_another_key_is_401(app: Flask) -> None:
    stranger = KeySet([RSAKey.generate_key(2048, private=True, auto_kid=True)])
    assert call_tool(app, _forge(app, stranger), "whoami").status_code == 401


def test_a_token_never_issued_here_is_401(app: Flask) -> None:
    token = _forge(app, jti="unknown")
    state = app.extensions["flask_mcp.oauth"]
    with state.store.session() as session:
        from flask_mcp.oauth.models import AccessTokenRecord

        session.query(AccessTokenRecord).filter_by(jti="unknown").delete()
    assert call_tool(app, token, "whoami").status_code == 401


def test_rotated_keys_still_verify_older_tokens(app: Flask) -> None:
    flow = Flow(app)
    old = flow.tokens("alice")["access_token"]
    state = app.extensions["flask_mcp.oauth"]
    new_kid = state.keys.rotate()
    fresh = flow.refresh(flow.tokens("alice")["refresh_token"]).get_json()["access_token"]
    assert jwt.get_unverified_header(fresh)["kid"] == new_kid != jwt.get_unverified_header(old)["kid"]
    assert len(app.test_client().get("/oauth/jwks.json").get_json()["keys"]) == 2
    assert call_tool(app, old, "whoami").status_code == 200 and call_tool(app, fresh, "whoami").status_code == 200


def test_generated_keys_survive_a_restart(tmp_path: Path) -> None:
    first = build_app(tmp_path)
    token = Flow(first).tokens("alice")["access_token"]
    second = build_app(tmp_path)
    assert call_tool(second, token, "whoami").status_code == 200


def test_keys_from_configuration(tmp_path: Path) -> None:
    key = RSAKey.generate_key(2048, private=True, auto_kid=True)
    app = build_app(tmp_path, MCP_OAUTH_SIGNING_KEYS=[key.as_dict(private=True)])
    token = Flow(app).tokens("alice")["access_token"]
    assert jwt.get_unverified_header(token)["kid"] == key.kid
    assert call_tool(app, token, "whoami").status_code == 200
