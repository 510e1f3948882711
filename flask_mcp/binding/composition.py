"""``mcp.mount(other, prefix=...)``: another server's components served by this one, under a namespace.

The naming rule and what a mounted component keeps are in
:mod:`flask_mcp.components.mounting`; this module checks the mount and wires
it to the two extensions.
"""

from __future__ import annotations

import re
import typing as t

from ..components.mounting import Component, Mount

if t.TYPE_CHECKING:
    from ..components.registry import Kind
    from ..extension import MCP

__all__ = ["mount_server"]

#: What a namespace may be: it becomes part of tool names and of URI paths.
_PREFIX = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def _mounts(server: MCP, other: MCP) -> bool:
    """Whether *server* serves *other*'s components, directly or through servers it mounted."""
    return any(child is other or _mounts(child, other) for child in server.mounted)


def mount_server(parent: MCP, child: MCP, prefix: str | None) -> None:
    """Serve *child*'s tools, resources, templates and prompts from *parent*, under *prefix*.

    :raises ValueError: a prefix that cannot be part of a name and a path, a
        mount cycle, a component whose new name or URI is taken in *parent*,
        or a URI that cannot take a prefix.
    """
    if prefix is not None and not _PREFIX.fullmatch(prefix):
        raise ValueError(f"a mount prefix is letters, digits, '_', '.' and '-', not {prefix!r}")
    if child is parent or _mounts(child, parent):
        raise ValueError("a server cannot mount itself, or a server that mounts it")

    def add(kind: Kind, component: Component) -> None:
        # Through the parent's own registration, so its checks (atomic tools, protection) apply.
        if kind == "tools":
            parent._add_tool(t.cast("t.Any", component))
        elif kind == "prompts":
            parent.registry.add_prompt(t.cast("t.Any", component))
        else:
            parent.registry.add_resource(t.cast("t.Any", component))

    mount = Mount(child.registry, parent.registry, prefix, add, child.default_permissions)
    mount.sync_all()
    child.registry.on_change(mount.sync)
    parent.mounted.append(child)
