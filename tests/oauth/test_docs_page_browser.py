"""The REST docs page signs in through the app's own authorization server, in a real headless Chromium.

``examples/oauth_app`` runs on a real server; the page, a protected app's,
shows no tool and asks to sign in. **Authorize** then runs the code flow
with PKCE against the app's own endpoints, as the public client the server
knows the page as (nothing to paste): the user signs in on the app's login
page and allows on its consent page in the window Swagger UI opens, and the
page loads the document with the token and calls a tool with it.
"""

from __future__ import annotations

import json
import typing as t

import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.chrome.webdriver import WebDriver
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from tests.browser import headless_chromium, needs_chromium, policy_violations
from tests.oauth.served_example import ServedExample

pytestmark = needs_chromium

WAIT = 30
WHOAMI = "operations-tools-whoami"


@pytest.fixture(scope="module")
def browser() -> t.Iterator[WebDriver]:
    with headless_chromium(capabilities={"goog:loggingPrefs": {"browser": "ALL"}}) as driver:
        yield driver


def wait(driver: WebDriver) -> WebDriverWait[WebDriver]:
    return WebDriverWait(driver, WAIT)


def click_again_if_stale(browser: WebDriver, selector: str) -> None:
    """Click *selector*, looking it up again when the page re-rendered it in between."""

    def clicked(driver: WebDriver) -> bool:
        # By script: the dialog's close button is an icon the driver may judge not interactable.
        driver.execute_script("arguments[0].click();", driver.find_element(By.CSS_SELECTOR, selector))
        return True

    WebDriverWait(browser, WAIT, ignored_exceptions=(StaleElementReferenceException,)).until(clicked)


def authorize_with_oauth(browser: WebDriver) -> None:
    """Open Authorize and press the authorization code flow's own Authorize button."""
    wait(browser).until(ec.element_to_be_clickable((By.CSS_SELECTOR, ".auth-wrapper .authorize"))).click()
    dialog = wait(browser).until(ec.visibility_of_element_located((By.CSS_SELECTOR, ".modal-ux")))
    flows = [
        block
        for block in dialog.find_elements(By.CSS_SELECTOR, ".auth-container")
        if "authorizationCode" in block.text or "Authorization Code" in block.text
    ]
    assert flows, dialog.text
    code_flow: WebElement = flows[0]
    client_id = code_flow.find_element(By.CSS_SELECTOR, "input#client_id_authorizationCode")
    assert client_id.get_attribute("value") == "flask-mcp-docs"  # the page's own client: nothing to paste
    button = code_flow.find_element(By.CSS_SELECTOR, ".auth-btn-wrapper .authorize")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", button)
    wait(browser).until(ec.element_to_be_clickable(button)).click()


def sign_in_in_the_window_it_opens(browser: WebDriver, page: str, name: str) -> None:
    wait(browser).until(lambda driver: len(driver.window_handles) == 2)
    browser.switch_to.window(next(handle for handle in browser.window_handles if handle != page))
    wait(browser).until(ec.element_to_be_clickable((By.ID, "login-submit")))
    browser.find_element(By.ID, "username").send_keys(name)
    browser.find_element(By.ID, "password").send_keys(name)
    browser.find_element(By.ID, "login-submit").click()
    approve = wait(browser).until(ec.element_to_be_clickable((By.ID, "consent-approve")))
    # The page is a client the operator made: no unverified mark.
    assert "API documentation" in browser.find_element(By.ID, "consent-title").text
    assert not browser.find_elements(By.ID, "consent-unverified")
    approve.click()
    # oauth2-redirect.html hands the code to the page and closes its window.
    wait(browser).until(lambda driver: len(driver.window_handles) == 1)
    browser.switch_to.window(page)


def test_the_docs_page_signs_in_through_the_apps_own_server(browser: WebDriver) -> None:
    with ServedExample(MCP_SWAGGER_UI_URL="") as served:
        policy_violations(browser)  # forget what an earlier test left in the console
        browser.get(f"{served.base}/mcp/rest/docs")
        page = browser.current_window_handle
        note = wait(browser).until(ec.visibility_of_element_located((By.ID, "openapi-unauthorized")))
        assert "signed-in callers only" in note.text
        assert browser.find_elements(By.ID, WHOAMI) == []  # a protected app's tools are not public

        authorize_with_oauth(browser)
        sign_in_in_the_window_it_opens(browser, page, "alice")
        # Signed in: the flow now offers Logout; the dialog re-renders, so its Close is found afresh.
        wait(browser).until(ec.text_to_be_present_in_element((By.CSS_SELECTOR, ".modal-ux"), "Logout"))
        click_again_if_stale(browser, ".modal-ux .close-modal")

        operation = wait(browser).until(ec.visibility_of_element_located((By.ID, WHOAMI)))
        assert not browser.find_element(By.ID, "openapi-unauthorized").is_displayed()
        operation.find_element(By.CSS_SELECTOR, ".opblock-summary-control").click()
        wait(browser).until(ec.element_to_be_clickable((By.CSS_SELECTOR, f"#{WHOAMI} .try-out__btn"))).click()
        wait(browser).until(ec.element_to_be_clickable((By.CSS_SELECTOR, f"#{WHOAMI} .execute"))).click()
        shown = wait(browser).until(
            ec.visibility_of_element_located(
                (By.CSS_SELECTOR, f"#{WHOAMI} .live-responses-table .response-col_description pre")
            )
        )
        assert json.loads(shown.text) == {"result": "alice"}
        assert policy_violations(browser) == []
