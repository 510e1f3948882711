"""URL-mode approval end to end: the official SDK's client, the example app, and a real headless Chromium.

Alice signs in through the OAuth flow (``tests/oauth/test_consent_browser.py``'s
person), keeps a note, then asks to delete it. The tool does not run until
alice, signed in to the app in the browser, approves the exact call on the
app's approval page; bob, signed in instead, is refused the page and nothing
runs.
"""

from __future__ import annotations

import typing as t

import anyio.to_thread
import mcp_types as types
import pytest
from mcp.client import ClientRequestContext
from mcp.shared.exceptions import MCPError, UrlElicitationRequiredError
from selenium.webdriver.chrome.webdriver import WebDriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.browser import needs_chromium
from tests.oauth.served_example import LoopbackCallback, MemoryStorage, ServedExample
from tests.oauth.test_consent_browser import (
    WAIT,
    Person,
    browser,
    callback,
    connect,
    fresh_person,
    provider,
    served,
    text,
)

pytestmark = [needs_chromium, pytest.mark.anyio]

__all__ = ["browser", "callback", "served"]  # the fixtures, shared with the consent pages' tests


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def approve_in_browser(person: Person, url: str, approve: bool = True) -> str:
    """The person opens the approval page and answers it; what the page then says."""
    person.browser.get(url)
    WebDriverWait(person.browser, WAIT).until(
        lambda b: b.find_elements(By.ID, "approval-approve") or b.find_elements(By.ID, "approval-error")
    )
    if person.visible("approval-error"):
        return str(person.browser.find_element(By.ID, "approval-error").text)
    shown = person.browser.find_element(By.ID, "approval-arguments").text
    assert '"number": 1' in shown
    person.browser.find_element(By.ID, "approval-approve" if approve else "approval-deny").click()
    done = WebDriverWait(person.browser, WAIT).until(lambda b: b.find_element(By.ID, "approval-done"))
    return str(done.text)


def sign_in_only(person: Person, base: str) -> None:
    """The person signs in to the app in the browser (no client involved)."""
    person.browser.get(base + "/login")
    person.browser.find_element(By.ID, "username").send_keys(person.name)
    person.browser.find_element(By.ID, "password").send_keys(person.name)
    person.browser.find_element(By.ID, "login-submit").click()
    WebDriverWait(person.browser, WAIT).until(lambda b: not b.find_elements(By.ID, "login-submit"))


async def test_the_2025_client_is_sent_to_the_page_and_its_call_runs_once_alice_approves(
    browser: WebDriver, served: ServedExample, callback: LoopbackCallback
) -> None:
    alice = fresh_person(browser, served, "alice", callback=callback, shots=None)
    async with connect(served, provider(served, alice, MemoryStorage()), "legacy") as client:
        assert text(await client.call_tool("write_note", {"text": "to go"})) == "alice has 1 note(s)"
        with pytest.raises(MCPError) as sent:
            await client.call_tool("delete_note", {"number": 1})
        (asked,) = UrlElicitationRequiredError.from_error(sent.value.error).elicitations
        assert asked.message.startswith("Delete your note number 1?")
        # Bob, signed in on this browser instead, is refused the page: the call is alice's.
        browser.delete_all_cookies()
        bob = fresh_person(browser, served, "bob", callback=callback, shots=None)
        sign_in_only(bob, served.base)
        refused = await anyio.to_thread.run_sync(approve_in_browser, bob, asked.url)
        assert refused == "Not yours to approve"
        with pytest.raises(MCPError, match="runs only once you approve it"):
            await client.call_tool("delete_note", {"number": 1})
        browser.delete_all_cookies()
        sign_in_only(alice, served.base)
        said = await anyio.to_thread.run_sync(approve_in_browser, alice, asked.url)
        assert said == "Approved"
        assert text(await client.call_tool("delete_note", {"number": 1})) == "deleted 'to go'; 0 left"


async def test_the_2026_client_opens_the_page_from_its_elicitation_callback(
    browser: WebDriver, served: ServedExample, callback: LoopbackCallback
) -> None:
    alice = fresh_person(browser, served, "alice", callback=callback, shots=None)
    opened: list[str] = []

    async def elicitation(context: ClientRequestContext, params: t.Any) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestURLParams), params
        opened.append(params.url)
        said = await anyio.to_thread.run_sync(approve_in_browser, alice, params.url)
        return types.ElicitResult(action="accept" if said == "Approved" else "decline")

    storage = MemoryStorage()
    # The 2025 client steps up to notes:write when write_note asks for it; the tokens it keeps serve the 2026 one.
    async with connect(served, provider(served, alice, storage), "legacy") as client:
        assert text(await client.call_tool("write_note", {"text": "to go"})) == "alice has 1 note(s)"
    auth = provider(served, alice, storage)
    async with connect(served, auth, "2026-07-28", elicitation_callback=elicitation) as client:
        assert text(await client.call_tool("delete_note", {"number": 1})) == "deleted 'to go'; 0 left"
        assert len(opened) == 1 and "/mcp/approvals/" in opened[0]
        # Approved again, it runs again: and finds nothing left to delete.
        again = await client.call_tool("delete_note", {"number": 1})
        assert again.is_error is True and "you have 0" in text(again) and len(opened) == 2
