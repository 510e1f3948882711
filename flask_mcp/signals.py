"""blinker signals, Flask's own mechanism: log, meter or audit MCP calls without wrapping anything.

::

    from flask_mcp.signals import tool_called

    @tool_called.connect_via(app)
    def meter(app, name, duration, error, **extra):
        app.logger.info("tool %s took %.3fs%s", name, duration, " (failed)" if error else "")

The sender is the Flask app of the call (the MCP server when there is no
app context). :data:`tool_called`, :data:`resource_read` and
:data:`prompt_got` are sent once a call finished, after the
:meth:`~flask_mcp.MCP.after_call` hooks, with the keywords ``method``,
``name`` (the tool's or prompt's name, or the URI read), ``component``,
``arguments``, ``result`` (what the handler returned, before conversion),
``error`` (the exception, or ``None``), ``duration`` (seconds,
:func:`time.perf_counter`), ``principal`` and ``era``.
:data:`session_started` and :data:`session_ended` are sent with
``session_id`` and ``principal``; ``session_started`` also with
``client_info``, ``session_ended`` with ``reason`` (``"deleted"`` or
``"expired"``).

:data:`call_audited` is sent with ``record`` (an
:class:`~flask_mcp.core.audit.AuditRecord`) as the audit trail
(``MCP_AUDIT``) takes each ended call, to copy it to other sinks.

Nothing is built or timed while no receiver is connected.
"""

from __future__ import annotations

import typing as t

from flask import current_app, has_app_context

from .core.hooks import (
    call_audited,
    namespace,
    prompt_got,
    resource_read,
    session_ended,
    session_started,
    tool_called,
)

__all__ = [
    "call_audited",
    "current_sender",
    "namespace",
    "prompt_got",
    "resource_read",
    "session_ended",
    "session_started",
    "tool_called",
]


def current_sender() -> t.Any:
    """The Flask app of the current context, or ``None`` outside one."""
    return current_app._get_current_object() if has_app_context() else None  # type: ignore[attr-defined]
