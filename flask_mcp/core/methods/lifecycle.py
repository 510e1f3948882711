"""Connection lifecycle and utilities: ``initialize``, ``ping``, logging level."""

from __future__ import annotations

import typing as t

from ...protocol import jsonrpc
from ...protocol.jsonrpc import INVALID_PARAMS, MCPError
from ...protocol.versions import LATEST_PROTOCOL_VERSION, LOG_LEVELS, SUPPORTED_PROTOCOL_VERSIONS
from ..task_start import serves_tasks
from ..tasks import EXTENSION
from .discover import extensions

if t.TYPE_CHECKING:
    from ..client import Call

#: The first revision with tasks (experimental there).
TASKS_SINCE = "2025-11-25"
#: What a session may store about its client: sessions stay small in the cache.
MAX_CLIENT_STATE_BYTES = 16 * 1024


def initialize(call: Call) -> dict[str, t.Any]:
    """Negotiate the protocol version: echo the client's if we speak it, else offer our latest."""
    requested = call.param("protocolVersion", str)
    capabilities = call.param("capabilities", dict, required=False) or {}
    client_info = call.param("clientInfo", dict, required=False)
    server = call.server
    if len(jsonrpc.dumps([capabilities, client_info])) > MAX_CLIENT_STATE_BYTES:
        raise MCPError(
            INVALID_PARAMS, f"Invalid params: capabilities and clientInfo exceed {MAX_CLIENT_STATE_BYTES} bytes"
        )
    state = call.state
    state.protocol_version = requested if requested in SUPPORTED_PROTOCOL_VERSIONS else LATEST_PROTOCOL_VERSION
    state.capabilities = capabilities
    state.client_info = client_info
    state.changed = True
    capabilities = server.capabilities()
    if state.protocol_version >= TASKS_SINCE and serves_tasks(server):
        # 2025-11-25's experimental tasks: tools/call may run as one, listed and cancelled.
        capabilities["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    declared = {key: value for key, value in extensions(call).items() if key != EXTENSION}
    if declared:
        # Agent Skills and MCP Apps, declared as in server/discover (tasks have their own capability here).
        capabilities["extensions"] = declared
    result: dict[str, t.Any] = {
        "protocolVersion": state.protocol_version,
        "capabilities": capabilities,
        "serverInfo": server.server_info(),
    }
    if server.instructions:
        result["instructions"] = server.instructions
    return result


def ping(call: Call) -> dict[str, t.Any]:
    """Answer with an empty result."""
    return {}


def set_level(call: Call) -> dict[str, t.Any]:
    """Remember the minimum level of log messages the client wants."""
    level = call.param("level", str)
    if level not in LOG_LEVELS:
        raise MCPError(INVALID_PARAMS, f"Invalid params: unknown log level {level!r}", {"levels": list(LOG_LEVELS)})
    call.state.log_level = level
    call.state.changed = True
    return {}


def initialized(call: Call) -> None:
    """Nothing to do: requests are served before it arrives, as clients expect."""


def cancelled(call: Call) -> None:
    """Accepted. Requests are answered synchronously, so there is nothing to stop yet."""
