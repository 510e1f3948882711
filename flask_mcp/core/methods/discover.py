"""``server/discover`` (2026-07-28): what the server is and speaks, without a handshake."""

from __future__ import annotations

import typing as t

from ...protocol.versions import ALL_PROTOCOL_VERSIONS
from ..task_start import serves_tasks
from ..tasks import EXTENSION
from . import skills

if t.TYPE_CHECKING:
    from ..client import Call


#: The MCP Apps extension (SEP-1865), declared when a tool has a view.
APPS_EXTENSION = "io.modelcontextprotocol/ui"
#: The MIME type of an MCP App view (a ``ui://`` resource).
APP_MIME_TYPE = "text/html;profile=mcp-app"


def extensions(call: Call) -> dict[str, t.Any]:
    """The extensions the server declares, by id: tasks, Agent Skills, MCP Apps (what it serves of each)."""
    server = call.server
    declared: dict[str, t.Any] = {}
    if serves_tasks(server):
        declared[EXTENSION] = {}
    skills_declared = skills.declaration(call)
    if skills_declared is not None:
        declared[skills.EXTENSION] = skills_declared
    if any(resource.mime_type == APP_MIME_TYPE for resource in server.registry.resources.values()):
        declared[APPS_EXTENSION] = {}
    return declared


def discover(call: Call) -> dict[str, t.Any]:
    """Every revision served (newest first), the capabilities and the instructions.

    ``serverInfo``, ``resultType`` and the cache hints are added to every
    modern result alike (:mod:`flask_mcp.core.modern`).
    """
    server = call.server
    capabilities = server.capabilities()
    declared = extensions(call)
    if declared:
        capabilities["extensions"] = declared
    result: dict[str, t.Any] = {
        "supportedVersions": list(ALL_PROTOCOL_VERSIONS),
        "capabilities": capabilities,
    }
    if server.instructions:
        result["instructions"] = server.instructions
    return result
