"""What the human oversees on an app: the approval of tools marked ``confirm``, and the audit trail."""

from __future__ import annotations

import functools

from flask import Flask, current_app
from flask_caching import Cache
from flask_caching.backends import NullCache

from ..audit.commands import audit_command
from ..cli.commands import EXTRA_COMMANDS
from ..config.settings import Settings
from ..core.approval import Approvals
from ..core.audit import AuditSink
from ..policies.tool import ConfigurationError
from ..stores.approval_pages import CacheApprovalPages
from ..stores.approvals import CacheLedger
from ..stores.quota import StoreGuard
from ..transport.approval_page import page_url
from ..transport.sign_in import sign_in_of

__all__ = ["approvals_for", "audit_for"]


def approvals_for(app: Flask, name: str, settings: Settings, ephemeral: Cache, guard: StoreGuard | None) -> Approvals:
    """How this server asks for approvals: forms, and the approval page when the app signs users in."""
    if isinstance(app.extensions["cache"][ephemeral], NullCache):
        # No shared store: an approval is spent once in this process's memory, and forms are the only way.
        return Approvals(ttl=settings.approval.ttl, mode=settings.approval.mode)
    pages = CacheApprovalPages(
        ephemeral,
        functools.partial(page_url, name),
        lambda: sign_in_of(current_app) is not None,
        settings.approval.ttl,
        guard.reserve if guard is not None else None,
    )
    return Approvals(CacheLedger(ephemeral), ttl=settings.approval.ttl, mode=settings.approval.mode, pages=pages)


def audit_for(app: Flask, settings: Settings) -> AuditSink | None:
    """The audit trail of *app* when ``MCP_AUDIT`` is set (one for every server of the app)."""
    # ``flask mcp audit`` on every app: without the trail it says how to turn it on.
    app.extensions.setdefault(EXTRA_COMMANDS, {})["audit"] = audit_command
    if not settings.audit.enabled:
        return None
    try:
        from ..audit.log import AuditLog
    except ImportError as exc:
        raise ConfigurationError(
            f"MCP_AUDIT = True keeps the trail in a SQL table through SQLAlchemy, which cannot be imported ({exc}): "
            "pip install 'flask-mcp[sqlalchemy]'"
        ) from None
    return AuditLog.for_app(app, settings.audit)
