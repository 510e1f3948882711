"""``server/discover`` (2026-07-28): what the server is and speaks, without a handshake."""

from __future__ import annotations

import typing as t

from ...protocol.versions import ALL_PROTOCOL_VERSIONS
from ..task_start import serves_tasks
from ..tasks import EXTENSION
from . import skills

if t.TYPE_CHECKING:
    from ..client import Call


def discover(call: Call) -> dict[str, t.Any]:
    """Every revision served (newest first), the capabilities and the instructions.

    ``serverInfo``, ``resultType`` and the cache hints are added to every
    modern result alike (:mod:`flask_mcp.core.modern`).
    """
    server = call.server
    capabilities = server.capabilities()
    if serves_tasks(server):
        capabilities["extensions"] = {**capabilities.get("extensions", {}), EXTENSION: {}}
    declared = skills.declaration(call)
    if declared is not None:
        capabilities["extensions"] = {**capabilities.get("extensions", {}), skills.EXTENSION: declared}
    result: dict[str, t.Any] = {
        "supportedVersions": list(ALL_PROTOCOL_VERSIONS),
        "capabilities": capabilities,
    }
    if server.instructions:
        result["instructions"] = server.instructions
    return result
