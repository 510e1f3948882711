"""One app's audit trail: its engine, its writer, and the sink the MCP server hands records to."""

from __future__ import annotations

import os
import typing as t

from flask import Flask
from sqlalchemy import create_engine
from sqlalchemy.engine import Engine

from ..config.oversight import AuditSettings
from ..core.audit import AuditRecord
from .writer import AuditWriter

__all__ = ["EXTENSION_KEY", "AuditLog", "audit_log_of", "current_trace_id"]

#: Where an app keeps its :class:`AuditLog` (``app.extensions[EXTENSION_KEY]``).
EXTENSION_KEY = "flask_mcp.audit"


try:
    from opentelemetry import trace
except ImportError:  # the otel extra is not installed: no trace to name
    trace = None  # type: ignore[assignment]


def current_trace_id() -> str | None:
    """The OpenTelemetry trace id of the current span, when the API is installed and a span is recording."""
    if trace is None:
        return None
    context = trace.get_current_span().get_span_context()
    return format(context.trace_id, "032x") if context.is_valid else None


class AuditLog:
    """The audit trail of one app: an :class:`~flask_mcp.core.audit.AuditSink` writing to ``mcp_audit``.

    :param engine: where the table lives.
    :param settings: ``MCP_AUDIT_*``.
    :param sent: called with each record as it is taken (the ``call_audited`` signal), before it is buffered.
    """

    def __init__(
        self, engine: Engine, settings: AuditSettings, sent: t.Callable[[AuditRecord], None] | None = None
    ) -> None:
        self.engine = engine
        self.settings = settings
        #: ``resources/read`` and ``prompts/get`` are recorded too.
        self.reads = settings.reads
        #: Records keep the arguments (without secret fields).
        self.arguments = settings.arguments
        self.sent = sent
        self.writer = AuditWriter(
            engine, buffer=settings.buffer, batch=settings.batch, retention_days=settings.retention_days
        )
        self.writer.create_table()

    @classmethod
    def for_app(cls, app: Flask, settings: AuditSettings, db: t.Any = None, **options: t.Any) -> AuditLog:
        """The audit trail of *app*, kept in ``app.extensions[EXTENSION_KEY]``.

        The table lives in Flask-SQLAlchemy's database when *db* is given or the app has one, else
        at ``MCP_AUDIT_DATABASE_URI``, else in ``mcp_audit.sqlite3`` in the app's instance folder.
        """
        existing = audit_log_of(app)
        if existing is not None:
            return existing
        log = cls(_engine(app, settings, db), settings, **options)
        app.extensions[EXTENSION_KEY] = log
        return log

    def record(self, record: AuditRecord) -> None:
        """Take the record of an ended call: its trace id filled in, sent to receivers, buffered for writing."""
        if record.trace_id is None:
            record.trace_id = current_trace_id()
        if self.sent is not None:
            self.sent(record)
        self.writer.record(record)

    def close(self) -> None:
        """Write what is buffered and stop the writer's thread."""
        self.writer.close()


def _engine(app: Flask, settings: AuditSettings, db: t.Any) -> Engine:
    if db is None:
        db = app.extensions.get("sqlalchemy")
    if db is not None:
        with app.app_context():
            return t.cast(Engine, db.engine)
    if settings.database_uri is not None:
        return create_engine(settings.database_uri)
    os.makedirs(app.instance_path, exist_ok=True)
    return create_engine("sqlite:///" + os.path.join(app.instance_path, "mcp_audit.sqlite3"))


def audit_log_of(app: Flask) -> AuditLog | None:
    """The audit trail of *app*, or ``None`` when ``MCP_AUDIT`` is off."""
    return t.cast("AuditLog | None", app.extensions.get(EXTENSION_KEY))
