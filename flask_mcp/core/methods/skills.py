"""``skills/list``, ``skills/get`` and ``resources/directory/read``: the Agent Skills extension (SEP-2640).

The skills are the server's (:attr:`Server.skills <flask_mcp.core.server.Server.skills>`,
loaded by :mod:`flask_mcp.components.skills`); their files are ordinary
resources, read with ``resources/read``.
"""

from __future__ import annotations

import typing as t

from ...protocol.jsonrpc import INVALID_PARAMS, MCPError
from .listing import paged

if t.TYPE_CHECKING:
    from ..client import Call

__all__ = ["EXTENSION", "declaration", "get_skill", "list_skills", "read_directory"]

#: The id of the skills extension, in ``capabilities.extensions``.
EXTENSION = "io.modelcontextprotocol/skills"


def declaration(call: Call) -> dict[str, t.Any] | None:
    """The extension's entry in the server's capabilities; ``None`` when it serves no skill."""
    return {"directoryRead": True} if call.server.skills else None


def list_skills(call: Call) -> dict[str, t.Any]:
    """The skills, by name, a page at a time."""
    listing = [skill.entry() for _, skill in sorted(call.server.skills.items())]
    return paged(call, "skills", listing, call.server.page_size)


def get_skill(call: Call) -> dict[str, t.Any]:
    """One skill by the URI of its ``SKILL.md``; -32602 for any other URI."""
    uri = call.server.bounded_uri(call.param("uri", str))
    for skill in call.server.skills.values():
        if skill.uri == uri:
            return {"skill": skill.entry()}
    raise MCPError(INVALID_PARAMS, f"Invalid params: no skill {uri}", {"uri": uri})


def read_directory(call: Call) -> dict[str, t.Any]:
    """The files and folders directly in a skill's folder *uri*; -32602 for what is not one."""
    uri = call.server.bounded_uri(call.param("uri", str)).rstrip("/")
    for skill in call.server.skills.values():
        children = skill.directory(uri)
        if children is not None:
            return {"resources": children}
    raise MCPError(INVALID_PARAMS, f"Invalid params: no skill folder {uri}", {"uri": uri})
