"""The REST docs page in a real headless Chromium: Swagger UI from the installed package, Authorize, Try it out.

The app runs under a real WSGI server (werkzeug, in a thread) with static
bearer tokens; the browser loads ``/mcp/rest/docs`` and everything it needs
from the app alone (nothing else is reachable), under the page's
Content-Security-Policy, whose violations Chromium would log.
"""

from __future__ import annotations

import json
import typing as t

import pytest
from flask import Flask
from selenium.webdriver.chrome.webdriver import WebDriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from flask_mcp import MCP, ScopeRequired
from tests.browser import headless_chromium, needs_chromium, policy_violations

if t.TYPE_CHECKING:
    from tests.conftest import LiveServer

pytestmark = needs_chromium

TOKEN = "s3cr3t-for-the-browser"
#: Seconds an explicit wait may take: a cold Chromium parses 1.7 MB of Swagger UI.
WAIT = 30
ADD = "operations-tools-add"


@pytest.fixture(scope="module")
def browser() -> t.Iterator[WebDriver]:
    """One headless Chromium for the module, logging the page's console (CSP violations)."""
    with headless_chromium(capabilities={"goog:loggingPrefs": {"browser": "ALL"}}) as driver:
        yield driver


def calculator(**config: t.Any) -> Flask:
    """An app with one tool that needs the scope ``math``, and a static token that has it."""
    mcp = MCP(name="calculator", version="1.0.0")

    @mcp.tool(permissions=[ScopeRequired("math")])
    def add(a: int, b: int = 0) -> int:
        """Add two integers."""
        return a + b

    app = Flask("calculator")
    app.config.update(
        MCP_STATELESS=True,
        MCP_AUTH_TOKENS={TOKEN: {"subject": "ada", "scopes": ["math"]}},
        MCP_SWAGGER_UI_URL="",
        **config,
    )
    mcp.init_app(app)
    return app


def wait(driver: WebDriver) -> WebDriverWait[WebDriver]:
    return WebDriverWait(driver, WAIT)


def open_docs(driver: WebDriver, url: str) -> None:
    policy_violations(driver)  # forget what an earlier test left in the console
    driver.get(f"{url}/mcp/rest/docs")


def live_status(driver: WebDriver) -> str:
    """The status code of the last response shown under the operation ("" until there is one)."""
    cells = driver.find_elements(By.CSS_SELECTOR, f"#{ADD} .live-responses-table .response .response-col_status")
    return cells[0].text.strip() if cells else ""


def execute(driver: WebDriver, status: str) -> WebElement:
    """Press Execute and wait until the response shown has *status*; returns its body's element."""
    driver.find_element(By.CSS_SELECTOR, f"#{ADD} .execute").click()
    wait(driver).until(lambda d: live_status(d) == status)
    return driver.find_element(By.CSS_SELECTOR, f"#{ADD} .live-responses-table .response-col_description pre")


def test_authorize_and_try_a_tool(browser: WebDriver, live_server: t.Callable[[Flask], LiveServer]) -> None:
    """A protected app that publishes its document: the page renders its operations and offers Authorize."""
    with live_server(calculator(MCP_AUTH_OPENAPI=False)) as server:
        open_docs(browser, server.url)
        operation = wait(browser).until(ec.visibility_of_element_located((By.ID, ADD)))
        assert not browser.find_element(By.ID, "openapi-unauthorized").is_displayed()
        assert browser.find_elements(By.CSS_SELECTOR, "#swagger-ui .errors-wrapper") == []
        assert "/mcp/rest/tools/add" in operation.text
        assert "Add two integers." in operation.text
        authorize = wait(browser).until(ec.visibility_of_element_located((By.CSS_SELECTOR, ".auth-wrapper .authorize")))
        assert "Authorize" in authorize.text

        operation.find_element(By.CSS_SELECTOR, ".opblock-summary-control").click()
        wait(browser).until(ec.element_to_be_clickable((By.CSS_SELECTOR, f"#{ADD} .try-out__btn"))).click()
        body = wait(browser).until(ec.visibility_of_element_located((By.CSS_SELECTOR, f"#{ADD} textarea")))
        body.send_keys(Keys.CONTROL, "a")
        body.send_keys('{"a": 2, "b": 3}')
        # Without a token the tool is refused: what Authorize changes next is real.
        execute(browser, "401")

        authorize.click()
        token_field = wait(browser).until(ec.visibility_of_element_located((By.CSS_SELECTOR, ".auth-container input")))
        token_field.send_keys(TOKEN)
        browser.find_element(By.CSS_SELECTOR, ".auth-btn-wrapper .authorize").click()
        wait(browser).until(ec.element_to_be_clickable((By.CSS_SELECTOR, ".auth-btn-wrapper .btn-done"))).click()
        wait(browser).until(ec.invisibility_of_element_located((By.CSS_SELECTOR, ".modal-ux")))

        shown = execute(browser, "200")
        assert json.loads(shown.text) == {"result": 5}
        curl = browser.find_element(By.CSS_SELECTOR, f"#{ADD} .curl-command").text
        assert f"Authorization: Bearer {TOKEN}" in curl
    assert policy_violations(browser) == []


def paste_token(browser: WebDriver) -> None:
    wait(browser).until(ec.element_to_be_clickable((By.CSS_SELECTOR, ".auth-wrapper .authorize"))).click()
    token_field = wait(browser).until(ec.visibility_of_element_located((By.CSS_SELECTOR, ".auth-container input")))
    token_field.send_keys(TOKEN)
    browser.find_element(By.CSS_SELECTOR, ".auth-btn-wrapper .authorize").click()
    wait(browser).until(ec.element_to_be_clickable((By.CSS_SELECTOR, ".auth-btn-wrapper .btn-done"))).click()


@pytest.mark.parametrize("setting", [{}, {"MCP_AUTH_OPENAPI": True}])
def test_a_protected_document_loads_once_signed_in(
    browser: WebDriver, live_server: t.Callable[[Flask], LiveServer], setting: dict[str, t.Any]
) -> None:
    """A protected app's document needs a token (by default): the page asks to sign in, then loads it."""
    with live_server(calculator(**setting)) as server:
        open_docs(browser, server.url)
        note = wait(browser).until(ec.visibility_of_element_located((By.ID, "openapi-unauthorized")))
        assert "signed-in callers only" in note.text and "MCP_AUTH_OPENAPI = False" in note.text
        assert browser.find_elements(By.ID, ADD) == []
        assert browser.find_elements(By.CSS_SELECTOR, "#swagger-ui .errors-wrapper") == []
        paste_token(browser)
        operation = wait(browser).until(ec.visibility_of_element_located((By.ID, ADD)))
        assert "Add two integers." in operation.text
        assert not browser.find_element(By.ID, "openapi-unauthorized").is_displayed()
        operation.find_element(By.CSS_SELECTOR, ".opblock-summary-control").click()
        wait(browser).until(ec.element_to_be_clickable((By.CSS_SELECTOR, f"#{ADD} .try-out__btn"))).click()
        body = wait(browser).until(ec.visibility_of_element_located((By.CSS_SELECTOR, f"#{ADD} textarea")))
        body.send_keys(Keys.CONTROL, "a")
        body.send_keys('{"a": 2, "b": 3}')
        assert json.loads(execute(browser, "200").text) == {"result": 5}
    assert policy_violations(browser) == []
