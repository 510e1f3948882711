"""Debian's headless Chromium for the tests that need a real browser.

Both binaries are given to Selenium, so selenium-manager has nothing to look
up or download; each browser gets a fresh profile and no network of its own
(background networking, updates and sync are off). Tests that use it are
marked with :data:`needs_chromium`, which skips them, saying why, only when
the binaries cannot be had. :func:`policy_violations` reads what the console
said about a page's Content-Security-Policy (a browser started with the
``goog:loggingPrefs`` capability keeps it).
"""

from __future__ import annotations

import contextlib
import tempfile
import typing as t
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.chrome.webdriver import WebDriver

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")

#: Skips a test, saying why, when Debian's Chromium or its driver is missing.
needs_chromium = pytest.mark.skipif(
    not (CHROMIUM.is_file() and CHROMEDRIVER.is_file()),
    reason="needs /usr/bin/chromium and /usr/bin/chromedriver (Debian packages chromium and chromium-driver, "
    "which .ci/run installs)",
)

_ARGUMENTS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # A window in the background (the page, once the sign-in window it opened is in front) is not
    # throttled: under a loaded machine a throttled window's navigation can stall the driver's command.
    "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows",
    "--disable-renderer-backgrounding",
)
#: Seconds a navigation may take before the driver's command fails: less than the 120 s Selenium's
#: client waits for the driver's answer, so that a stalled page fails its test saying so, at once.
PAGE_LOAD_TIMEOUT = 60


def policy_violations(driver: WebDriver) -> list[str]:
    """What the console said about the page's Content-Security-Policy since the last call."""
    entries: list[dict[str, t.Any]] = driver.get_log("browser")  # type: ignore[no-untyped-call]
    return [entry["message"] for entry in entries if "Content Security Policy" in entry["message"]]


@contextlib.contextmanager
def headless_chromium(*arguments: str, capabilities: t.Mapping[str, t.Any] | None = None) -> t.Iterator[WebDriver]:
    """A headless Chromium with a fresh profile, given *arguments* beside the usual ones; quit on exit."""
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = str(CHROMIUM)
        for argument in (*_ARGUMENTS, *arguments, f"--user-data-dir={profile}"):
            options.add_argument(argument)
        for name, value in (capabilities or {}).items():
            options.set_capability(name, value)
        driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
        try:
            driver.set_page_load_timeout(PAGE_LOAD_TIMEOUT)
            yield driver
        finally:
            driver.quit()
