"""The example's sign-in page as a hostile site and a password guesser would try it: it holds."""

from __future__ import annotations

import re
import typing as t
from types import ModuleType
from urllib.parse import urlencode, urlsplit

import pytest
from flask import Flask
from flask.testing import FlaskClient

from examples.test_oauth_app import load


class Clock:
    """The login limiter's clock, moved by hand."""

    def __init__(self) -> None:
        self.now = 9_000_030.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def example() -> ModuleType:
    return load()


@pytest.fixture
def app(example: ModuleType, clock: Clock) -> Flask:
    built: Flask = example.create_app({"TESTING": True})
    built.extensions["oauth_example_login_limiter"].clock = clock
    return built


def token_of(browser: FlaskClient, page: str = "/login") -> str:
    match = re.search(r'name="csrf_token" value="([^"]+)"', browser.get(page).get_data(as_text=True))
    assert match is not None
    return match.group(1)


def sign_in(browser: FlaskClient, name: str, password: str) -> t.Any:
    data = {"csrf_token": token_of(browser), "username": name, "password": password}
    return browser.post("/login?next=/", data=data)


def signed_in_as(browser: FlaskClient) -> str:
    return browser.get("/").get_data(as_text=True).split("Signed in as ")[1].split(".")[0]


def authorization_request(app: Flask) -> str:
    """The path of an authorization request of a freshly registered client, as a connector sends the user to."""
    redirect_uri = "http://127.0.0.1:43118/callback"
    registered = app.test_client().post(
        "/oauth/register",
        json={"client_name": "Connector", "redirect_uris": [redirect_uri], "token_endpoint_auth_method": "none"},
    )
    assert registered.status_code == 201
    query = {
        "response_type": "code",
        "client_id": registered.json["client_id"],  # type: ignore[index]
        "redirect_uri": redirect_uri,
        "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        "code_challenge_method": "S256",
        "scope": "notes:read",
        "resource": app.config["MCP_AUTH_RESOURCE"],
        "state": "s",
    }
    return "/oauth/authorize?" + urlencode(query)


def test_a_login_posted_from_another_site_signs_nobody_in(app: Flask) -> None:
    victim = app.test_client()
    attacker = app.test_client()
    authorize = authorization_request(app)
    login = "/login?" + urlencode({"next": authorize})
    forged = {"username": "bob", "password": "bob"}  # the attacker's own account
    assert victim.post(login, data=forged).status_code == 400  # no token at all
    assert victim.post(login, data={**forged, "csrf_token": "made-up"}).status_code == 400
    # A real token, from the attacker's own session, does not work in the victim's browser.
    assert victim.post(login, data={**forged, "csrf_token": token_of(attacker)}).status_code == 400
    assert signed_in_as(victim) == "nobody"
    # The connector's request still sends the victim to the login page.
    answer = victim.get(authorize)
    assert answer.status_code == 302 and urlsplit(answer.headers["Location"]).path == "/login"
    assert sign_in(victim, "alice", "alice").status_code == 302 and signed_in_as(victim) == "alice"


def test_no_page_of_the_sign_in_flow_can_be_framed(app: Flask) -> None:
    browser = app.test_client()
    pages = [browser.get("/login"), browser.get("/"), sign_in(browser, "bob", "nope"), sign_in(browser, "bob", "bob")]
    pages += [browser.get("/"), browser.post("/logout", data={"csrf_token": token_of(browser, "/")})]
    assert pages[-1].status_code == 302 and signed_in_as(browser) == "nobody"  # signed in and out again
    for answer in pages:
        assert answer.headers["X-Frame-Options"] == "DENY"
        assert answer.headers["Content-Security-Policy"] == "frame-ancestors 'none'"


def test_the_session_cookie_is_same_site_lax_and_secure_behind_https() -> None:
    plain = load().create_app({"TESTING": True})
    browser = plain.test_client()
    cookie = sign_in(browser, "alice", "alice").headers["Set-Cookie"]
    assert "SameSite=Lax" in cookie and "Secure" not in cookie
    served = load().create_app({"TESTING": True, "MCP_AUTH_RESOURCE": "https://notes.example.com/mcp"})
    cookie = served.test_client().get("/login", base_url="https://notes.example.com").headers["Set-Cookie"]
    assert "SameSite=Lax" in cookie and "Secure" in cookie


def test_a_hundred_wrong_passwords_meet_429_early_and_the_right_one_waits_too(app: Flask, clock: Clock) -> None:
    browser = app.test_client()
    answers = [sign_in(browser, "alice", f"guess-{index}") for index in range(100)]
    assert [answer.status_code for answer in answers[:5]] == [200] * 5
    assert all("Unknown user or wrong password." in answer.get_data(as_text=True) for answer in answers[:5])
    assert {answer.status_code for answer in answers[5:]} == {429}
    assert answers[-1].headers["Retry-After"] == "870"  # till the end of the 15-minute window (9_000_900)
    assert "Too many wrong passwords" in answers[-1].get_data(as_text=True)
    assert sign_in(browser, "alice", "alice").status_code == 429 and signed_in_as(browser) == "nobody"
    clock.now += 15 * 60  # the window has passed
    assert sign_in(browser, "alice", "alice").status_code == 302 and signed_in_as(browser) == "alice"


def test_one_address_trying_many_users_is_throttled(app: Flask) -> None:
    browser = app.test_client()
    for index in range(20):
        assert "Unknown user or wrong password." in sign_in(browser, f"user-{index}", "guess").get_data(as_text=True)
    assert sign_in(browser, "bob", "bob").status_code == 429
    # Another address is not held up by this one.
    other = app.test_client()
    other.environ_base["REMOTE_ADDR"] = "10.9.9.9"
    assert sign_in(other, "bob", "bob").status_code == 302


def test_an_unknown_user_and_a_wrong_password_get_the_same_answer_and_work(
    example: ModuleType, app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    checked: list[str] = []
    check = example.check_password_hash

    def recorded(stored: str, password: str) -> bool:
        checked.append(stored.split("$")[0])  # the method and its cost parameters
        return bool(check(stored, password))

    monkeypatch.setattr(example, "check_password_hash", recorded)
    unknown = sign_in(app.test_client(), "mallory", "x")
    wrong = sign_in(app.test_client(), "alice", "x")
    assert len(checked) == 2 and checked[0] == checked[1]  # a hash checked for the unknown user too, as costly

    def shown(answer: t.Any) -> str:
        return re.sub(r'value="[^"]+"', "", answer.get_data(as_text=True))

    assert unknown.status_code == wrong.status_code == 200
    assert shown(unknown) == shown(wrong) and "Unknown user or wrong password." in shown(wrong)


def test_sign_in_goes_back_only_to_a_path_on_this_site(app: Flask) -> None:
    for target, expected in (("/oauth/connections", "/oauth/connections"), ("https://evil.example/", "/")):
        browser = app.test_client()
        data = {"csrf_token": token_of(browser), "username": "alice", "password": "alice"}
        answer = browser.post("/login", query_string={"next": target}, data=data)
        assert answer.status_code == 302 and answer.headers["Location"] == expected


def test_logout_is_a_post_with_its_token(app: Flask) -> None:
    browser = app.test_client()
    sign_in(browser, "alice", "alice")
    assert browser.get("/logout").status_code == 405
    assert browser.post("/logout").status_code == 400 and signed_in_as(browser) == "alice"
    assert browser.post("/logout", data={"csrf_token": "made-up"}).status_code == 400
    assert signed_in_as(browser) == "alice"
    # The index page's Sign out form carries the token.
    assert browser.post("/logout", data={"csrf_token": token_of(browser, "/")}).status_code == 302
    assert signed_in_as(browser) == "nobody"
