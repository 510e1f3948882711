"""Clients that act for themselves (``client_credentials``): only the operator makes them, within their scopes."""

from __future__ import annotations

import re
import secrets
import typing as t

import jwt
import pytest
from flask import Flask

from flask_mcp.oauth.models import digest
from tests.conftest import BOTH_DATABASES
from tests.oauth.conftest import RESOURCE, Flow, call_tool

pytestmark = BOTH_DATABASES


def add_client(app: Flask, *args: str) -> dict[str, str]:
    """``flask mcp oauth add-client ARGS``: the printed ``client_id`` and ``client_secret``."""
    result = app.test_cli_runner().invoke(args=["mcp", "oauth", "add-client", *args])
    assert result.exit_code == 0, result.output
    lines = dict(line.split(": ", 1) for line in result.output.strip().splitlines())
    assert set(lines) == {"client_id", "client_secret"}, result.output
    return lines


def credentials(app: Flask, client: dict[str, str], **extra: str) -> t.Any:
    data = {"grant_type": "client_credentials", "resource": RESOURCE, **extra}
    return app.test_client().post("/oauth/token", data=data, auth=(client["client_id"], client["client_secret"]))


def principal_of(app: Flask, token: str) -> t.Any:
    with app.test_request_context(headers={"Authorization": f"Bearer {token}"}):
        from flask import request

        return app.extensions["flask_mcp.oauth"].scopes.mcp.auth.authenticate(request)


def test_a_stranger_cannot_register_for_client_credentials(app: Flask) -> None:
    for method in ("client_secret_basic", "client_secret_post", "none"):
        answer = app.test_client().post(
            "/oauth/register",
            json={"client_name": "robot", "grant_types": ["client_credentials"], "token_endpoint_auth_method": method},
        )
        assert answer.status_code == 400, method
        body = answer.get_json()
        assert body["error"] == "invalid_client_metadata" and "operator" in body["error_description"]
    assert app.extensions["flask_mcp.oauth"].store.row_counts()["mcp_oauth_client"] == 1  # the docs page's own


def test_a_registered_client_gets_no_client_credentials_token(app: Flask) -> None:
    """A client that registered itself (kept from before, say) is refused at the token endpoint too."""
    store = app.extensions["flask_mcp.oauth"].store
    metadata = {"grant_types": ["client_credentials"], "token_endpoint_auth_method": "client_secret_basic"}
    store.add_client("stranger", "s3cret", metadata)
    answer = credentials(app, {"client_id": "stranger", "client_secret": "s3cret"}, scope="notes:read notes:write")
    assert answer.status_code == 400 and answer.get_json()["error"] == "unauthorized_client"
    assert "access_token" not in answer.get_json()


def test_add_client_prints_the_secret_once_and_keeps_a_digest(app: Flask) -> None:
    made = add_client(app, "nightly report", "--scope", "notes:read")
    stored = app.extensions["flask_mcp.oauth"].store.client(made["client_id"])
    assert stored is not None and stored.operator_made and stored.client_name == "nightly report"
    assert stored.secret_hash == digest(made["client_secret"]) and made["client_secret"] not in str(
        stored.client_metadata
    )
    assert stored.scopes == ["notes:read"] and stored.client_metadata["grant_types"] == ["client_credentials"]


def test_add_client_refuses_unknown_scopes_and_bad_redirects(app: Flask) -> None:
    runner = app.test_cli_runner()
    unknown = runner.invoke(args=["mcp", "oauth", "add-client", "robot", "--scope", "admin"])
    assert unknown.exit_code != 0 and "admin" in unknown.output
    code = runner.invoke(
        args=["mcp", "oauth", "add-client", "web", "--scope", "notes:read", "--grant", "authorization_code"]
    )
    assert code.exit_code != 0 and "--redirect-uri" in code.output
    bad = ["--grant", "authorization_code", "--redirect-uri", "http://evil.example/cb"]
    assert runner.invoke(args=["mcp", "oauth", "add-client", "web", "--scope", "notes:read", *bad]).exit_code != 0
    assert app.extensions["flask_mcp.oauth"].store.row_counts()["mcp_oauth_client"] == 1  # the docs page's own


def test_an_operator_client_gets_at_most_its_scopes(app: Flask) -> None:
    made = add_client(app, "reader", "--scope", "notes:read")
    wider = credentials(app, made, scope="notes:read notes:write")
    assert wider.status_code == 400 and wider.get_json()["error"] == "invalid_scope"
    assert "notes:read" in wider.get_json()["error_description"]
    default = credentials(app, made)
    assert default.status_code == 200, default.get_data(as_text=True)
    token = default.get_json()
    assert token["scope"] == "notes:read" and "refresh_token" not in token
    assert call_tool(app, token["access_token"], "write_note", {"text": "x"}).status_code == 403
    assert call_tool(app, token["access_token"], "whoami").status_code == 200


def test_a_wrong_secret_is_refused(app: Flask) -> None:
    made = add_client(app, "reader", "--scope", "notes:read")
    answer = credentials(app, {**made, "client_secret": "nope"})
    assert answer.status_code == 401 and answer.get_json()["error"] == "invalid_client"


def test_the_machine_principal_is_the_client_not_a_user(app: Flask) -> None:
    made = add_client(app, "reader", "--scope", "notes:read")
    token = credentials(app, made).get_json()["access_token"]
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["sub"] == made["client_id"] and claims["aud"] == RESOURCE
    principal = principal_of(app, token)
    assert principal is not None and principal.machine and principal.subject == made["client_id"]
    answer = call_tool(app, token, "whoami").get_json()
    assert answer["result"]["content"][0]["text"] == made["client_id"]
    user = principal_of(app, Flow(app).tokens("alice")["access_token"])
    assert user is not None and not user.machine and user.subject == "alice"


def test_a_clients_id_is_taken_as_the_commands_argument(app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    """Randomness that starts an id with "-" would make it an option to remove-client: ids are hex."""
    monkeypatch.setattr(secrets, "token_urlsafe", lambda size=None: "-f" + "x" * 30)  # the worst draw
    made = add_client(app, "reader", "--scope", "notes:read")
    assert re.fullmatch(r"[0-9a-f]{48}", made["client_id"])
    result = app.test_cli_runner().invoke(args=["mcp", "oauth", "remove-client", made["client_id"]])
    assert result.exit_code == 0, result.output


def test_removing_a_client_revokes_its_tokens(app: Flask) -> None:
    made = add_client(app, "reader", "--scope", "notes:read")
    token = credentials(app, made).get_json()["access_token"]
    assert call_tool(app, token, "whoami").status_code == 200
    result = app.test_cli_runner().invoke(args=["mcp", "oauth", "remove-client", made["client_id"]])
    assert result.exit_code == 0, result.output
    assert call_tool(app, token, "whoami").status_code == 401
    assert credentials(app, made).status_code == 401
    again = app.test_cli_runner().invoke(args=["mcp", "oauth", "remove-client", made["client_id"]])
    assert again.exit_code != 0 and "no client" in again.output


def test_the_commands_are_on_the_apps_with_an_authorization_server_only(app: Flask) -> None:
    from flask_mcp import MCP

    def listed(flask_app: Flask) -> list[str]:
        output = flask_app.test_cli_runner().invoke(args=["mcp", "--help"]).output
        return [line.split()[0] for line in output.split("Commands:")[1].splitlines() if line.strip()]

    assert "oauth" in listed(app)
    plain = Flask("plain")
    MCP(name="plain").init_app(plain)
    assert "oauth" not in listed(plain) and "list" in listed(plain)
    result = plain.test_cli_runner().invoke(args=["mcp", "oauth", "prune"])
    assert result.exit_code != 0 and "No such command 'oauth'" in result.output
