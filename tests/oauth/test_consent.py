"""The authorization endpoint's pages: sign-in redirect, consent and its CSRF token, remembered consents."""

from __future__ import annotations

import typing as t
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from flask import Flask

from tests.conftest import BOTH_DATABASES
from tests.oauth.conftest import Flow, build_app, call_tool, csrf_of

# Remembered consents (one row per user and client) and connections on SQLite and on PostgreSQL.
pytestmark = BOTH_DATABASES


def test_an_anonymous_user_is_sent_to_the_login_view_and_comes_back(app: Flask) -> None:
    flow = Flow(app)
    answer = flow.authorize()
    assert answer.status_code == 302
    login = urlsplit(answer.headers["Location"])
    assert login.path == "/login"
    next_url = parse_qs(login.query)["next"][0]
    assert next_url.startswith("/oauth/authorize?") and "client_id=" in next_url
    back = flow.browser.post(f"/login?{urlencode({'next': next_url})}", data={"username": "alice"})
    assert back.headers["Location"] == next_url
    page = flow.browser.get(next_url)
    assert page.status_code == 200 and "Test client" in page.get_data(as_text=True)


def test_the_consent_page_shows_client_host_and_scopes(app: Flask) -> None:
    flow = Flow(app)
    flow.login("alice")
    html = flow.authorize(scope="notes:read notes:write").get_data(as_text=True)
    assert "Test client" in html and "127.0.0.1:8765" in html
    assert "Read your notes" in html and "Write notes for you" in html
    headers = flow.authorize().headers
    assert headers["X-Frame-Options"] == "DENY" and headers["Cache-Control"] == "no-store"


def test_consent_without_its_csrf_token_is_refused(app: Flask) -> None:
    flow = Flow(app)
    flow.login("alice")
    query = urlencode(flow.authorize_params())
    for data in ({"decision": "approve"}, {"decision": "approve", "csrf_token": "forged"}):
        answer = flow.browser.post("/oauth/authorize?" + query, data=data)
        assert answer.status_code == 400 and "Location" not in answer.headers


def test_a_csrf_token_is_bound_to_the_session_the_user_and_the_request(app: Flask) -> None:
    flow = Flow(app)
    flow.login("alice")
    query = urlencode(flow.authorize_params())
    token = csrf_of(flow.browser.get("/oauth/authorize?" + query).get_data(as_text=True))
    # Another browser (another session) signed in as alice cannot use it.
    other = app.test_client()
    other.post("/login", data={"username": "alice"})
    assert other.post("/oauth/authorize?" + query, data={"csrf_token": token, "decision": "approve"}).status_code == 400
    # Nor can it approve another request (other scopes, other redirect).
    wider = urlencode(flow.authorize_params(scope="notes:read notes:write"))
    answer = flow.browser.post("/oauth/authorize?" + wider, data={"csrf_token": token, "decision": "approve"})
    assert answer.status_code == 400
    # Nor another user in the same browser.
    flow.login("bob")
    assert (
        flow.browser.post("/oauth/authorize?" + query, data={"csrf_token": token, "decision": "approve"}).status_code
        == 400
    )


def test_deny_sends_access_denied_with_the_issuer(app: Flask) -> None:
    flow = Flow(app)
    flow.login("alice")
    answer = flow.approve(decision="deny")
    query = parse_qs(urlsplit(answer.headers["Location"]).query)
    assert query["error"] == ["access_denied"] and query["state"] == ["st4te"] and query["iss"] == ["http://localhost"]


def test_remembered_consent_skips_the_page_until_it_grows(app: Flask) -> None:
    flow = Flow(app)
    flow.login("alice")
    flow.code()
    again = flow.authorize()
    assert again.status_code == 302 and "code=" in again.headers["Location"]
    # More scopes than approved: the page again (incremental consent).
    assert flow.authorize(scope="notes:read notes:write").status_code == 200


def test_a_user_is_never_granted_a_scope_they_may_not_have(app: Flask) -> None:
    flow = Flow(app)
    flow.login("bob")
    html = flow.authorize(scope="notes:read notes:write").get_data(as_text=True)
    assert "Not available to your account" in html
    tokens = flow.exchange(flow.code(scope="notes:read notes:write")).get_json()
    assert tokens["scope"] == "notes:read"
    denied = flow.authorize(scope="notes:write")
    assert parse_qs(urlsplit(denied.headers["Location"]).query)["error"] == ["access_denied"]


def test_incremental_consent_grants_alice_the_wider_scope(app: Flask) -> None:
    flow = Flow(app)
    first = flow.tokens("alice")
    assert call_tool(app, first["access_token"], "write_note", {"text": "x"}).status_code == 403
    wider = flow.exchange(flow.code(scope="notes:read notes:write")).get_json()
    assert set(wider["scope"].split()) == {"notes:read", "notes:write"}
    assert call_tool(app, wider["access_token"], "write_note", {"text": "x"}).status_code == 200


def test_connections_page_lists_and_revokes(app: Flask) -> None:
    flow = Flow(app)
    tokens = flow.tokens("alice")
    page = flow.browser.get("/oauth/connections")
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and "Test client" in html
    forged = flow.browser.post("/oauth/connections/revoke", data={"client_id": flow.client_id})
    assert forged.status_code == 400
    answer = flow.browser.post(
        "/oauth/connections/revoke", data={"client_id": flow.client_id, "csrf_token": csrf_of(html)}
    )
    assert answer.status_code == 303
    assert "Test client" not in flow.browser.get("/oauth/connections").get_data(as_text=True)
    assert call_tool(app, tokens["access_token"], "whoami").status_code == 401
    assert flow.refresh(tokens["refresh_token"]).status_code == 400
    assert flow.authorize().status_code == 200  # asked again


@pytest.mark.parametrize(
    "overrides",
    [
        {"redirect_uri": "https://evil.example/callback"},
        {"redirect_uri": "http://127.0.0.1:8765/callback/extra"},
        {"redirect_uri": "http://127.0.0.1:8765/"},
        {"redirect_uri": "http://localhost:8765/callback"},
        {"redirect_uri": "//evil.example/callback"},
        {"redirect_uri": "javascript:alert(1)"},
        {"redirect_uri": None},
        {"client_id": "unknown"},
        {"client_id": None},
    ],
)
def test_no_redirect_to_an_unregistered_uri(app: Flask, overrides: dict[str, object]) -> None:
    flow = Flow(app)
    flow.login("alice")
    answer = flow.authorize(**overrides)
    assert answer.status_code == 400 and "Location" not in answer.headers


def test_next_is_always_a_path_on_this_site(app: Flask) -> None:
    flow = Flow(app)
    for base in ("https://evil.example", "https://evil.example:8443"):
        answer = flow.browser.get("/oauth/authorize?" + urlencode(flow.authorize_params()), base_url=base)
        login = urlsplit(answer.headers["Location"])
        assert not login.netloc and login.path.endswith("/login")
        next_url = parse_qs(login.query)["next"][0]
        assert next_url.startswith("/oauth/authorize?")


def test_the_connections_page_shows_each_clients_recent_calls(tmp_path: t.Any, database_uri: str) -> None:
    app = build_app(tmp_path, MCP_OAUTH_DATABASE_URI=database_uri, MCP_AUDIT=True, MCP_AUDIT_DATABASE_URI=database_uri)
    flow = Flow(app)
    tokens = flow.tokens("alice")
    assert call_tool(app, tokens["access_token"], "whoami").status_code == 200
    assert call_tool(app, tokens["access_token"], "write_note", {"text": "x"}).status_code == 403
    html = flow.browser.get("/oauth/connections").get_data(as_text=True)
    listed = html[html.index('class="recent-calls"') :]
    assert listed.index("write_note") < listed.index("whoami")  # newest first
    assert "refused" in listed and "ok" in listed
    bob = Flow(app)
    bob.tokens("bob")  # connected too, and has called nothing: alice's calls are hers alone
    page = bob.browser.get("/oauth/connections").get_data(as_text=True)
    assert "Test client" in page and "recent-calls" not in page
    app.extensions["mcp"].shutdown()
