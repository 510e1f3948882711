"""examples/oauth_app with the official Python SDK's OAuth client, a user played by an HTTP session.

The app is served by a real WSGI server on a free loopback port; the SDK's
``OAuthClientProvider`` discovers the metadata, registers dynamically, and
hands its authorization URL to a redirect handler in which "the user" (a
``requests`` session) signs in and answers the consent page. The client then
calls the tools in both eras.
"""

from __future__ import annotations

import contextlib
import importlib.util
import subprocess
import sys
import threading
import typing as t
from pathlib import Path
from types import ModuleType
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
import requests
from flask import Flask
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata
from werkzeug.serving import BaseWSGIServer, make_server

from tests.oauth.served_example import MemoryStorage, sign_in

EXAMPLE = Path(__file__).resolve().parent / "oauth_app" / "app.py"
CALLBACK = "http://127.0.0.1:43117/callback"

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("example_oauth_app", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Served:
    """The example on a real threaded server; the app is built once the port is known (its canonical URL)."""

    def __init__(self, module: ModuleType, **config: t.Any) -> None:
        self.app: Flask | None = None
        self.server: BaseWSGIServer = make_server("127.0.0.1", 0, self._dispatch, threaded=True)
        self.port = self.server.server_port
        self.app = module.create_app({"MCP_OAUTH_ACCESS_TOKEN_TTL": 600, **config}, port=self.port)
        self.base = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)

    def _dispatch(self, environ: t.Any, start_response: t.Any) -> t.Any:
        assert self.app is not None
        return self.app(environ, start_response)

    def __enter__(self) -> Served:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.thread.join(timeout=10)


@pytest.fixture
def served() -> t.Iterator[Served]:
    with Served(load()) as server:
        yield server


class User:
    """A person with a browser: signs in on the app's login page and answers its consent page."""

    def __init__(self, name: str, *, approve: bool = True) -> None:
        self.name = name
        self.approve = approve
        self.session = requests.Session()
        self.result: AuthorizationCodeResult | None = None
        self.consent_pages = 0

    async def redirect_handler(self, url: str) -> None:
        answer = self.session.get(url, allow_redirects=False)
        if answer.status_code == 302 and "/login" in answer.headers["Location"]:
            base = f"{urlsplit(url).scheme}://{urlsplit(url).netloc}"
            answer = sign_in(self.session, base, answer.headers["Location"], self.name)
            assert answer.status_code == 302
            answer = self.session.get(base + answer.headers["Location"], allow_redirects=False)
        if answer.status_code == 200:  # the consent page
            self.consent_pages += 1
            html = answer.text
            marker = 'name="csrf_token" value="'
            token = html[html.index(marker) + len(marker) :].split('"', 1)[0]
            decision = "approve" if self.approve else "deny"
            answer = self.session.post(
                answer.url, data={"csrf_token": token, "decision": decision}, allow_redirects=False
            )
        assert answer.status_code == 302, answer.text
        location = answer.headers["Location"]
        assert location.startswith("http://127.0.0.1:")
        query = {key: values[0] for key, values in parse_qs(urlsplit(location).query).items()}
        if "error" in query:
            raise PermissionError(query["error"])
        self.result = AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))

    async def callback_handler(self) -> AuthorizationCodeResult:
        assert self.result is not None
        return self.result


def provider(served: Served, user: User, storage: MemoryStorage | None = None) -> OAuthClientProvider:
    return OAuthClientProvider(
        served.base + "/mcp",
        OAuthClientMetadata(
            client_name="SDK test client",
            redirect_uris=[CALLBACK],
            grant_types=["authorization_code", "refresh_token"],
            token_endpoint_auth_method="none",
        ),
        storage or MemoryStorage(),
        redirect_handler=user.redirect_handler,
        callback_handler=user.callback_handler,
    )


@contextlib.asynccontextmanager
async def connect(served: Served, auth: OAuthClientProvider, mode: str) -> t.AsyncIterator[Client]:
    http_client = httpx2.AsyncClient(auth=auth, timeout=30)
    async with Client(streamable_http_client(served.base + "/mcp", http_client=http_client), mode=mode) as client:
        yield client


def text(result: t.Any) -> str:
    return str(result.content[0].text)


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
async def test_the_sdk_client_signs_alice_in_and_calls_whoami(served: Served, mode: str) -> None:
    alice = User("alice")
    async with connect(served, provider(served, alice), mode) as client:
        assert text(await client.call_tool("whoami", {})) == "alice"
    assert alice.consent_pages == 1


async def test_a_refresh_after_expiry(served: Served) -> None:
    alice, storage = User("alice"), MemoryStorage()
    auth = provider(served, alice, storage)
    async with connect(served, auth, "legacy") as client:
        assert text(await client.call_tool("whoami", {})) == "alice"
    first = storage.tokens
    assert first is not None and first.refresh_token
    # The client believes its token expired: it refreshes instead of sending the user again.
    auth.context.token_expiry_time = 1.0
    async with connect(served, auth, "legacy") as client:
        assert text(await client.call_tool("whoami", {})) == "alice"
    assert storage.tokens is not None and storage.tokens.refresh_token != first.refresh_token
    assert alice.consent_pages == 1


async def test_revocation_makes_the_next_call_401(served: Served) -> None:
    alice, storage = User("alice"), MemoryStorage()
    async with connect(served, provider(served, alice, storage), "legacy") as client:
        assert text(await client.call_tool("whoami", {})) == "alice"
    assert storage.tokens is not None and storage.client_info is not None
    token = storage.tokens.access_token
    revoked = requests.post(
        served.base + "/oauth/revoke", data={"token": token, "client_id": storage.client_info.client_id}
    )
    assert revoked.status_code == 200
    answer = requests.post(
        served.base + "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"},
    )
    assert answer.status_code == 401 and 'error="invalid_token"' in answer.headers["WWW-Authenticate"]


async def test_incremental_consent_alice_granted_bob_denied(served: Served) -> None:
    alice = User("alice")
    async with connect(served, provider(served, alice), "legacy") as client:
        assert text(await client.call_tool("whoami", {})) == "alice"
        # write_note answers 403 insufficient_scope: the client asks again for the wider scope.
        assert text(await client.call_tool("write_note", {"text": "hi"})) == "alice has 1 note(s)"
    assert alice.consent_pages == 2
    bob = User("bob")
    async with connect(served, provider(served, bob), "legacy") as client:
        assert text(await client.call_tool("whoami", {})) == "bob"
        with pytest.raises(Exception):  # noqa: B017  (the SDK's error type for a refused authorization varies)
            await client.call_tool("write_note", {"text": "hi"})


def test_the_command_serves_on_loopback_and_prints_nothing_secret(tmp_path: Path) -> None:
    from tests.conftest import free_port

    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(EXAMPLE), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=tmp_path,
    )
    try:
        assert process.stdout is not None
        lines = []
        for line in process.stdout:
            lines.append(line)
            if "Running on" in line:
                break
        document = requests.get(f"http://127.0.0.1:{port}/.well-known/oauth-authorization-server", timeout=10).json()
        assert document["issuer"] == f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        output = "".join(lines) + (process.communicate(timeout=10)[0] or "")
    assert f"http://127.0.0.1:{port}/mcp" in output
    for secret in ("SECRET", "password", "alice/alice", "sqlite"):
        assert secret not in output


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
async def test_a_machine_client_with_the_sdks_client_credentials_provider(served: Served, mode: str) -> None:
    """A client the operator made for client_credentials: the SDK's own provider gets a token, no user."""
    assert served.app is not None
    made = served.app.test_cli_runner().invoke(
        args=["mcp", "oauth", "add-client", "nightly report", "--scope", "notes:read"]
    )
    assert made.exit_code == 0, made.output
    registered = dict(line.split(": ", 1) for line in made.output.strip().splitlines())
    storage = MemoryStorage()
    auth = ClientCredentialsOAuthProvider(
        served.base + "/mcp",
        storage,
        client_id=registered["client_id"],
        client_secret=registered["client_secret"],
        scope="notes:read",
        issuer=served.base,  # the credentials go to this authorization server only
    )
    async with connect(served, auth, mode) as client:
        assert text(await client.call_tool("whoami", {})) == registered["client_id"]
    assert storage.tokens is not None and storage.tokens.refresh_token is None
