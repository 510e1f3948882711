"""Upstream identity provider mode against a real OpenID Connect provider in its own process.

The provider (``tests/oauth/oidc_provider.py``, on Authlib) runs as a
subprocess on a free loopback port; the MCP app in upstream mode is served by
a real WSGI server; "the user" is a ``requests`` session that signs in at the
provider. The official SDK's OAuth client then completes the flow and calls
``whoami`` as the provider's user; the negative tests break one step each.
"""

from __future__ import annotations

import base64
import json
import logging
import secrets
import subprocess
import sys
import threading
import typing as t
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import httpx2
import pytest
import requests
from flask import Flask
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from itsdangerous import URLSafeTimedSerializer
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata
from werkzeug.serving import BaseWSGIServer, make_server

from flask_mcp import MCP, ConfigurationError, ScopeRequired, current_principal
from flask_mcp.oauth import OAuthServer
from flask_mcp.oauth.upstream import local_subject
from tests.oauth.conftest import pkce
from tests.oauth.served_example import MemoryStorage
from tests.processes import OutputLines

PROVIDER = Path(__file__).resolve().parent / "oidc_provider.py"
CLIENT_ID = "flask-mcp-app"
CALLBACK = "http://127.0.0.1:43118/callback"
CAROL_SUB = "248289761001"


class Provider:
    """The OpenID Connect provider process."""

    def __init__(self) -> None:
        self.secret = secrets.token_urlsafe(16)
        self.process = subprocess.Popen(
            [sys.executable, str(PROVIDER), f"--client-id={CLIENT_ID}", f"--client-secret={self.secret}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        line = OutputLines(self.process, "the OpenID provider").wait_for("listening on")
        self.issuer = line.split("listening on", 1)[1].strip()

    def mode(self, value: str) -> None:
        assert requests.post(self.issuer + "/test/mode", json={"mode": value}, timeout=10).status_code == 200

    def issued(self) -> list[str]:
        return t.cast("list[str]", requests.get(self.issuer + "/test/issued", timeout=10).json()["issued"])

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
        assert self.process.stdout is not None
        self.process.stdout.close()


@pytest.fixture(scope="module")
def provider() -> t.Iterator[Provider]:
    running = Provider()
    try:
        yield running
    finally:
        running.close()


def build_app(provider: Provider, port: int, tmp_path: Path, **config: t.Any) -> Flask:
    """An app with no users of its own: the provider signs them in."""
    app = Flask(__name__)
    base = f"http://127.0.0.1:{port}"
    app.config.update(
        SECRET_KEY=secrets.token_hex(16),
        MCP_AUTH_RESOURCE=base + "/mcp",
        MCP_OAUTH_DATABASE_URI=f"sqlite:///{tmp_path / 'oauth.sqlite3'}",
        MCP_OAUTH_UPSTREAM_DISCOVERY_URL=provider.issuer + "/.well-known/openid-configuration",
        MCP_OAUTH_UPSTREAM_CLIENT_ID=CLIENT_ID,
        MCP_OAUTH_UPSTREAM_CLIENT_SECRET=provider.secret,
    )
    app.config.update(config)
    mcp = MCP(name="upstream-notes")

    @mcp.tool(permissions=[ScopeRequired("notes:read")])
    def whoami() -> str:
        principal = current_principal()
        return principal.subject if principal is not None else "nobody"

    OAuthServer(mcp, app, scopes={"notes:read": "Read your notes"})
    return app


class Served:
    """The app on a real threaded server, built once its port (its canonical URL) is known."""

    def __init__(self, provider: Provider, tmp_path: Path, **config: t.Any) -> None:
        self.server: BaseWSGIServer = make_server("127.0.0.1", 0, self._dispatch, threaded=True)
        self.base = f"http://127.0.0.1:{self.server.server_port}"
        self.app = build_app(provider, self.server.server_port, tmp_path, **config)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
        self.thread.start()

    def _dispatch(self, environ: t.Any, start_response: t.Any) -> t.Any:
        return self.app(environ, start_response)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


@pytest.fixture
def served(provider: Provider, tmp_path: Path) -> t.Iterator[Served]:
    provider.mode("ok")
    app = Served(provider, tmp_path)
    try:
        yield app
    finally:
        app.close()


class Browser:
    """A user with a browser: signs in at the provider, answers this app's consent page."""

    def __init__(self, *, decision: str = "approve", password: str = "carol") -> None:
        self.session = requests.Session()
        self.decision = decision
        self.password = password

    def to_callback(self, authorize_url: str) -> str:
        """Follow the authorization request to the provider, sign in there; the provider's answer URL."""
        answer = self.session.get(authorize_url, allow_redirects=False)
        assert answer.status_code == 302, answer.text
        login = answer.headers["Location"]
        assert urlsplit(login).path == "/oauth/upstream/login"
        base = f"{urlsplit(authorize_url).scheme}://{urlsplit(authorize_url).netloc}"
        answer = self.session.get(base + login, allow_redirects=False)
        assert answer.status_code == 302, answer.text
        at_provider = answer.headers["Location"]
        query = parse_qs(urlsplit(at_provider).query)
        assert query["code_challenge_method"] == ["S256"] and query["nonce"] and query["state"]
        assert self.session.get(at_provider).status_code == 200
        answer = self.session.post(
            at_provider,
            data={"username": "carol", "password": self.password, "decision": self.decision},
            allow_redirects=False,
        )
        assert answer.status_code == 302, answer.text
        return str(answer.headers["Location"])

    def consent(self, answer: requests.Response) -> requests.Response:
        """Approve this app's consent page, if it is shown; the redirect to the MCP client."""
        if answer.status_code == 200:
            html = answer.text
            assert "Carol Upstream" in html
            marker = 'name="csrf_token" value="'
            token = html[html.index(marker) + len(marker) :].split('"', 1)[0]
            answer = self.session.post(
                answer.url, data={"csrf_token": token, "decision": "approve"}, allow_redirects=False
            )
        return answer


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
async def test_the_sdk_client_signs_in_through_the_provider_and_calls_whoami(
    served: Served, provider: Provider, mode: str
) -> None:
    browser = Browser()
    result: list[AuthorizationCodeResult] = []

    async def redirect_handler(url: str) -> None:
        callback = browser.to_callback(url)
        back = browser.session.get(callback, allow_redirects=False)
        assert back.status_code == 302 and back.headers["Location"].startswith("/oauth/authorize?")
        page = browser.session.get(served.base + back.headers["Location"], allow_redirects=False)
        assert page.status_code == 200  # the consent page still shows, for the provider's user
        answer = browser.consent(page)
        assert answer.status_code == 302, answer.text
        query = {key: values[0] for key, values in parse_qs(urlsplit(answer.headers["Location"]).query).items()}
        result.append(AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss")))

    async def callback_handler() -> AuthorizationCodeResult:
        return result[-1]

    storage = MemoryStorage()
    auth = OAuthClientProvider(
        served.base + "/mcp",
        OAuthClientMetadata(
            client_name="SDK test client",
            redirect_uris=[CALLBACK],
            grant_types=["authorization_code", "refresh_token"],
            token_endpoint_auth_method="none",
        ),
        storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    http_client = httpx2.AsyncClient(auth=auth, timeout=30)
    async with Client(streamable_http_client(served.base + "/mcp", http_client=http_client), mode=mode) as client:
        answer = await client.call_tool("whoami", {})
    assert answer.content[0].text == local_subject(provider.issuer, CAROL_SUB)  # type: ignore[union-attr]
    assert answer.content[0].text == f"{provider.issuer}#{CAROL_SUB}"  # type: ignore[union-attr]
    # This server's token, not the provider's: its issuer is the app and it was minted for the MCP URL.
    assert storage.tokens is not None
    claims = json.loads(base64.urlsafe_b64decode(storage.tokens.access_token.split(".")[1] + "=="))
    assert claims["iss"] == served.base and claims["aud"] == served.base + "/mcp"
    _assert_upstream_tokens_kept_nowhere(served, provider, browser, storage)


def _assert_upstream_tokens_kept_nowhere(
    served: Served, provider: Provider, browser: Browser, storage: MemoryStorage
) -> None:
    issued = provider.issued()
    assert issued  # the provider did hand out an access token and an ID token
    assert storage.tokens is not None
    mine = {storage.tokens.access_token, storage.tokens.refresh_token}
    database = (Path(served.app.config["MCP_OAUTH_DATABASE_URI"][len("sqlite:///") :])).read_bytes()
    session = URLSafeTimedSerializer(
        served.app.secret_key, salt="cookie-session", signer_kwargs={"key_derivation": "hmac", "digest_method": _sha1}
    )
    cookies = [session.loads(cookie.value) for cookie in browser.session.cookies if cookie.name == "session"]
    assert cookies
    # The Flask session holds who signed in and the consent form's nonce: no state data left, no token.
    assert {key for cookie in cookies for key in cookie} <= {"_mcp_oauth_upstream_user", "_mcp_oauth_nonce"}
    assert cookies[-1]["_mcp_oauth_upstream_user"] == {
        "iss": provider.issuer,
        "sub": CAROL_SUB,
        "name": "Carol Upstream",
    }
    stored_session = json.dumps(cookies)
    for token in issued:
        assert token not in mine
        assert token.encode() not in database
        assert token not in stored_session


def _sha1(*args: t.Any) -> t.Any:
    import hashlib

    return hashlib.sha1(*args)


# -- negative tests: each breaks one step, each answered with an error page, never a 5xx ----------


def _register(served: Served) -> str:
    answer = requests.post(
        served.base + "/oauth/register",
        json={"client_name": "t", "redirect_uris": [CALLBACK], "token_endpoint_auth_method": "none"},
        timeout=10,
    )
    assert answer.status_code == 201, answer.text
    return str(answer.json()["client_id"])


def _authorize_url(served: Served) -> str:
    _, challenge = pkce()
    params = {
        "response_type": "code",
        "client_id": _register(served),
        "redirect_uri": CALLBACK,
        "scope": "notes:read",
        "state": "client-state",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": served.base + "/mcp",
    }
    return served.base + "/oauth/authorize?" + urlencode(params)


def _with_query(url: str, **changes: str | None) -> str:
    parts = urlsplit(url)
    query = {key: values[0] for key, values in parse_qs(parts.query).items()}
    query.update(changes)
    return urlunsplit(parts._replace(query=urlencode({k: v for k, v in query.items() if v is not None})))


def _refused(answer: requests.Response, status: int, error: str) -> None:
    assert answer.status_code == status, answer.text
    assert error in answer.text and "Traceback" not in answer.text
    assert "text/html" in answer.headers["Content-Type"]


def test_the_signed_in_user_comes_back_to_the_authorization_request(served: Served) -> None:
    browser = Browser()
    callback = browser.to_callback(_authorize_url(served))
    answer = browser.session.get(callback, allow_redirects=False)
    assert answer.status_code == 302 and answer.headers["Location"].startswith("/oauth/authorize?")
    consent = browser.session.get(served.base + answer.headers["Location"])
    assert consent.status_code == 200 and "Carol Upstream" in consent.text
    answer = browser.consent(consent)
    assert answer.status_code == 302 and answer.headers["Location"].startswith(CALLBACK + "?code=")


@pytest.mark.parametrize("state", ["forged", "", None])
def test_a_wrong_state_is_refused(served: Served, state: str | None) -> None:
    browser = Browser()
    callback = browser.to_callback(_authorize_url(served))
    _refused(browser.session.get(_with_query(callback, state=state), allow_redirects=False), 400, "invalid_state")


def test_an_answer_meant_for_another_browser_is_refused(served: Served) -> None:
    callback = Browser().to_callback(_authorize_url(served))
    _refused(Browser().session.get(callback, allow_redirects=False), 400, "invalid_state")


def test_an_answer_is_used_once(served: Served) -> None:
    browser = Browser()
    callback = browser.to_callback(_authorize_url(served))
    assert browser.session.get(callback, allow_redirects=False).status_code == 302
    _refused(browser.session.get(callback, allow_redirects=False), 400, "invalid_state")


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("bad-signature", "BadSignatureError"),
        ("bad-issuer", "'iss'"),
        ("bad-audience", "'aud'"),
        ("bad-nonce", "'nonce'"),
        ("no-id-token", None),
    ],
)
def test_a_bad_id_token_is_refused(
    served: Served, provider: Provider, mode: str, reason: str | None, caplog: pytest.LogCaptureFixture
) -> None:
    provider.mode(mode)
    browser = Browser()
    callback = browser.to_callback(_authorize_url(served))
    with caplog.at_level(logging.INFO, logger="flask_mcp.oauth"):
        answer = browser.session.get(callback, allow_redirects=False)
    _refused(answer, 400, "invalid_token")
    refusals = [record.getMessage() for record in caplog.records if "ID token refused" in record.getMessage()]
    if reason is None:
        assert not refusals and "sent no ID token" in answer.text
    else:
        assert len(refusals) == 1 and reason in refusals[0], refusals
    # Nobody is signed in: the authorization request sends the user to the provider again.
    again = browser.session.get(_authorize_url(served), allow_redirects=False)
    assert urlsplit(again.headers["Location"]).path == "/oauth/upstream/login"


def test_the_provider_denying_is_an_error_page(served: Served) -> None:
    browser = Browser(decision="deny")
    callback = browser.to_callback(_authorize_url(served))
    assert parse_qs(urlsplit(callback).query)["error"] == ["access_denied"]
    _refused(browser.session.get(callback, allow_redirects=False), 403, "access_denied")


def test_an_answer_naming_another_issuer_is_refused(served: Served) -> None:
    browser = Browser()
    callback = browser.to_callback(_authorize_url(served))
    _refused(browser.session.get(_with_query(callback, iss="http://127.0.0.1:1"), allow_redirects=False), 400, "")


def test_an_answer_without_the_issuer_its_provider_promises_is_refused(provider: Provider, tmp_path: Path) -> None:
    provider.mode("claims-iss")
    app = Served(provider, tmp_path)
    try:
        browser = Browser()
        callback = browser.to_callback(_authorize_url(app))
        _refused(browser.session.get(callback, allow_redirects=False), 400, "does not name its issuer")
        # The same answer naming its issuer is taken.
        callback = browser.to_callback(_authorize_url(app))
        assert browser.session.get(_with_query(callback, iss=provider.issuer), allow_redirects=False).status_code == 302
    finally:
        app.close()
        provider.mode("ok")


def test_a_code_the_provider_refuses_is_an_error_page(served: Served) -> None:
    browser = Browser()
    callback = browser.to_callback(_authorize_url(served))
    _refused(browser.session.get(_with_query(callback, code="forged"), allow_redirects=False), 400, "invalid_grant")


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example/x", "/\\evil.example", "javascript:1"])
def test_the_login_never_redirects_off_site(served: Served, target: str) -> None:
    browser = Browser()
    login = served.base + "/oauth/upstream/login?" + urlencode({"next": target})
    answer = browser.session.get(login, allow_redirects=False)
    at_provider = answer.headers["Location"]
    browser.session.get(at_provider)
    answer = browser.session.post(
        at_provider, data={"username": "carol", "password": "carol", "decision": "approve"}, allow_redirects=False
    )
    back = browser.session.get(answer.headers["Location"], allow_redirects=False)
    assert back.status_code == 302 and back.headers["Location"] == "/"


def test_an_unreachable_provider_is_a_502_page(provider: Provider, tmp_path: Path) -> None:
    from tests.conftest import free_port

    closed = f"http://127.0.0.1:{free_port()}/.well-known/openid-configuration"
    app = Served(provider, tmp_path, MCP_OAUTH_UPSTREAM_DISCOVERY_URL=closed, MCP_OAUTH_UPSTREAM_TIMEOUT=5)
    try:
        answer = requests.get(app.base + "/oauth/upstream/login?next=/", allow_redirects=False, timeout=30)
        _refused(answer, 502, "temporarily_unavailable")
    finally:
        app.close()


def test_a_discovery_document_naming_another_issuer_is_refused(provider: Provider, tmp_path: Path) -> None:
    # The document of the provider, fetched at a URL that is not its issuer's.
    other = provider.issuer.replace("127.0.0.1", "localhost") + "/.well-known/openid-configuration"
    app = Served(provider, tmp_path, MCP_OAUTH_UPSTREAM_DISCOVERY_URL=other)
    try:
        answer = requests.get(app.base + "/oauth/upstream/login?next=/", allow_redirects=False, timeout=30)
        _refused(answer, 502, "another issuer")
    finally:
        app.close()


def test_upstream_mode_takes_no_user_loader(provider: Provider, tmp_path: Path) -> None:
    app = Flask(__name__)
    app.config.update(
        SECRET_KEY="k",
        MCP_AUTH_RESOURCE="http://127.0.0.1:1/mcp",
        MCP_OAUTH_DATABASE_URI=f"sqlite:///{tmp_path / 'o.sqlite3'}",
        MCP_OAUTH_UPSTREAM_DISCOVERY_URL=provider.issuer + "/.well-known/openid-configuration",
        MCP_OAUTH_UPSTREAM_CLIENT_ID=CLIENT_ID,
    )
    with pytest.raises(ConfigurationError, match="user_loader"):
        OAuthServer(MCP(), app, user_loader=lambda: None)


def test_a_long_subject_is_kept_as_a_digest() -> None:
    short = local_subject("https://idp.example", "abc")
    assert short == "https://idp.example#abc"
    long = local_subject("https://idp.example", "x" * 255)
    assert len(long) <= 255 and long != local_subject("https://idp.example", "x" * 254 + "y")


def _session_of(app: Flask, browser: Browser) -> dict[str, t.Any]:
    serializer = URLSafeTimedSerializer(
        app.secret_key, salt="cookie-session", signer_kwargs={"key_derivation": "hmac", "digest_method": _sha1}
    )
    values = [cookie.value for cookie in browser.session.cookies if cookie.name == "session"]
    return t.cast("dict[str, t.Any]", serializer.loads(values[-1])) if values else {}


def test_a_sign_in_answered_too_late_is_refused(served: Served, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    from flask_mcp.oauth import upstream_views
    from flask_mcp.oauth.upstream import SIGN_IN_MAX_AGE

    browser = Browser()
    callback = browser.to_callback(_authorize_url(served))
    later = time.time() + SIGN_IN_MAX_AGE + 1

    class Clock:
        @staticmethod
        def time() -> float:
            return later

    monkeypatch.setattr(upstream_views, "time", Clock)
    _refused(browser.session.get(callback, allow_redirects=False), 400, "invalid_state")


def test_only_the_newest_sign_ins_are_kept(served: Served) -> None:
    from flask_mcp.oauth.upstream_views import MAX_PENDING_SIGN_INS

    browser = Browser()
    started = []
    for _ in range(MAX_PENDING_SIGN_INS + 3):
        answer = browser.session.get(served.base + "/oauth/upstream/login?next=/", allow_redirects=False)
        started.append(answer.headers["Location"])
    pending = [key for key in _session_of(served.app, browser) if key.startswith("_state_")]
    assert len(pending) == MAX_PENDING_SIGN_INS
    for at_provider, kept in ((started[0], False), (started[-1], True)):
        answer = browser.session.post(
            at_provider, data={"username": "carol", "password": "carol", "decision": "approve"}, allow_redirects=False
        )
        back = browser.session.get(answer.headers["Location"], allow_redirects=False)
        assert back.status_code == (302 if kept else 400), back.text


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    path=st.sampled_from(["/oauth/upstream/callback", "/oauth/upstream/login"]),
    params=st.lists(
        st.tuples(
            st.sampled_from(["state", "code", "error", "error_description", "iss", "next"]), st.text(max_size=60)
        ),
        max_size=6,
    ),
)
def test_no_answer_makes_a_5xx(served: Served, provider: Provider, path: str, params: list[tuple[str, str]]) -> None:
    from werkzeug.datastructures import MultiDict

    answer = served.app.test_client().get(path, query_string=MultiDict(params))
    assert answer.status_code < 500, answer.get_data(as_text=True)
    if answer.status_code in (301, 302, 303, 307, 308):
        location = answer.headers["Location"]
        # Back to a path of this site, or to the provider: never elsewhere.
        assert location.startswith("/") or location.startswith(provider.issuer + "/authorize?"), location
