"""MCP method handlers, one module per feature.

A handler takes a :class:`flask_mcp.server.Call` and returns the ``result``
object, or raises :class:`flask_mcp.jsonrpc.MCPError`. Adding a method is
adding one decorated function to the module of its feature.
"""

from __future__ import annotations

import typing as t

if t.TYPE_CHECKING:
    from ..server import Call

__all__ = ["HANDLERS", "NOTIFICATION_HANDLERS", "notification", "request"]

Handler = t.Callable[["Call"], dict[str, t.Any]]
NotificationHandler = t.Callable[["Call"], None]

#: Request method name -> handler.
HANDLERS: dict[str, Handler] = {}
#: Notification method name -> handler. Unknown notifications are ignored.
NOTIFICATION_HANDLERS: dict[str, NotificationHandler] = {}


def request(name: str) -> t.Callable[[Handler], Handler]:
    """Register the decorated function as the handler of request *name*."""

    def register(func: Handler) -> Handler:
        HANDLERS[name] = func
        return func

    return register


def notification(name: str) -> t.Callable[[NotificationHandler], NotificationHandler]:
    """Register the decorated function as the handler of notification *name*."""

    def register(func: NotificationHandler) -> NotificationHandler:
        NOTIFICATION_HANDLERS[name] = func
        return func

    return register


# Importing the feature modules registers their handlers.
from . import completion, lifecycle, prompts, resources, tools  # noqa: E402, F401
