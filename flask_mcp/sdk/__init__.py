"""The official MCP Python SDK (``mcp``) with flask_mcp: tasks, and an in-process client.

Install it with the ``sdk`` extra, which pins the SDK release this package
is built against. Nothing else in
flask_mcp imports this package, and it imports the SDK only when one of its
names is first used, so flask_mcp runs without the SDK.

- :class:`TasksExtension`: a client extension (the SDK's ``ClientExtension``) that
  follows a task to its result, in both eras (:mod:`flask_mcp.sdk.tasks`).
- :func:`connect` and :class:`FlaskTransport`: the SDK's ``Client`` for a
  Flask app in this process, without a socket (:mod:`flask_mcp.sdk.in_process`).
- :class:`WSGIBridge`: the ``httpx2`` transport under them, for any WSGI app.
"""

from __future__ import annotations

import importlib
import typing as t

if t.TYPE_CHECKING:
    from .in_process import FlaskTransport, connect
    from .tasks import TaskCancelledError, TasksExtension, TaskUpdate
    from .wsgi_bridge import WSGIBridge

__all__ = [
    "FlaskTransport",
    "TaskCancelledError",
    "TaskUpdate",
    "TasksExtension",
    "WSGIBridge",
    "connect",
]

#: Where each public name is defined.
_HOMES = {
    "FlaskTransport": "in_process",
    "connect": "in_process",
    "TaskCancelledError": "tasks",
    "TaskUpdate": "tasks",
    "TasksExtension": "tasks",
    "WSGIBridge": "wsgi_bridge",
}
#: The distributions the ``sdk`` extra installs, by the top-level module they provide.
_SDK_MODULES = {"mcp", "mcp_types", "httpx2"}


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})


def __getattr__(name: str) -> t.Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        module = importlib.import_module(f"{__name__}.{home}")
    except ModuleNotFoundError as missing:
        if (missing.name or "").split(".")[0] in _SDK_MODULES:
            raise ImportError(
                f"flask_mcp.sdk.{name} needs the official MCP SDK: install flask_mcp with its sdk extra (mcp==2.3.0)"
            ) from missing
        raise
    value = getattr(module, name)
    globals()[name] = value  # found directly from now on
    return value
