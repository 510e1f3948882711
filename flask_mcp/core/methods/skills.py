"""``skills/list``, ``skills/get`` and ``resources/directory/read``: the Agent Skills extension (SEP-2640).

The skills are the server's (:attr:`Server.skills <flask_mcp.core.server.Server.skills>`,
loaded by :mod:`flask_mcp.components.skills`); their files are ordinary
resources, read with ``resources/read``.

A skill's entry carries what its files hold (the frontmatter of its
``SKILL.md``, and each file's size and SHA-256 digest, which confirms a
guessed secret offline), so a caller is shown of it only what it could
read: a file whose resource is not served (hidden by its tags, disabled,
removed) or whose permissions the caller lacks is left out of the manifest
and of the folders, and a skill whose ``SKILL.md`` is such a file is, for
that caller, not there at all: not listed, and ``skills/get`` and
``resources/directory/read`` answer as for a skill that does not exist.
"""

from __future__ import annotations

import typing as t

from ...policies.permissions import PermissionContext, denied_by
from ...protocol.jsonrpc import INVALID_PARAMS, MCPError
from .listing import paged

if t.TYPE_CHECKING:
    from ..client import Call

__all__ = ["EXTENSION", "declaration", "get_skill", "list_skills", "read_directory", "shown_to"]

#: The id of the skills extension, in ``capabilities.extensions``.
EXTENSION = "io.modelcontextprotocol/skills"


def declaration(call: Call) -> dict[str, t.Any] | None:
    """The extension's entry in the server's capabilities; ``None`` when it serves no skill."""
    return {"directoryRead": True} if call.server.skills else None


def shown_to(call: Call) -> t.Callable[[str], bool]:
    """Whether *call*'s caller is shown the skill file at a URI: its resource is served and the caller may read it."""
    server = call.server
    served = server.registry.resources  # one table for the whole answer, whatever changes meanwhile
    answers: dict[str, bool] = {}

    def shown(uri: str) -> bool:
        answer = answers.get(uri)
        if answer is None:
            resource = served.get(uri)
            permissions = None if resource is None else resource.permissions
            if permissions is None:
                permissions = server.default_permissions
            answer = answers[uri] = resource is not None and (
                not permissions or not denied_by(permissions, PermissionContext(call.principal, resource, "resource"))
            )
        return answer

    return shown


def list_skills(call: Call) -> dict[str, t.Any]:
    """The skills the caller is shown, by name, a page at a time."""
    shown = shown_to(call)
    entries = (skill.entry(shown) for _, skill in sorted(call.server.skills.items()))
    return paged(call, "skills", [entry for entry in entries if entry is not None], call.server.page_size)


def get_skill(call: Call) -> dict[str, t.Any]:
    """One skill by the URI of its ``SKILL.md``; -32602 for any other URI, and for a skill the caller is not shown."""
    uri = call.server.bounded_uri(call.param("uri", str))
    shown = shown_to(call)
    for skill in list(call.server.skills.values()):
        if skill.uri == uri:
            entry = skill.entry(shown)
            if entry is not None:
                return {"skill": entry}
    raise MCPError(INVALID_PARAMS, f"Invalid params: no skill {uri}", {"uri": uri})


def read_directory(call: Call) -> dict[str, t.Any]:
    """The files and folders directly in a skill's folder *uri* that the caller is shown, a page at a time.

    -32602 for what is not such a folder, and for a cursor this server did not issue.
    """
    uri = call.server.bounded_uri(call.param("uri", str)).rstrip("/")
    shown = shown_to(call)
    for skill in list(call.server.skills.values()):
        children = skill.directory(uri, shown)
        if children is not None:
            return paged(call, "resources", children, call.server.page_size)
    raise MCPError(INVALID_PARAMS, f"Invalid params: no skill folder {uri}", {"uri": uri})
