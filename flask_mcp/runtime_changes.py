"""Changing what an app serves while it runs, the same way in every process.

The methods of :class:`MCP` that disable, enable and (re)load components at
run time; the mechanism is :mod:`flask_mcp.stores.shared_registry`.
"""

from __future__ import annotations

import typing as t

from flask import current_app, has_app_context

from .globals import current_state, find_state
from .stores.events import BROADCAST

if t.TYPE_CHECKING:
    from .components.registry import Kind, Registry
    from .stores.shared_registry import Loader, SharedRegistry

__all__ = ["RuntimeChanges"]

_LIST_CHANGED = {
    "tools": "notifications/tools/list_changed",
    "resources": "notifications/resources/list_changed",
    "templates": "notifications/resources/list_changed",
    "prompts": "notifications/prompts/list_changed",
}
_KIND_OF = {"tool": "tools", "prompt": "prompts"}


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
        self._shared().reload()

    def disable(self, name: str, kind: t.Literal["tool", "resource", "prompt"] = "tool") -> None:
        """Stop serving a component in every process: it is neither listed nor callable until :meth:`enable`.

        :param name: the tool or prompt name, or the resource's URI (or URI template).
        :raises KeyError: nothing of that kind is registered under *name*.
        """
        self._shared().disable(self._kind(name, kind), name)

    def enable(self, name: str, kind: t.Literal["tool", "resource", "prompt"] = "tool") -> None:
        """Serve a disabled component again, in every process."""
        self._shared().enable(self._kind(name, kind), name)

    def _kind(self, name: str, kind: str) -> Kind:
        if kind == "resource":
            return "resources" if name in self.registry.registered("resources") else "templates"
        if kind not in _KIND_OF:
            raise ValueError(f"kind must be 'tool', 'resource' or 'prompt', not {kind!r}")
        return t.cast("Kind", _KIND_OF[kind])

    def _shared(self) -> SharedRegistry:
        state = current_state()
        if state.mcp is not self or state.shared is None:
            raise RuntimeError(
                "run-time changes need the app's session cache (a stateless app with a NullCache has none)"
            )
        return state.shared

    def _announce_change(self, kind: Kind) -> None:
        # Registrations at import time happen before any app exists: nobody to tell.
        if not has_app_context():
            return
        state = find_state(current_app)
        if state is None or state.mcp is not self or state.shared is None:
            return
        if getattr(state.shared.loading, "active", False):
            return  # a loader runs in every process: reload() announces what it registered
        if state.store_is_shared:
            state.shared.warn_unshared(kind)
            return  # the other processes do not serve it: announcing it would send clients there
        self._announce(kind)

    def _announce(self, kind: Kind) -> None:
        self._broadcast(_LIST_CHANGED[kind], {})

    def _broadcast(self, method: str, params: dict[str, t.Any]) -> None:
        state = find_state(current_app)
        if state is not None and state.mcp is self and state.events is not None:
            state.events.append(None, BROADCAST, {"jsonrpc": "2.0", "method": method, "params": params})
