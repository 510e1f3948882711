"""The current app's MCP state, for code that runs inside an app context.

Transports, the auth gate and the CLI read the state the extension keeps in
``app.extensions["mcp"]`` through :func:`current_state` (or :func:`state_of`
with an explicit app), so the key is spelled in one place and a missing
``init_app`` is a clear error instead of a ``KeyError``.
"""

from __future__ import annotations

import typing as t

from flask import Flask, current_app

if t.TYPE_CHECKING:
    from .state import MCPState

__all__ = ["EXTENSION_KEY", "current_state", "find_state", "state_of"]

#: Where :class:`~flask_mcp.MCP` keeps its :class:`~flask_mcp.state.MCPState` in ``app.extensions``.
EXTENSION_KEY = "mcp"


def find_state(app: Flask) -> MCPState | None:
    """The MCP state of *app*, or ``None`` before :class:`~flask_mcp.MCP` is set up on it."""
    return t.cast("MCPState | None", app.extensions.get(EXTENSION_KEY))


def state_of(app: Flask) -> MCPState:
    """The MCP state of *app*.

    :raises RuntimeError: the app has no :class:`~flask_mcp.MCP` (``MCP(app)`` or ``init_app`` was not called).
    """
    state = find_state(app)
    if state is None:
        raise RuntimeError(f"the MCP extension is not set up on app {app.name!r}: call MCP(app) or mcp.init_app(app)")
    return state


def current_state() -> MCPState:
    """The MCP state of the app handling the current request or CLI command.

    :raises RuntimeError: outside an app context, or the app has no :class:`~flask_mcp.MCP`.
    """
    return state_of(current_app)
