"""The sign-in, consent and connections pages in a real headless Chromium, with the official SDK's OAuth client.

examples/oauth_app runs under a real WSGI server; the SDK's
``OAuthClientProvider`` registers dynamically and hands its authorization URL
to a redirect handler that sends the browser there. "The user" signs in on the
app's login page and answers the consent page by clicking; the browser is
then sent to the client's loopback redirect URI, a small server that hands
what it received to the SDK. Nothing but this machine is contacted.

The pages are photographed on the way: set ``FLASK_MCP_OAUTH_SCREENSHOTS`` to
a folder (``docs/_static/oauth``) to refresh the pictures of the docs;
otherwise they go to a temporary folder, checked and thrown away.
"""

from __future__ import annotations

import contextlib
import os
import struct
import typing as t
from dataclasses import dataclass, field
from pathlib import Path

import anyio.to_thread
import httpx2
import pytest
import requests
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata
from mcp.shared.exceptions import MCPError
from selenium.webdriver.chrome.webdriver import WebDriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.browser import headless_chromium, needs_chromium
from tests.oauth.served_example import LoopbackCallback, MemoryStorage, ServedExample

pytestmark = [needs_chromium, pytest.mark.anyio]

#: Seconds an explicit wait may take (a cold Chromium on a busy machine).
WAIT = 30
CLIENT_NAME = "Notes Assistant"
#: The browser's window: the size of the pictures in the docs.
WINDOW = (760, 640)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def browser() -> t.Iterator[WebDriver]:
    """One headless Chromium for the module, its window the size of the docs' pictures."""
    arguments = ("--hide-scrollbars", "--force-device-scale-factor=1", f"--window-size={WINDOW[0]},{WINDOW[1]}")
    with headless_chromium(*arguments) as driver:
        yield driver


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    """Where the pages' pictures go."""
    folder = os.environ.get("FLASK_MCP_OAUTH_SCREENSHOTS")
    path = Path(folder) if folder else tmp_path
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def served() -> t.Iterator[ServedExample]:
    with ServedExample() as server:
        yield server


@pytest.fixture
def callback() -> t.Iterator[LoopbackCallback]:
    with LoopbackCallback() as server:
        yield server


@dataclass
class ConsentSeen:
    """What one consent page showed."""

    title: str
    redirect_host: str
    scopes: str
    refused: str


@dataclass
class Person:
    """Someone at the browser: signs in when asked and answers each consent page with *approve*."""

    browser: WebDriver
    name: str
    callback: LoopbackCallback
    shots: Path | None
    approve: bool = True
    consents: list[ConsentSeen] = field(default_factory=list)
    logins: int = 0
    authorizations: int = 0

    def shoot(self, name: str) -> None:
        if self.shots is None:
            return
        path = self.shots / f"{name}.png"
        # The page's body, cropped to its content (the card and its margin), at the window's width.
        assert self.browser.find_element(By.TAG_NAME, "body").screenshot(str(path))
        width, height = png_size(path)
        assert width == viewport(self.browser)[0] and 0 < height <= viewport(self.browser)[1]

    def visible(self, element_id: str) -> bool:
        return bool(self.browser.find_elements(By.ID, element_id))

    def _settled(self, *element_ids: str) -> None:
        WebDriverWait(self.browser, WAIT).until(
            lambda _: self.callback.received() or any(self.visible(element_id) for element_id in element_ids)
        )

    def authorize(self, url: str) -> None:
        """The browser goes to the authorization URL; the user does what each page asks."""
        self.authorizations += 1
        self.browser.get(url)
        self._settled("login-submit", "consent-approve")
        if self.visible("login-submit"):
            self.logins += 1
            self.shoot("login")
            self.browser.find_element(By.ID, "username").send_keys(self.name)
            self.browser.find_element(By.ID, "password").send_keys(self.name)
            self.browser.find_element(By.ID, "login-submit").click()
            self._settled("consent-approve", "login-error")
            assert not self.visible("login-error")
        if self.visible("consent-approve"):
            refused = self.browser.find_elements(By.ID, "consent-refused")
            self.consents.append(
                ConsentSeen(
                    title=self.browser.find_element(By.ID, "consent-title").text,
                    redirect_host=self.browser.find_element(By.ID, "consent-redirect-host").text,
                    scopes=self.browser.find_element(By.ID, "consent-scopes").text,
                    refused=refused[0].text if refused else "",
                )
            )
            self.shoot("consent" if len(self.consents) == 1 else "consent-step-up")
            self.browser.find_element(By.ID, "consent-approve" if self.approve else "consent-deny").click()
        self._settled()

    async def redirect_handler(self, url: str) -> None:
        await anyio.to_thread.run_sync(self.authorize, url)

    async def callback_handler(self) -> AuthorizationCodeResult:
        answer = self.callback.next_answer(WAIT)
        if "error" in answer:
            raise PermissionError(answer["error"])
        return AuthorizationCodeResult(code=answer["code"], state=answer.get("state"), iss=answer.get("iss"))


def viewport(browser: WebDriver) -> tuple[int, int]:
    """The size of the browser's viewport, which is what a screenshot holds."""
    size = browser.execute_script("return [window.innerWidth, window.innerHeight];")
    return int(size[0]), int(size[1])


def png_size(path: Path) -> tuple[int, int]:
    """The width and height a PNG file declares (and that it is one)."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR"
    width, height = struct.unpack(">II", head[16:24])
    return int(width), int(height)


def fresh_person(browser: WebDriver, served: ServedExample, name: str, **options: t.Any) -> Person:
    """A person with no cookie of the app yet (the module shares one browser)."""
    browser.get(served.base + "/")
    browser.delete_all_cookies()
    callback = options.pop("callback")
    return Person(browser, name, callback, options.pop("shots"), **options)


def provider(served: ServedExample, person: Person, storage: MemoryStorage) -> OAuthClientProvider:
    return OAuthClientProvider(
        served.base + "/mcp",
        OAuthClientMetadata(
            client_name=CLIENT_NAME,
            redirect_uris=[person.callback.url],  # type: ignore[list-item]
            grant_types=["authorization_code", "refresh_token"],
            token_endpoint_auth_method="none",
        ),
        storage,
        redirect_handler=person.redirect_handler,
        callback_handler=person.callback_handler,
    )


@contextlib.asynccontextmanager
async def connect(
    served: ServedExample, auth: OAuthClientProvider, mode: str, **options: t.Any
) -> t.AsyncIterator[Client]:
    """The SDK's client of the served example, signing in with *auth*; *options* go to ``Client``."""
    http_client = httpx2.AsyncClient(auth=auth, timeout=WAIT)
    transport = streamable_http_client(served.base + "/mcp", http_client=http_client)
    async with Client(transport, mode=mode, **options) as client:
        yield client


def text(result: t.Any) -> str:
    return str(result.content[0].text)


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
async def test_alice_signs_in_approves_and_the_client_calls_whoami(
    browser: WebDriver, served: ServedExample, callback: LoopbackCallback, shots: Path, mode: str
) -> None:
    alice = fresh_person(browser, served, "alice", callback=callback, shots=shots)
    async with connect(served, provider(served, alice, MemoryStorage()), mode) as client:
        assert text(await client.call_tool("whoami", {})) == "alice"
    assert alice.logins == 1
    [seen] = alice.consents
    assert CLIENT_NAME in seen.title
    assert seen.redirect_host == f"127.0.0.1:{callback.port}"
    assert "See who you are" in seen.scopes and "notes:read" in seen.scopes
    assert "notes:write" not in seen.scopes
    # The browser ended on the client's loopback page, and nowhere else.
    assert browser.current_url.startswith(callback.url + "?")
    for picture in ("login", "consent"):
        assert png_size(shots / f"{picture}.png")[0] == viewport(browser)[0]


async def test_incremental_consent_alice_granted_notes_write_bob_refused(
    browser: WebDriver, served: ServedExample, callback: LoopbackCallback, shots: Path
) -> None:
    alice = fresh_person(browser, served, "alice", callback=callback, shots=shots)
    async with connect(served, provider(served, alice, MemoryStorage()), "legacy") as client:
        assert text(await client.call_tool("whoami", {})) == "alice"
        # write_note answers 403 insufficient_scope: the client sends alice back for the wider set.
        assert text(await client.call_tool("write_note", {"text": "hi"})) == "alice has 1 note(s)"
    assert alice.logins == 1 and alice.authorizations == 2  # still signed in the second time
    first, second = alice.consents
    assert "notes:write" not in first.scopes
    assert "Write notes in your name" in second.scopes and "notes:write" in second.scopes

    bob_storage = MemoryStorage()
    bob = fresh_person(browser, served, "bob", callback=callback, shots=None)
    async with connect(served, provider(served, bob, bob_storage), "legacy") as client:
        assert text(await client.call_tool("whoami", {})) == "bob"
        # The client steps up once more; bob's answer still lacks notes:write, so the call is refused.
        with pytest.raises(MCPError, match="notes:write"):
            await client.call_tool("write_note", {"text": "hi"})
    assert bob.authorizations == 2
    # bob was never offered notes:write (the second time nothing new could be granted: no page), nor given it.
    [seen] = bob.consents
    assert "notes:write" not in seen.scopes
    assert bob_storage.tokens is not None and bob_storage.tokens.scope == "notes:read"


async def test_the_connections_page_revokes_and_the_next_call_is_401(
    browser: WebDriver, served: ServedExample, callback: LoopbackCallback, shots: Path
) -> None:
    storage = MemoryStorage()
    alice = fresh_person(browser, served, "alice", callback=callback, shots=shots)
    async with connect(served, provider(served, alice, storage), "2026-07-28") as client:
        assert text(await client.call_tool("whoami", {})) == "alice"
    assert storage.tokens is not None and storage.client_info is not None

    browser.get(served.base + "/oauth/connections")
    table = WebDriverWait(browser, WAIT).until(lambda b: b.find_element(By.ID, "connections"))
    assert CLIENT_NAME in table.text and "See who you are" in table.text
    alice.shoot("connections")
    table.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    WebDriverWait(browser, WAIT).until(lambda b: b.find_elements(By.ID, "no-connections"))
    assert not browser.find_elements(By.ID, "connections")

    answer = requests.post(
        served.base + "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={
            "Authorization": f"Bearer {storage.tokens.access_token}",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-11-25",
        },
        timeout=WAIT,
    )
    assert answer.status_code == 401 and 'error="invalid_token"' in answer.headers["WWW-Authenticate"]
    refreshed = requests.post(
        served.base + "/oauth/token",
        data={
            "grant_type": "refresh_token",
            "refresh_token": storage.tokens.refresh_token,
            "client_id": storage.client_info.client_id,
        },
        timeout=WAIT,
    )
    assert refreshed.status_code == 400 and refreshed.json()["error"] == "invalid_grant"
