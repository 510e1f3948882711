"""Changing what an app serves while it runs, the same way in every process.

The methods of :class:`MCP` that disable, enable, remove and (re)load
components at run time; the mechanism is :mod:`flask_mcp.stores.shared_registry`.
"""

from __future__ import annotations

import typing as t

from flask import current_app, has_app_context

from ..core.result_cache import arguments_digest
from ..globals import state_for
from ..stores.events import BROADCAST

if t.TYPE_CHECKING:
    from ..components.registry import Kind, Registry
    from ..stores.shared_registry import Loader, SharedRegistry

__all__ = ["RuntimeChanges"]

_LIST_CHANGED = {
    "tools": "notifications/tools/list_changed",
    "resources": "notifications/resources/list_changed",
    "templates": "notifications/resources/list_changed",
    "prompts": "notifications/prompts/list_changed",
}
_KIND_OF = {"tool": "tools", "template": "templates", "prompt": "prompts"}
#: What :meth:`RuntimeChanges.disable` and :meth:`RuntimeChanges.enable` take as ``kind``.
ComponentKind = t.Literal["tool", "resource", "template", "prompt"]


class RuntimeChanges:
    """Run-time changes of the components, kept in step across processes (mixed into :class:`MCP`)."""

    registry: Registry
    #: Functions that register run-time components (:meth:`loader`).
    loaders: list[Loader]

    def loader(self, func: Loader) -> Loader:
        """Register *func* as a loader: a function that registers components (with the decorators).

        It runs in every process when the app is set up, and again in every
        process after :meth:`reload`: use it for components that are made
        while the app runs (from database rows, plugins, ...), so every
        worker serves the same set::

            @mcp.loader
            def load_report_tools():
                for report in Report.query.all():
                    mcp.tool(make_report_tool(report), name=f"report_{report.slug}")
        """
        self.loaders.append(func)
        return func

    def reload(self) -> None:
        """Run the loaders again in every process and announce ``list_changed``."""
        self._shared("reload()").reload()

    def disable(self, name: str, kind: ComponentKind = "tool") -> None:
        """Stop serving a component in every process: it is neither listed nor callable until :meth:`enable`.

        Like every run-time change, it applies to the app of the current app
        context (a request, a CLI command, ``with app.app_context():``).

        :param name: the tool or prompt name, or the resource's URI (or URI template).
        :param kind: ``"tool"``, ``"resource"`` (a URI or a URI template), ``"template"`` or ``"prompt"``.
        :raises KeyError: nothing of that kind is registered under *name*.
        :raises RuntimeError: outside an app context, or that app has no session cache.
        """
        self._shared("disable()").disable(self._kind(name, kind), name)

    def enable(self, name: str, kind: ComponentKind = "tool") -> None:
        """Serve a disabled component again, in every process."""
        self._shared("enable()").enable(self._kind(name, kind), name)

    def remove_tool(self, name: str) -> None:
        """Unregister the tool *name* in every process, and announce ``list_changed``.

        Unlike :meth:`disable`, the component is gone: the name may be
        registered again (by a loader, after :meth:`reload`, for every
        process). Before any app is set up (at import time) it is simply
        dropped from the registry.

        :raises KeyError: no tool is registered under *name*.
        """
        self._remove("tools", name)

    def remove_resource(self, uri: str) -> None:
        """Unregister the static resource at *uri* in every process (see :meth:`remove_tool`)."""
        self._remove("resources", uri)

    def remove_template(self, uri_template: str) -> None:
        """Unregister the resource template *uri_template* in every process (see :meth:`remove_tool`)."""
        self._remove("templates", uri_template)

    def remove_prompt(self, name: str) -> None:
        """Unregister the prompt *name* in every process (see :meth:`remove_tool`)."""
        self._remove("prompts", name)

    def _remove(self, kind: Kind, key: str) -> None:
        state = state_for(current_app, self) if has_app_context() else None
        if state is None:
            # Import time: every process runs the same code, so every process drops it.
            if key not in self.registry.registered(kind):
                raise KeyError(f"no {kind[:-1]} {key!r} is registered")
            self.registry.discard(kind, key)
            return
        self._shared(f"remove_{kind.rstrip('s')}()").remove(kind, key)

    def invalidate(self, tool: str | None = None, /, *, tag: str | None = None, **arguments: t.Any) -> None:
        """Forget the kept results of cached tools (``cache=``), for every caller and in every process.

        ``invalidate("prices")`` forgets all of the tool's results;
        ``invalidate("prices", sku="A1")`` those for exactly these arguments
        (as the caller sends them); ``invalidate(tag="catalog")`` those of
        every tool with the tag. Call it inside an app context (a request, a
        CLI command or ``with app.app_context()``), after the data changed.

        :raises KeyError: *tool* is not a registered tool.
        :raises ValueError: neither a tool nor a tag, or both.
        :raises RuntimeError: outside an app context with this extension.
        """
        if (tool is None) == (tag is None):
            raise ValueError("name a tool, or a tag=, to invalidate")
        if tag is not None and arguments:
            raise ValueError("arguments go with a tool, not with tag=")
        state = state_for(current_app, self) if has_app_context() else None
        if state is None:
            raise RuntimeError("invalidate() needs an app context of an app this MCP extension is set up on")
        cache = state.server.result_cache
        if cache is None:
            return  # no store (a NullCache): nothing is ever kept
        registered = self.registry.registered("tools")
        if tool is not None:
            if tool not in registered:
                raise KeyError(f"no tool {tool!r} is registered")
            cache.invalidate(tool, arguments_digest(arguments) if arguments else None)
            return
        for name, component in registered.items():
            if tag in component.tags:
                cache.invalidate(name)

    def _kind(self, name: str, kind: str) -> Kind:
        if kind == "resource":
            return "resources" if name in self.registry.registered("resources") else "templates"
        if kind not in _KIND_OF:
            raise ValueError(f"kind must be 'tool', 'resource', 'template' or 'prompt', not {kind!r}")
        return t.cast("Kind", _KIND_OF[kind])

    def _shared(self, method: str) -> SharedRegistry:
        """The shared registry of the app in whose context *method* (``"disable()"``...) is called.

        :raises RuntimeError: saying which is missing: an app context, this
            extension on its app, or a session cache on it.
        """
        # Which app is meant is the context's, as for any Flask extension: one MCP may serve several apps.
        if not has_app_context():
            raise RuntimeError(
                f"{method} needs an app context: call it in a request, a CLI command, or "
                "within `with app.app_context():`"
            )
        state = state_for(current_app, self)
        if state is None:
            raise RuntimeError(
                f"{method}: this MCP extension is not set up on the app {current_app.name!r} of the "
                "current app context: call mcp.init_app(app) first"
            )
        if state.shared is None:
            raise RuntimeError(
                f"{method}: run-time changes need the app's session cache (a stateless app with a NullCache has none)"
            )
        return state.shared

    def _announce_change(self, kind: Kind) -> None:
        # Registrations at import time happen before any app exists: nobody to tell.
        if not has_app_context():
            return
        state = state_for(current_app, self)
        if state is None or state.shared is None:
            return
        if getattr(state.shared.loading, "active", False):
            return  # a loader runs in every process: reload() announces what it registered
        if state.store_is_shared:
            state.shared.warn_unshared(kind)
            return  # the other processes do not serve it: announcing it would send clients there
        self._announce(kind)

    def _announce(self, kind: Kind) -> None:
        self._broadcast(_LIST_CHANGED[kind], {})
        if kind == "tools" and any(
            getattr(resource, "follows_tool", None) is not None
            for resource in self.registry.registered("resources").values()
        ):
            # A tool's view (an MCP App) comes and goes with the tool: the resources listed changed too.
            self._broadcast(_LIST_CHANGED["resources"], {})

    def _broadcast(self, method: str, params: dict[str, t.Any]) -> None:
        state = state_for(current_app, self)
        if state is not None and state.events is not None:
            state.events.append(None, BROADCAST, {"jsonrpc": "2.0", "method": method, "params": params})
