"""One server's components served by another, under a namespace (``mcp.mount(other, prefix="billing")``).

The rule for names and URIs, as clients see them:

- a tool or prompt ``name`` becomes ``billing_name``;
- a resource ``scheme://path`` becomes ``scheme://billing/path``, and a
  template ``scheme://{id}`` becomes ``scheme://billing/{id}``: the
  namespace is the first path segment after the scheme's ``//``. A URI
  without ``//`` (``urn:...``) cannot be mounted under a prefix and is refused;
- a tool's link to its view (``_meta.ui.resourceUri``, an MCP App) is a
  resource URI, and is renamed as one, so it names the view as mounted;
  the view follows the renamed tool.

Each mounted component is a copy of the other server's, renamed, calling
the same function; it keeps its permissions, and one registered without any
takes the other server's ``default_permissions`` (public when it has none),
so mounting never widens or narrows who may use it. The copies follow the
other registry: what it registers, hides or forgets later is mounted,
hidden or forgotten here too.
"""

from __future__ import annotations

import dataclasses
import typing as t

from .model import Prompt, Resource, ResourceTemplate, Tool
from .uri_template import URITemplate

if t.TYPE_CHECKING:
    from ..policies.permissions import Permission
    from .registry import Kind, Registry

__all__ = ["Mount", "mounted_copy", "mounted_key", "mounted_name", "mounted_uri", "mounted_view_link"]

Component = t.Union[Tool, Resource, ResourceTemplate, Prompt]
KINDS: tuple[Kind, ...] = ("tools", "resources", "templates", "prompts")


def mounted_name(prefix: str | None, name: str) -> str:
    """A tool's or prompt's name under *prefix*: ``billing_name``."""
    return name if not prefix else f"{prefix}_{name}"


def mounted_uri(prefix: str | None, uri: str) -> str:
    """A resource URI (or URI template) under *prefix*: ``scheme://billing/path``.

    :raises ValueError: a URI without ``scheme://``, which has no path to put the prefix in.
    """
    if not prefix:
        return uri
    scheme, separator, rest = uri.partition("://")
    if not separator or not scheme:
        raise ValueError(f"cannot mount {uri!r} under {prefix!r}: only scheme://... URIs take a prefix")
    return f"{scheme}://{prefix}/{rest}"


def mounted_view_link(prefix: str | None, meta: dict[str, t.Any] | None) -> dict[str, t.Any] | None:
    """A tool's ``_meta`` under *prefix*: the link to its view (an MCP App) names the view's mounted URI.

    The view is one of the mounted server's resources, so it is served at
    :func:`mounted_uri`; ``ui.resourceUri`` and the older flat
    ``ui/resourceUri`` are renamed the same way, or a host would read a view
    that is not there (or another server's).
    """
    if not prefix or not meta:
        return meta
    renamed = dict(meta)
    ui = meta.get("ui")
    if isinstance(ui, dict) and isinstance(ui.get("resourceUri"), str) and "://" in ui["resourceUri"]:
        renamed["ui"] = {**ui, "resourceUri": mounted_uri(prefix, ui["resourceUri"])}
    flat = meta.get("ui/resourceUri")
    if isinstance(flat, str) and "://" in flat:
        renamed["ui/resourceUri"] = mounted_uri(prefix, flat)
    return renamed


def mounted_copy(
    kind: Kind, component: Component, prefix: str | None, default_permissions: tuple[Permission, ...]
) -> Component:
    """*component* as the mounting server serves it: renamed, with the permissions it had where it came from."""
    permissions = component.permissions if component.permissions is not None else default_permissions
    if kind == "tools":
        tool = t.cast(Tool, component)
        meta = mounted_view_link(prefix, tool.meta)
        return dataclasses.replace(tool, name=mounted_name(prefix, tool.name), permissions=permissions, meta=meta)
    if kind == "prompts":
        return dataclasses.replace(component, name=mounted_name(prefix, component.name), permissions=permissions)
    if kind == "resources":
        resource = t.cast(Resource, component)
        follows = None if resource.follows_tool is None else mounted_name(prefix, resource.follows_tool)
        return dataclasses.replace(
            resource, uri=mounted_uri(prefix, resource.uri), permissions=permissions, follows_tool=follows
        )
    template = t.cast(ResourceTemplate, component)
    renamed = URITemplate(mounted_uri(prefix, template.template.template))
    return dataclasses.replace(template, template=renamed, permissions=permissions)


def mounted_key(kind: Kind, component: Component, prefix: str | None) -> str:
    """The key a copy of *component* of *kind* has under *prefix*: its name, URI or URI template."""
    if kind == "resources":
        return mounted_uri(prefix, t.cast(Resource, component).uri)
    if kind == "templates":
        return mounted_uri(prefix, t.cast(ResourceTemplate, component).template.template)
    return mounted_name(prefix, t.cast("Tool | Prompt", component).name)


class Mount:
    """Keeps *source*'s served components in *target*, under *prefix*.

    :param add: registers a copy in the target (the target server's checks apply).
    :param default_permissions: the permissions of *source*'s components registered without any.
    """

    def __init__(
        self,
        source: Registry,
        target: Registry,
        prefix: str | None,
        add: t.Callable[[Kind, Component], None],
        default_permissions: tuple[Permission, ...],
    ) -> None:
        self.source = source
        self.target = target
        self.prefix = prefix
        self.add = add
        self.default_permissions = default_permissions
        #: Per kind: the target's key of each copy -> the source's component it copies.
        self.copies: dict[Kind, dict[str, Component]] = {kind: {} for kind in KINDS}

    def sync(self, kind: Kind) -> None:
        """Make the target serve copies of exactly what the source serves of *kind*, and nothing else of it."""
        served: t.Mapping[str, Component] = getattr(self.source, kind)
        wanted = {mounted_key(kind, component, self.prefix): component for component in served.values()}
        copies = self.copies[kind]
        for key in [key for key, original in copies.items() if wanted.get(key) is not original]:
            del copies[key]
            self.target.discard(kind, key)
        for key, original in wanted.items():
            if key not in copies:
                self.add(kind, mounted_copy(kind, original, self.prefix, self.default_permissions))
                copies[key] = original

    def sync_all(self) -> None:
        """:meth:`sync` every kind."""
        for kind in KINDS:
            self.sync(kind)
