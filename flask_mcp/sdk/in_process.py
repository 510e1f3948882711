"""The official SDK's ``Client`` connected to a Flask app in this process, without a socket.

FastMCP tests a server with ``Client(server)`` in memory; this is the same
for a Flask app::

    from flask_mcp.sdk import connect

    async with connect(app) as client:  # an mcp.Client
        result = await client.call_tool("add", {"a": 1, "b": 2})

The client is the SDK's own (its ``ClientSession``, its types, its
negotiation in either era: ``mode="legacy"`` for the handshake, a modern
version or ``"auto"``), and it speaks Streamable HTTP to the app, as it
would over the network: every request goes through the app's WSGI stack
(its middleware, ``before_request`` hooks, authentication, the endpoint)
in a thread of its own, and event streams come back chunk by chunk
(:class:`~flask_mcp.sdk.wsgi_bridge.WSGIBridge`).
"""

from __future__ import annotations

import contextlib
import typing as t

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from ..auth.gate import TEST_PRINCIPAL_KEY
from ..globals import state_of
from ..policies.principal import Principal
from .wsgi_bridge import WSGIBridge

if t.TYPE_CHECKING:
    from types import TracebackType

    from flask import Flask
    from mcp.client import Transport
    from mcp.client._transport import TransportStreams

__all__ = ["FlaskTransport", "connect"]

#: The host the client's requests name when the app has no ``SERVER_NAME``.
DEFAULT_HOST = "localhost"


class FlaskTransport:
    """A :class:`mcp.client.Transport` to *app*'s MCP endpoint, in this process: ``Client(FlaskTransport(app))``.

    :param app: the Flask app.
    :param path: the endpoint; by default where the app's MCP server (*server*) was registered.
    :param server: which of the app's MCP servers (by blueprint name) when it has several.
    :param token: a bearer token sent with every request (``Authorization: Bearer ...``).
    :param headers: more headers for every request (an API key, a cookie, an ``Origin``...).
    :param principal: the caller every request is authenticated as, without a credential, in an
        app in testing mode (``TESTING = True``) only, as
        :class:`MCPTestClient(principal=...) <flask_mcp.testing.MCPTestClient>` does.
    :param environ: more WSGI environ keys for every request (``REMOTE_ADDR``...).
    :param terminate_on_close: in the handshake era, end the session (``DELETE``) when the client closes.
    """

    def __init__(
        self,
        app: Flask,
        path: str | None = None,
        *,
        server: str | None = None,
        token: str | None = None,
        headers: t.Mapping[str, str] | None = None,
        principal: Principal | str | None = None,
        environ: t.Mapping[str, t.Any] | None = None,
        terminate_on_close: bool = True,
    ) -> None:
        if path is None:
            state = state_of(app, server)
            path = state.endpoint_path or state.settings.url_prefix
        scheme = app.config.get("PREFERRED_URL_SCHEME") or "http"
        host = app.config.get("SERVER_NAME") or DEFAULT_HOST
        #: The endpoint's URL, as the client names it (no request leaves the process).
        self.url = f"{scheme}://{host}{path}"
        self.headers = dict(headers or {})
        if token is not None:
            self.headers["Authorization"] = f"Bearer {token}"
        wsgi_environ = dict(environ or {})
        if principal is not None:
            wsgi_environ[TEST_PRINCIPAL_KEY] = Principal(principal) if isinstance(principal, str) else principal
        self.bridge = WSGIBridge(app, environ=wsgi_environ)
        self.terminate_on_close = terminate_on_close
        self._stack: contextlib.AsyncExitStack | None = None

    async def __aenter__(self) -> TransportStreams:
        """Open the client's HTTP side; the SDK's read and write streams."""
        if self._stack is not None:
            raise RuntimeError("this FlaskTransport is already open; make one per client")
        async with contextlib.AsyncExitStack() as stack:
            http = await stack.enter_async_context(httpx2.AsyncClient(transport=self.bridge, headers=self.headers))
            streams = await stack.enter_async_context(
                streamable_http_client(self.url, http_client=http, terminate_on_close=self.terminate_on_close)
            )
            self._stack = stack.pop_all()
        return streams

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        """Close the client's streams (and, in the handshake era, end its session)."""
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.__aexit__(exc_type, exc, traceback)


def connect(
    app: Flask,
    path: str | None = None,
    *,
    server: str | None = None,
    token: str | None = None,
    headers: t.Mapping[str, str] | None = None,
    principal: Principal | str | None = None,
    environ: t.Mapping[str, t.Any] | None = None,
    **client_options: t.Any,
) -> Client:
    """The SDK's :class:`mcp.Client` for *app*, in this process; enter it with ``async with``.

    *path*, *server*, *token*, *headers*, *principal* and *environ* are
    :class:`FlaskTransport`'s; every other keyword is the ``Client``'s own
    (``mode=``, ``elicitation_callback=``, ``extensions=``,
    ``read_timeout_seconds=``...).
    """
    transport: Transport = FlaskTransport(
        app, path, server=server, token=token, headers=headers, principal=principal, environ=environ
    )
    return Client(transport, **client_options)
