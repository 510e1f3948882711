"""The MCP servers of an app, and the current one, for code that runs inside an app context.

An app may serve several :class:`~flask_mcp.MCP` extensions, each with its
own blueprint, URL, settings (its ``config_prefix``), components and auth.
The first one set up is the app's *default* server, kept in
``app.extensions["mcp"]`` as it always was; all of them are in
``app.extensions["mcp_servers"]`` by blueprint name.

Which one is *current*:

- in a request to one of a server's routes (its endpoint, REST routes,
  metadata), that server;
- in a CLI command, the one ``flask mcp --server NAME`` chose (or
  :func:`use_server`);
- otherwise the default one.

Transports, the auth gate and the CLI read it through :func:`current_state`
(or :func:`state_of` with an explicit app); :data:`current_mcp` is the
current :class:`~flask_mcp.MCP` object itself.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import typing as t

from flask import Flask, current_app, has_request_context, request
from werkzeug.local import LocalProxy

if t.TYPE_CHECKING:
    from .binding.state import MCPState
    from .extension import MCP

__all__ = [
    "EXTENSION_KEY",
    "SERVERS_KEY",
    "Servers",
    "current_mcp",
    "current_state",
    "find_state",
    "servers_of",
    "state_for",
    "state_of",
    "use_server",
]

#: Where the app's default :class:`~flask_mcp.MCP` keeps its :class:`~flask_mcp.binding.state.MCPState`.
EXTENSION_KEY = "mcp"
#: Where every MCP server of the app is kept (:class:`Servers`).
SERVERS_KEY = "mcp_servers"

#: The server a CLI command (or :func:`use_server`) chose, by blueprint name.
_chosen: contextvars.ContextVar[str | None] = contextvars.ContextVar("flask_mcp_server", default=None)


@dataclasses.dataclass
class Servers:
    """The MCP servers set up on one app."""

    #: Each server's state by its blueprint's name, in the order they were set up.
    by_name: dict[str, MCPState] = dataclasses.field(default_factory=dict)
    #: Each server's state by the full (dotted) name its blueprint was registered under.
    by_blueprint: dict[str, MCPState] = dataclasses.field(default_factory=dict)

    def named(self, name: str) -> MCPState:
        """The server whose blueprint is *name*.

        :raises RuntimeError: no such server, naming those there are.
        """
        state = self.by_name.get(name) or self.by_blueprint.get(name)
        if state is None:
            raise RuntimeError(f"no MCP server named {name!r} on this app; its servers are {', '.join(self.by_name)}")
        return state


def servers_of(app: Flask) -> Servers:
    """Every MCP server of *app* (none before :class:`~flask_mcp.MCP` is set up on it)."""
    return t.cast(Servers, app.extensions.get(SERVERS_KEY)) or Servers()


def find_state(app: Flask) -> MCPState | None:
    """The state of *app*'s default MCP server, or ``None`` before :class:`~flask_mcp.MCP` is set up on it."""
    return t.cast("MCPState | None", app.extensions.get(EXTENSION_KEY))


def state_for(app: Flask, mcp: object) -> MCPState | None:
    """The state of the extension *mcp* (an :class:`~flask_mcp.MCP`) on *app*; ``None`` when it is not set up there."""
    servers = app.extensions.get(SERVERS_KEY)
    if servers is None:
        return None
    for state in t.cast(Servers, servers).by_name.values():
        if state.mcp is mcp:
            return state
    return None


def state_of(app: Flask, name: str | None = None) -> MCPState:
    """The state of *app*'s MCP server *name* (by blueprint name); by default the one :func:`use_server` chose,
    else the default server.

    :raises RuntimeError: the app has no :class:`~flask_mcp.MCP` (``MCP(app)`` or
        ``init_app`` was not called), or none named *name*.
    """
    state = find_state(app)
    if state is None:
        raise RuntimeError(f"the MCP extension is not set up on app {app.name!r}: call MCP(app) or mcp.init_app(app)")
    name = name or _chosen.get()
    return state if name is None else servers_of(app).named(name)


def current_state() -> MCPState:
    """The state of the current MCP server of the app handling the current request or CLI command.

    :raises RuntimeError: outside an app context, or the app has no :class:`~flask_mcp.MCP`.
    """
    app = current_app
    servers: Servers | None = app.extensions.get(SERVERS_KEY)
    if servers is not None and len(servers.by_name) > 1 and has_request_context():
        # Several servers: the one whose route the request reached.
        state = servers.by_blueprint.get(request.blueprint or "")
        if state is not None:
            return state
    return state_of(app)


@contextlib.contextmanager
def use_server(name: str | None) -> t.Iterator[None]:
    """Make the server whose blueprint is *name* the current one outside requests (``None``: the default).

    ``flask mcp --server NAME`` does this for its commands; use it in scripts
    and tests that call :func:`current_state` or :func:`state_of` without a request.
    """
    token = _chosen.set(name)
    try:
        yield
    finally:
        _chosen.reset(token)


def _current_mcp() -> MCP:
    return current_state().mcp


#: The current :class:`~flask_mcp.MCP` (see the module's docstring for which one that is).
current_mcp: MCP = t.cast("MCP", LocalProxy(_current_mcp))
