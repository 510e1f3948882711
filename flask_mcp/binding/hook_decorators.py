"""The decorators that register hooks around every call: ``@mcp.before_call``, ``after_call``, ``on_error``.

A mixin of :class:`~flask_mcp.MCP`; the hooks themselves, and how they run,
are :mod:`flask_mcp.core.hooks`.
"""

from __future__ import annotations

import typing as t

from ..core.hooks import AfterCall, BeforeCall, Hooks, OnError

__all__ = ["HookDecorators"]

B = t.TypeVar("B", bound=BeforeCall)
A = t.TypeVar("A", bound=AfterCall)
E = t.TypeVar("E", bound=OnError)


class HookDecorators:
    """Registers hooks in :attr:`_hooks`, which every app's server of the extension runs."""

    _hooks: Hooks

    def before_call(self, func: B, /) -> B:
        """Register ``func(info)`` to run before every tool call, resource read and prompt get.

        It gets a :class:`~flask_mcp.CallInfo` once the caller was admitted and the
        arguments validated, may change ``info.arguments``, and may return a
        result (converted like the handler's own) to skip the handler, or raise
        :class:`~flask_mcp.ToolError` to fail the call. Run in registration
        order; see :ref:`hooks`.
        """
        self._hooks.before.append(func)
        return func

    def after_call(self, func: A, /) -> A:
        """Register ``func(info, result)`` to run after every call that produced a result.

        It returns a replacement for *result* (what the handler returned, before
        conversion) or ``None`` to keep it. Run in reverse registration order,
        as Flask's ``after_request``; see :ref:`hooks`.
        """
        self._hooks.after.append(func)
        return func

    def on_error(self, func: E, /) -> E:
        """Register ``func(info, exc)`` to run when a hook or handler raised.

        It returns a result to recover with (``after_call`` then runs on it) or
        ``None`` to let the error go on. Run in registration order until one
        recovers; see :ref:`hooks`.
        """
        self._hooks.error.append(func)
        return func
