"""The audit trail: every call recorded in a SQL table of the app's own database, and read back.

:class:`~flask_mcp.audit.log.AuditLog` is what ``MCP_AUDIT = True`` sets up
on an app: the table (:mod:`.models`), the writer that fills it off the
request path (:mod:`.writer`), the queries and ``flask mcp audit``
(:mod:`.reading`, :mod:`.commands`). See :doc:`/approval`.

Nothing is imported here: SQLAlchemy (the ``sqlalchemy`` extra) is imported
with :mod:`.log`, :mod:`.writer` or :mod:`.reading`, which an app without the
trail never loads.
"""

from __future__ import annotations

__all__: list[str] = []
