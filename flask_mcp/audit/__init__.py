"""The audit trail: every call recorded in a SQL table of the app's own database, and read back.

:class:`~flask_mcp.audit.log.AuditLog` is what ``MCP_AUDIT = True`` sets up
on an app: the table (:mod:`.models`), the writer that fills it off the
request path (:mod:`.writer`), the queries and ``flask mcp audit``
(:mod:`.reading`, :mod:`.commands`). See :doc:`/approval`.
"""

from __future__ import annotations

from .log import AuditLog, audit_log_of
from .reading import parse_since, read_records
from .writer import AuditWriter

__all__ = ["AuditLog", "AuditWriter", "audit_log_of", "parse_since", "read_records"]
