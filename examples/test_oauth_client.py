"""examples/oauth_client/client.py, the snippet of docs/oauth-clients.rst, signed in headlessly.

The script runs as a user would run it, against examples/oauth_app on a real
server; only the browser is played: a ``requests`` session that signs in, approves
the consent page and follows the redirect back to the script's loopback callback,
in a thread of its own as a real browser is a process of its own.
"""

from __future__ import annotations

import json
import runpy
import stat
import threading
import typing as t
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urlsplit

import anyio
import pytest
import requests

from examples.test_oauth_app import Served, load
from tests.oauth.served_example import sign_in

SCRIPT = Path(__file__).resolve().parent / "oauth_client" / "client.py"


def load_script() -> t.Any:
    """The script's functions and classes, as a namespace (run as a file, not as ``__main__``)."""
    return SimpleNamespace(**runpy.run_path(str(SCRIPT)))


class Browser:
    """A person at a browser: opens the URL, signs in, approves, and is sent back to the callback."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.opened: list[str] = []
        self.threads: list[threading.Thread] = []
        self.failure: BaseException | None = None

    def open(self, url: str) -> bool:
        self.opened.append(url)
        thread = threading.Thread(target=self._visit, args=(url,))
        self.threads.append(thread)
        thread.start()
        return True

    def _visit(self, url: str) -> None:
        try:
            session = requests.Session()
            base = f"{urlsplit(url).scheme}://{urlsplit(url).netloc}"
            answer = session.get(url, allow_redirects=False, timeout=30)
            assert answer.status_code == 302 and "/login" in answer.headers["Location"], answer.text
            answer = sign_in(session, base, answer.headers["Location"], self.name)
            answer = session.get(base + answer.headers["Location"], allow_redirects=False, timeout=30)
            marker = 'name="csrf_token" value="'
            token = answer.text[answer.text.index(marker) + len(marker) :].split('"', 1)[0]
            data = {"csrf_token": token, "decision": "approve"}
            answer = session.post(answer.url, data=data, allow_redirects=False, timeout=30)
            # Back to the script's loopback callback, as the browser would go.
            back = session.get(answer.headers["Location"], timeout=30)
            assert back.status_code == 200 and "Signed in" in back.text
        except BaseException as exc:  # reported by the test, not lost in the thread
            self.failure = exc

    def join(self) -> None:
        for thread in self.threads:
            thread.join(timeout=30)
        if self.failure is not None:
            raise self.failure


@pytest.fixture
def served() -> t.Iterator[Served]:
    with Served(load()) as server:
        yield server


def test_the_script_signs_in_through_the_browser_then_refreshes_without_it(served: Served, tmp_path: Path) -> None:
    client = load_script()
    url, tokens = served.base + "/mcp", tmp_path / "tokens.json"
    alice = Browser("alice")
    auth = client.oauth_client(url, tokens, client.LoopbackCallback(), open_url=alice.open)
    assert anyio.run(client.call, url, "whoami", {}, auth) == "alice"
    alice.join()
    assert len(alice.opened) == 1 and alice.opened[0].startswith(served.base + "/oauth/authorize?")
    kept = json.loads(tokens.read_text())
    assert kept["tokens"]["access_token"] and kept["tokens"]["refresh_token"] and kept["client"]["client_id"]
    assert stat.S_IMODE(tokens.stat().st_mode) == 0o600
    # The next run finds its registration and tokens in the file: no browser at all.
    nobody = Browser("nobody")
    again = client.oauth_client(url, tokens, client.LoopbackCallback(), open_url=nobody.open)
    assert anyio.run(client.call, url, "whoami", {}, again) == "alice"
    assert nobody.opened == []


def test_a_denied_consent_is_an_error_not_a_hang(served: Served, tmp_path: Path) -> None:
    client = load_script()
    callback = client.LoopbackCallback()
    denied = {"error": "access_denied", "error_description": "the user said no"}

    def deny(url: str) -> bool:
        # The authorization server sends the browser back with an error, as after "Deny".
        thread = threading.Thread(target=requests.get, args=(callback.redirect_uri,), kwargs={"params": denied})
        thread.start()
        return True

    auth = client.oauth_client(served.base + "/mcp", tmp_path / "tokens.json", callback, open_url=deny)
    with pytest.raises(BaseException) as raised:
        anyio.run(client.call, served.base + "/mcp", "whoami", {}, auth)
    assert any("access_denied: the user said no" in str(error) for error in leaves(raised.value)), raised.value


def leaves(error: BaseException) -> t.Iterator[BaseException]:
    """*error*, or every exception inside it when it is a group (the SDK's task groups raise those)."""
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            yield from leaves(inner)
    else:
        yield error
