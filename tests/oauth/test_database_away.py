"""The authorization server's database away at start: 503 with Retry-After, then service; never a dead worker."""

from __future__ import annotations

import logging
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.conftest import free_port
from tests.oauth.conftest import build_app
from tests.oauth.postgres import PostgresCluster, unavailable_reason

REGISTRATION = {
    "client_name": "Test client",
    "redirect_uris": ["http://127.0.0.1:8765/callback"],
    "grant_types": ["authorization_code", "refresh_token"],
    "token_endpoint_auth_method": "none",
}


def test_an_app_set_up_while_its_database_is_away_answers_503_then_serves(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    port = free_port()  # nothing listens there yet
    with caplog.at_level(logging.WARNING, logger="flask_mcp"):
        app = build_app(tmp_path, MCP_OAUTH_DATABASE_URI=f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres")
    assert "the authorization server's database could not be reached while the app was set up" in caplog.text
    client = app.test_client()
    refused = client.post("/oauth/register", json=REGISTRATION)
    assert refused.status_code == 503 and refused.headers["Retry-After"] == "1"
    assert refused.get_json()["error"] == "temporarily_unavailable"
    # The MCP endpoint checks a token against the database's keys: 503 too, never 500.
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    token = jwt.encode({"sub": "ada"}, key, algorithm="RS256", headers={"kid": "a-key-of-another-process"})
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    call = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=headers)
    assert call.status_code == 503 and call.get_json()["error"]["code"] == -31503
    cluster = PostgresCluster(port)
    try:
        registered = client.post("/oauth/register", json=REGISTRATION)
        assert registered.status_code == 201, registered.get_data(as_text=True)
        assert client.get("/oauth/jwks.json").get_json()["keys"]
    finally:
        cluster.stop()
