"""Sign in to an MCP server through your browser with the official SDK's OAuth client, then call a tool.

Start the server, then run the client::

    python examples/oauth_app/app.py --port 5000
    python examples/oauth_client/client.py http://127.0.0.1:5000/mcp whoami

Your browser opens the app's login page (``alice``/``alice``) and its consent
page; the app then sends the browser back to this script, on
``http://127.0.0.1:<port>/callback``, with the authorization code. The client
registers itself once and keeps its registration and its tokens in a JSON file
(``--tokens``, default ``.mcp-oauth.json``): the next run refreshes the token
instead of asking again. Needs the ``sdk`` extra (``pip install -e '.[sdk]'``).
"""

from __future__ import annotations

import argparse
import http.server
import json
import threading
import typing as t
import webbrowser
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken


class FileTokenStorage:
    """The SDK's token storage in a JSON file: the client's registration and its tokens."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _load(self) -> dict[str, t.Any]:
        return json.loads(self.path.read_text()) if self.path.exists() else {}

    def _save(self, key: str, value: t.Any) -> None:
        data = {**self._load(), key: value.model_dump(mode="json", exclude_none=True)}
        self.path.touch(mode=0o600)  # tokens are secrets: readable by you only
        self.path.write_text(json.dumps(data, indent=2))

    async def get_tokens(self) -> OAuthToken | None:
        found = self._load().get("tokens")
        return OAuthToken.model_validate(found) if found else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self._save("tokens", tokens)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        found = self._load().get("client")
        return OAuthClientInformationFull.model_validate(found) if found else None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._save("client", client_info)


class LoopbackCallback:
    """Where the browser comes back: a one-request HTTP server on this machine's loopback address."""

    def __init__(self, port: int = 0) -> None:
        self.query: dict[str, str] = {}
        received = threading.Event()
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.query = {key: values[0] for key, values in parse_qs(urlsplit(self.path).query).items()}
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; charset=utf-8")
                self.end_headers()
                self.wfile.write(b"Signed in: you may close this window.")
                received.set()

            def log_message(self, format: str, *args: t.Any) -> None:
                pass  # quiet: the terminal shows the result

        self.server = http.server.HTTPServer(("127.0.0.1", port), Handler)
        self.received = received
        self.redirect_uri = f"http://127.0.0.1:{self.server.server_port}/callback"

    async def wait(self) -> AuthorizationCodeResult:
        """The code (and state, and issuer) the browser brings back; raises what the server refused."""
        while not self.received.is_set():
            await anyio.to_thread.run_sync(self.server.handle_request)
        self.server.server_close()
        if "error" in self.query:
            raise PermissionError(f"{self.query['error']}: {self.query.get('error_description', '')}")
        return AuthorizationCodeResult(
            code=self.query["code"], state=self.query.get("state"), iss=self.query.get("iss")
        )


def oauth_client(
    url: str, tokens: Path, callback: LoopbackCallback, open_url: t.Callable[[str], t.Any] = webbrowser.open
) -> OAuthClientProvider:
    """The SDK's OAuth client for the MCP server at *url*: registers, sends you to sign in, keeps the tokens."""

    async def redirect_handler(authorization_url: str) -> None:
        print(f"Sign in at {authorization_url}")
        open_url(authorization_url)

    return OAuthClientProvider(
        url,
        OAuthClientMetadata(
            client_name="flask_mcp example client",
            redirect_uris=[callback.redirect_uri],
            grant_types=["authorization_code", "refresh_token"],
            token_endpoint_auth_method="none",
        ),
        FileTokenStorage(tokens),
        redirect_handler=redirect_handler,
        callback_handler=callback.wait,
    )


async def call(url: str, tool: str, arguments: dict[str, t.Any], auth: OAuthClientProvider) -> str:
    """Call *tool* on the server at *url* as the signed-in user; the text of its result."""
    http_client = httpx2.AsyncClient(auth=auth, timeout=60)
    async with http_client, Client(streamable_http_client(url, http_client=http_client)) as client:
        result = await client.call_tool(tool, arguments)
    return "\n".join(getattr(block, "text", "") for block in result.content)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("url", help="the MCP endpoint, e.g. http://127.0.0.1:5000/mcp")
    parser.add_argument("tool", help="the tool to call")
    parser.add_argument("arguments", nargs="?", default="{}", help="its arguments, as JSON")
    parser.add_argument("--tokens", type=Path, default=Path(".mcp-oauth.json"), help="where tokens are kept")
    parser.add_argument("--port", type=int, default=0, help="the callback's port (default: a free one)")
    options = parser.parse_args(argv)
    callback = LoopbackCallback(options.port)
    auth = oauth_client(options.url, options.tokens, callback)
    print(anyio.run(call, options.url, options.tool, json.loads(options.arguments), auth))


if __name__ == "__main__":
    main()
