"""examples/oauth_app on a real threaded server, and a loopback server that receives the authorization answer.

The example's canonical URL holds its port, so the app is built once the
listening socket is bound. The callback server plays a native client's
loopback redirect URI (RFC 8252): whatever the browser is sent to there is
kept for the test to read. :class:`MemoryStorage` is the SDK clients' token storage.
"""

from __future__ import annotations

import importlib.util
import queue
import threading
import typing as t
from pathlib import Path
from types import ModuleType
from urllib.parse import parse_qsl, urlsplit

from flask import Flask
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from werkzeug.serving import BaseWSGIServer, make_server
from werkzeug.wrappers import Request, Response

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "oauth_app" / "app.py"


def load_example() -> ModuleType:
    """A fresh import of ``examples/oauth_app/app.py`` (its users' notes start empty)."""
    spec = importlib.util.spec_from_file_location("example_oauth_app_served", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Threaded:
    """A werkzeug server in a thread, stopped and joined on exit."""

    def __init__(self, application: t.Any) -> None:
        self.server: BaseWSGIServer = make_server("127.0.0.1", 0, application, threaded=True)
        self.port = self.server.server_port
        self.base = f"http://127.0.0.1:{self.port}"
        # serve_forever polls for shutdown; its default half second would slow every test down.
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.thread.join(timeout=10)
        self.server.server_close()


class ServedExample(_Threaded):
    """The example app on a free loopback port: ``base`` is its origin, ``base + "/mcp"`` the endpoint."""

    def __init__(self, **config: t.Any) -> None:
        self.app: Flask | None = None
        super().__init__(self._dispatch)
        self.app = load_example().create_app({"MCP_OAUTH_ACCESS_TOKEN_TTL": 600, **config}, port=self.port)

    def _dispatch(self, environ: t.Any, start_response: t.Any) -> t.Any:
        assert self.app is not None
        return self.app(environ, start_response)

    def __enter__(self) -> ServedExample:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class LoopbackCallback(_Threaded):
    """``http://127.0.0.1:<port>/callback``: each request's query parameters go to :meth:`next_answer`."""

    def __init__(self) -> None:
        super().__init__(self._receive)
        self.url = f"{self.base}/callback"
        self.answers: queue.Queue[dict[str, str]] = queue.Queue()

    def _receive(self, environ: t.Any, start_response: t.Any) -> t.Any:
        request = Request(environ)
        if request.path != "/callback":
            return Response("not here", status=404)(environ, start_response)
        self.answers.put(dict(parse_qsl(urlsplit(request.url).query)))
        page = "<!doctype html><title>Connected</title><p id='callback-done'>You may close this window.</p>"
        return Response(page, content_type="text/html; charset=utf-8")(environ, start_response)

    def next_answer(self, timeout: float) -> dict[str, str]:
        """The query of the next request the browser made here (waits up to *timeout* seconds)."""
        return self.answers.get(timeout=timeout)

    def received(self) -> bool:
        """Whether an answer is waiting."""
        return not self.answers.empty()

    def __enter__(self) -> LoopbackCallback:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class MemoryStorage:
    """The SDK's token storage, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


def sign_in(session: t.Any, base: str, login_location: str, name: str) -> t.Any:
    """A person on the example's login page (``requests`` session): load the form, then post it with its
    CSRF token; the password of the demo users is their name. Returns the answer to the post."""
    login = urlsplit(login_location)
    url = f"{base}{login.path}?{login.query}"
    form = session.get(url, allow_redirects=False, timeout=30)
    marker = 'name="csrf_token" value="'
    token = form.text[form.text.index(marker) + len(marker) :].split('"', 1)[0]
    data = {"csrf_token": token, "username": name, "password": name}
    return session.post(url, data=data, allow_redirects=False, timeout=30)
