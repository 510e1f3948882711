"""URL-mode approval: the signed-in user the call is made for approves it on the app's own page."""

from __future__ import annotations

import re
import typing as t

import flask_login
import pytest
from flask import Flask, request
from flask.testing import FlaskClient

from flask_mcp import MCP
from flask_mcp.auth import FlaskLoginBackend
from flask_mcp.core.approval import APPROVAL_KEY
from flask_mcp.core.approval_pages import URL_ELICITATION_REQUIRED
from flask_mcp.protocol.jsonrpc import MISSING_CAPABILITY

URL = {"elicitation": {"url": {}}}
FORM = {"elicitation": {}}


class User(flask_login.UserMixin):  # type: ignore[misc]
    def __init__(self, user_id: str) -> None:
        self.id = user_id


@pytest.fixture
def deleted() -> list[int]:
    return []


def build(make_app: t.Callable[..., Flask], deleted: list[int], **config: t.Any) -> Flask:
    """An app whose users sign in with Flask-Login; its MCP calls carry ``Bearer <user>``."""
    mcp = MCP(name="notes", auth=FlaskLoginBackend())

    @mcp.tool(confirm="Delete note {note_id}?", permissions=[])
    def delete_note(note_id: int) -> str:
        deleted.append(note_id)
        return f"deleted {note_id}"

    app = make_app(mcp, SECRET_KEY="test-secret", **config)
    manager = flask_login.LoginManager(app)
    manager.login_view = "login"
    manager.user_loader(User)

    @manager.request_loader
    def from_header(req: t.Any) -> User | None:
        found = re.fullmatch(r"Bearer (\w+)", req.headers.get("Authorization", ""))
        return User(found.group(1)) if found else None

    @app.post("/login")
    def login() -> str:
        flask_login.login_user(User(request.form["user"]))
        return "signed in"

    return app


@pytest.fixture
def app(make_app: t.Callable[..., Flask], deleted: list[int]) -> t.Iterator[Flask]:
    app = build(make_app, deleted)
    yield app
    app.extensions["mcp"].server.tasks.runner.shutdown(wait=False)


def browser(app: Flask, user: str | None) -> FlaskClient:
    """A browser with the app's session cookie of *user* (or of nobody)."""
    client = app.test_client()
    if user is not None:
        assert client.post("/login", data={"user": user}).status_code == 200
    return client


def page_path(url: str) -> str:
    assert url.startswith("http://localhost/mcp/approvals/"), url
    return url.removeprefix("http://localhost")


def decide(client: FlaskClient, path: str, decision: str = "approve") -> t.Any:
    shown = client.get(path)
    assert shown.status_code == 200, shown.get_data(as_text=True)
    token = re.search(r'name="csrf_token" value="([^"]+)"', shown.get_data(as_text=True))
    assert token is not None
    return client.post(path, data={"csrf_token": token.group(1), "decision": decision})


def call(note_id: int = 7) -> dict[str, t.Any]:
    return {"name": "delete_note", "arguments": {"note_id": note_id}}


# -- 2025-11-25: the URL-elicitation-required error, then the same call again -------------------


def test_the_error_names_the_page_and_the_same_call_runs_once_approved(
    app: Flask, make_client: t.Any, deleted: list[int]
) -> None:
    client = make_client(app, token="alice")
    client.initialize(capabilities={})
    error = client.error("tools/call", call())
    assert error["code"] == URL_ELICITATION_REQUIRED
    (asked,) = error["data"]["elicitations"]
    assert asked["mode"] == "url" and asked["message"].startswith("Delete note 7?")
    path = page_path(asked["url"])
    alice = browser(app, "alice")
    shown = alice.get(path)
    text = shown.get_data(as_text=True)
    assert (
        shown.headers["X-Frame-Options"] == "DENY"
        and "frame-ancestors 'none'" in shown.headers["Content-Security-Policy"]
    )
    assert shown.headers["Cache-Control"] == "no-store"
    assert "delete_note" in text and "&#34;note_id&#34;: 7" in text and deleted == []
    assert client.error("tools/call", call())["data"]["elicitations"][0]["url"] == asked["url"]  # still waiting
    assert "Approved" in decide(alice, path).get_data(as_text=True)
    assert client.call_tool("delete_note", {"note_id": 7})["content"][0]["text"] == "deleted 7"
    assert deleted == [7]
    again = client.error("tools/call", call())
    assert again["code"] == URL_ELICITATION_REQUIRED and again["data"]["elicitations"][0]["url"] != asked["url"]
    assert deleted == [7]


def test_an_approval_of_other_arguments_approves_nothing(app: Flask, make_client: t.Any, deleted: list[int]) -> None:
    client = make_client(app, token="alice")
    client.initialize(capabilities={})
    path = page_path(client.error("tools/call", call(7))["data"]["elicitations"][0]["url"])
    decide(browser(app, "alice"), path)
    assert client.error("tools/call", call(8))["code"] == URL_ELICITATION_REQUIRED
    assert deleted == []


def test_another_user_can_neither_see_nor_approve(app: Flask, make_client: t.Any, deleted: list[int]) -> None:
    client = make_client(app, token="alice")
    client.initialize(capabilities={})
    path = page_path(client.error("tools/call", call())["data"]["elicitations"][0]["url"])
    bob = browser(app, "bob")
    shown = bob.get(path)
    assert shown.status_code == 403 and "delete_note" not in shown.get_data(as_text=True)
    assert bob.post(path, data={"decision": "approve"}).status_code == 403
    assert client.error("tools/call", call())["code"] == URL_ELICITATION_REQUIRED and deleted == []


def test_nobody_signed_in_is_sent_to_the_login_page(app: Flask, make_client: t.Any) -> None:
    client = make_client(app, token="alice")
    client.initialize(capabilities={})
    path = page_path(client.error("tools/call", call())["data"]["elicitations"][0]["url"])
    answer = browser(app, None).get(path)
    assert answer.status_code == 302 and answer.headers["Location"].startswith("/login?next=")


def test_a_form_not_posted_from_the_page_is_refused(app: Flask, make_client: t.Any, deleted: list[int]) -> None:
    client = make_client(app, token="alice")
    client.initialize(capabilities={})
    path = page_path(client.error("tools/call", call())["data"]["elicitations"][0]["url"])
    alice = browser(app, "alice")
    assert alice.post(path, data={"decision": "approve"}).status_code == 400
    assert alice.post(path, data={"decision": "approve", "csrf_token": "forged"}).status_code == 400
    assert client.error("tools/call", call())["code"] == URL_ELICITATION_REQUIRED and deleted == []


def test_denying_on_the_page_answers_declined(app: Flask, make_client: t.Any, deleted: list[int]) -> None:
    client = make_client(app, token="alice")
    client.initialize(capabilities={})
    path = page_path(client.error("tools/call", call())["data"]["elicitations"][0]["url"])
    assert "Denied" in decide(browser(app, "alice"), path, "deny").get_data(as_text=True)
    result = client.call_tool("delete_note", {"note_id": 7})
    assert result["isError"] is True and "declined" in result["content"][0]["text"] and deleted == []


def test_a_yes_used_after_the_ttl_asks_again(app: Flask, make_client: t.Any, deleted: list[int]) -> None:
    approvals = app.extensions["mcp"].server.approvals
    now = [1000.0]
    approvals.clock = lambda: now[0]
    client = make_client(app, token="alice")
    client.initialize(capabilities={})
    path = page_path(client.error("tools/call", call())["data"]["elicitations"][0]["url"])
    decide(browser(app, "alice"), path)
    now[0] += approvals.ttl + 1
    assert client.error("tools/call", call())["code"] == URL_ELICITATION_REQUIRED and deleted == []


def test_a_client_that_can_show_a_form_is_asked_by_form_unless_the_mode_is_url(
    app: Flask, make_app: t.Any, make_client: t.Any, deleted: list[int]
) -> None:
    client = make_client(app, token="alice")
    client.initialize(capabilities=FORM)
    assert client.call_tool("delete_note", {"note_id": 7}, answers=lambda key, asked: {"action": "accept"})
    assert deleted == [7]
    strict = build(make_app, deleted, MCP_CONFIRM_MODE="url")
    client = make_client(strict, token="alice")
    client.initialize(capabilities=FORM)
    assert client.error("tools/call", call())["code"] == URL_ELICITATION_REQUIRED
    strict.extensions["mcp"].server.tasks.runner.shutdown(wait=False)


# -- 2026-07-28: an input_required round with the page's URL ------------------------------------


def test_a_modern_round_sends_the_user_to_the_page(app: Flask, make_client: t.Any, deleted: list[int]) -> None:
    client = make_client(app, era="modern", capabilities=URL, token="alice")
    first = client.request("tools/call", call())
    asked = first["inputRequests"][APPROVAL_KEY]
    assert asked["method"] == "elicitation/create" and asked["params"]["mode"] == "url"
    path = page_path(asked["params"]["url"])
    retry = {**call(), "inputResponses": {APPROVAL_KEY: {"action": "accept"}}, "requestState": first["requestState"]}
    waiting = client.request("tools/call", retry)  # opened, not decided yet: asked again, same page
    assert waiting["inputRequests"][APPROVAL_KEY]["params"]["url"] == asked["params"]["url"] and deleted == []
    decide(browser(app, "alice"), path)
    retry["requestState"] = waiting["requestState"]
    assert client.request("tools/call", retry)["content"][0]["text"] == "deleted 7" and deleted == [7]
    assert client.request("tools/call", retry)["resultType"] == "input_required" and deleted == [7]


def test_a_modern_client_that_will_not_open_the_page_runs_nothing(
    app: Flask, make_client: t.Any, deleted: list[int]
) -> None:
    client = make_client(app, era="modern", capabilities=URL, token="alice")
    first = client.request("tools/call", call())
    retry = {**call(), "inputResponses": {APPROVAL_KEY: {"action": "decline"}}, "requestState": first["requestState"]}
    assert client.request("tools/call", retry)["isError"] is True and deleted == []


def test_url_mode_refuses_a_modern_client_that_cannot_open_urls(
    make_app: t.Any, make_client: t.Any, deleted: list[int]
) -> None:
    strict = build(make_app, deleted, MCP_CONFIRM_MODE="url")
    client = make_client(strict, era="modern", capabilities=FORM, token="alice")
    error = client.error("tools/call", call())
    assert error["code"] == MISSING_CAPABILITY and error["data"]["requiredCapabilities"] == URL
    strict.extensions["mcp"].server.tasks.runner.shutdown(wait=False)


# -- REST: a 403 naming the page, then the same call --------------------------------------------


def test_rest_names_the_page_and_runs_the_approved_call(app: Flask, deleted: list[int]) -> None:
    rest = app.test_client()
    headers = {"Authorization": "Bearer alice"}
    refused = rest.post("/mcp/rest/tools/delete_note", json={"note_id": 7}, headers=headers)
    assert refused.status_code == 403
    url = re.search(r"http://localhost/mcp/approvals/[\w-]+", refused.get_json()["error"])
    assert url is not None and deleted == []
    decide(browser(app, "alice"), page_path(url.group(0)))
    done = rest.post("/mcp/rest/tools/delete_note", json={"note_id": 7}, headers=headers)
    assert done.status_code == 200 and done.get_json() == {"result": "deleted 7"} and deleted == [7]


def test_an_anonymous_caller_is_never_sent_to_a_page(make_app: t.Any, make_client: t.Any, deleted: list[int]) -> None:
    mcp = MCP(name="open")

    @mcp.tool(confirm=True, permissions=[])
    def wipe() -> str:
        deleted.append(0)
        return "wiped"

    app = make_app(mcp, SECRET_KEY="s", MCP_CONFIRM_MODE="url")
    flask_login.LoginManager(app)
    client = make_client(app)
    client.initialize(capabilities=URL)
    error = client.error("tools/call", {"name": "wipe", "arguments": {}})
    assert "approval page" in error["message"] and deleted == []
    app.extensions["mcp"].server.tasks.runner.shutdown(wait=False)
