"""The consent page helps the user judge the client: the service's name, an unverified mark, where
the answer goes, the connections page, and "Not you?"."""

from __future__ import annotations

import re
import typing as t
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from flask import Flask, session

from flask_mcp import MCP
from flask_mcp.oauth import OAuthServer
from tests.oauth.conftest import RESOURCE, Flow, build_app


def page_of(flow: Flow, **overrides: t.Any) -> str:
    flow.login("alice")
    answer = flow.authorize(**overrides)
    assert answer.status_code == 200, answer.get_data(as_text=True)
    return answer.get_data(as_text=True)


def field(html: str, form_id: str, name: str) -> str:
    form = html[html.index(f'id="{form_id}"') :]
    match = re.search(rf'name="{name}" value="([^"]*)"', form)
    assert match is not None, name
    return match.group(1).replace("&amp;", "&")


def operator_flow(app: Flask) -> Flow:
    """A flow whose client the operator made (``add-client`` with an authorization_code grant)."""
    args = ["mcp", "oauth", "add-client", "Notes desktop", "--scope", "notes:read", "--grant", "authorization_code"]
    result = app.test_cli_runner().invoke(args=[*args, "--redirect-uri", "http://127.0.0.1:8765/callback"])
    assert result.exit_code == 0, result.output
    flow = Flow(app)
    flow.client_id = result.output.split("client_id: ")[1].split()[0]
    return flow


def test_the_page_names_the_service_by_default_the_mcp_servers_name(tmp_path: Path) -> None:
    html = page_of(Flow(build_app(tmp_path)))
    assert 'your <span id="consent-service">notes</span> account' in html
    assert "<title>Connect Test client to notes</title>" in html


def test_the_service_name_is_configurable(tmp_path: Path) -> None:
    html = page_of(Flow(build_app(tmp_path, MCP_OAUTH_SERVICE_NAME="Acme Notes")))
    assert 'your <span id="consent-service">Acme Notes</span> account' in html


def test_a_client_that_registered_itself_is_marked_unverified(tmp_path: Path) -> None:
    html = page_of(Flow(build_app(tmp_path)))
    assert 'id="consent-unverified">Unverified<' in html
    assert "notes has not checked this application" in html


def test_a_client_the_operator_made_is_not_marked(tmp_path: Path) -> None:
    html = page_of(operator_flow(build_app(tmp_path)))
    assert "Notes desktop" in html and "Unverified" not in html and "consent-unverified" not in html


def test_the_page_links_to_the_connections_page(tmp_path: Path) -> None:
    app = build_app(tmp_path)
    flow = Flow(app)
    html = page_of(flow)
    match = re.search(r'<a href="([^"]+)" id="consent-connections">', html)
    assert match is not None and match.group(1) == "/oauth/connections"
    assert flow.browser.get(match.group(1)).status_code == 200
    assert 'id="consent-redirect-host">127.0.0.1:8765<' in html


def test_not_you_signs_out_and_comes_back_to_the_same_request(tmp_path: Path) -> None:
    app = build_app(tmp_path, MCP_OAUTH_SERVICE_NAME="Acme")
    logged_out: list[bool] = []
    app.extensions["flask_mcp.oauth"].users._logout = lambda: (logged_out.append(True), session.pop("user"))
    flow = Flow(app)
    html = page_of(flow)
    action = re.search(r'<form method="post" action="([^"]+)" class="inline" id="consent-switch-account">', html)
    assert action is not None and action.group(1) == "/oauth/switch-account"
    answer = flow.browser.post(
        action.group(1),
        data={
            "switch_token": field(html, "consent-switch-account", "switch_token"),
            "query": field(html, "consent-switch-account", "query"),
        },
    )
    assert answer.status_code == 303 and logged_out == [True]
    target = urlsplit(answer.headers["Location"])
    assert target.path == "/oauth/authorize"
    assert parse_qs(target.query) == {key: [str(value)] for key, value in flow.authorize_params().items()}
    # Nobody is signed in now: the request sends the browser to the login page, coming back to itself.
    again = flow.browser.get(answer.headers["Location"])
    assert again.status_code == 302 and urlsplit(again.headers["Location"]).path == "/login"
    next_url = parse_qs(urlsplit(again.headers["Location"]).query)["next"][0]
    assert urlsplit(next_url).path == "/oauth/authorize" and parse_qs(urlsplit(next_url).query) == parse_qs(
        target.query
    )


def test_not_you_without_its_token_signs_nobody_out(tmp_path: Path) -> None:
    app = build_app(tmp_path)
    app.extensions["flask_mcp.oauth"].users._logout = lambda: session.pop("user")
    flow = Flow(app)
    html = page_of(flow)
    query = field(html, "consent-switch-account", "query")
    for token in (None, "forged", field(html, "consent-switch-account", "switch_token")):
        # The last one is valid, but for another request: the query it is bound to changed.
        data = {"query": query + ("&x=1" if token and token != "forged" else "")}
        if token is not None:
            data["switch_token"] = token
        answer = flow.browser.post("/oauth/switch-account", data=data)
        assert answer.status_code == 400, token
    assert flow.authorize().status_code == 200  # still signed in


def test_not_you_goes_nowhere_but_the_authorize_endpoint(tmp_path: Path) -> None:
    app = build_app(tmp_path)
    app.extensions["flask_mcp.oauth"].users._logout = lambda: session.pop("user")
    flow = Flow(app)
    flow.login("alice")
    for query in ("//evil.example/x", "https://evil.example/", "\r\nLocation: https://evil.example", "a=1#frag"):
        answer = flow.browser.post("/oauth/switch-account", data={"query": query})
        assert answer.status_code in (303, 400)
        if answer.status_code == 303:
            target = urlsplit(answer.headers["Location"])
            assert (target.scheme, target.netloc, target.path) in (
                ("", "", "/oauth/authorize"),
                ("http", "localhost", "/oauth/authorize"),
            )


def test_no_not_you_when_the_app_cannot_sign_users_out(tmp_path: Path) -> None:
    html = page_of(Flow(build_app(tmp_path)))  # a user_loader of its own and no logout hook
    assert "consent-switch-account" not in html and "Not you?" not in html


def test_the_logout_hook_given_to_oauthserver_is_used(tmp_path: Path) -> None:
    app = Flask(__name__)
    app.config.update(
        TESTING=True,
        SECRET_KEY="s",
        MCP_AUTH_RESOURCE=RESOURCE,
        MCP_OAUTH_DATABASE_URI=f"sqlite:///{tmp_path / 'o.sqlite3'}",
        MCP_OAUTH_LOGIN_VIEW="login",
    )
    app.add_url_rule("/login", "login", lambda: "login")
    mcp = MCP(name="notes")
    server = OAuthServer(mcp, app, user_loader=lambda: session.get("user"), subject=str, logout=lambda: session.clear())
    assert server.users.can_log_out
    with app.test_request_context():
        session["user"] = "alice"
        server.users.log_out()
        assert "user" not in session


def test_the_connections_page_names_the_service(tmp_path: Path) -> None:
    flow = Flow(build_app(tmp_path, MCP_OAUTH_SERVICE_NAME="Acme Notes"))
    flow.login("alice")
    assert "connected to your Acme Notes account" in flow.browser.get("/oauth/connections").get_data(as_text=True)
