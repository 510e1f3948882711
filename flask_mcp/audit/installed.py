"""Where an app keeps its audit trail, readable without SQLAlchemy (an app without the trail has none)."""

from __future__ import annotations

import typing as t

if t.TYPE_CHECKING:
    from flask import Flask

    from .log import AuditLog

__all__ = ["EXTENSION_KEY", "audit_log_of"]

#: Where an app keeps its :class:`~flask_mcp.audit.log.AuditLog` (``app.extensions[EXTENSION_KEY]``).
EXTENSION_KEY = "flask_mcp.audit"


def audit_log_of(app: Flask) -> AuditLog | None:
    """The audit trail of *app*, or ``None`` when ``MCP_AUDIT`` is off."""
    return t.cast("AuditLog | None", app.extensions.get(EXTENSION_KEY))
