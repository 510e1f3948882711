"""One app's audit trail: its engine, its writer, and the sink the MCP server hands records to."""

from __future__ import annotations

import logging
import os
import typing as t

from flask import Flask, current_app, has_app_context
from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError

from ..config.oversight import AuditSettings
from ..core.audit import AuditRecord
from ..core.audit_calls import EndedCall, audit_record, audit_values
from ..core.hooks import call_audited
from ..stores.failures import warn_store_unreachable
from .installed import EXTENSION_KEY, audit_log_of
from .writer import AuditWriter

__all__ = ["AuditLog", "current_trace_id"]

logger = logging.getLogger("flask_mcp.audit")


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

    A call's facts are taken as they are, with the trace id of the moment; the record is made by the
    writer's thread (unless a receiver of :data:`~flask_mcp.signals.call_audited` wants it at once).

    :param engine: where the table lives.
    :param settings: ``MCP_AUDIT_*``.
    """

    def __init__(self, engine: Engine, settings: AuditSettings) -> None:
        self.engine = engine
        self.settings = settings
        #: ``resources/read`` and ``prompts/get`` are recorded too.
        self.reads = settings.reads
        #: Records keep the arguments (without secret fields).
        self.arguments = settings.arguments
        self.writer = AuditWriter(
            engine,
            buffer=settings.buffer,
            batch=settings.batch,
            retention_days=settings.retention_days,
            linger=settings.linger,
            convert=self._row_of,
        )
        try:
            self.writer.create_table()
        except OperationalError as exc:
            # A database away at start is no reason to fail the worker: the writer makes the table
            # before its first batch once the database answers (what it could not write is logged).
            warn_store_unreachable(exc, "the audit trail's database")

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

    def take(self, ended: EndedCall) -> None:
        """Take an ended call: buffered for writing with the current trace id, and sent to receivers.

        Never raises: a receiver that fails is logged, and the call it records answers as it would have.
        """
        trace_id = current_trace_id()
        if not call_audited.receivers:
            self.writer.record((ended, trace_id))
            return
        record = audit_record(ended, arguments=self.arguments, trace_id=trace_id)
        self.writer.record(record)
        try:
            sender = current_app._get_current_object() if has_app_context() else None  # type: ignore[attr-defined]
            call_audited.send(sender, record=record)
        except Exception:
            logger.exception("a receiver of call_audited failed; the call and its record are not affected")

    def record(self, record: AuditRecord) -> None:
        """Buffer a record made elsewhere (an import, a test) for writing."""
        self.writer.record(record)

    def _row_of(self, item: t.Any) -> AuditRecord | tuple[t.Any, ...]:
        # On the writer's thread: an ended call's facts become its row's values here, with no record
        # built on the way (nobody but the table wants one).
        if isinstance(item, AuditRecord):
            return item
        ended, trace_id = item
        return audit_values(ended, arguments=self.arguments, trace_id=trace_id)

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
        return _own(create_engine(settings.database_uri))
    os.makedirs(app.instance_path, exist_ok=True)
    return _own(create_engine("sqlite:///" + os.path.join(app.instance_path, "mcp_audit.sqlite3")))


def _own(engine: Engine) -> Engine:
    """An engine of the trail's own: a SQLite file is written ahead (WAL) and synced at checkpoints only,
    so a batch's commit waits for no disk flush and readers (``flask mcp audit``) never block the writer.
    What a crash of the machine may then lose is the last batches, as the buffer's records would be."""
    if engine.dialect.name == "sqlite" and engine.url.database not in (None, "", ":memory:"):

        @event.listens_for(engine, "connect")
        def wal(connection: t.Any, record: t.Any) -> None:
            cursor = connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

    return engine
