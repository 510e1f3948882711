"""The audit table, ``mcp_audit``: one row an ended call, in the app's own database."""

from __future__ import annotations

import dataclasses
import functools
import json
import operator
import typing as t

from sqlalchemy import Float, Integer, String, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from ..core.audit import AuditRecord

__all__ = ["COLUMNS", "ROWS_PER_STATEMENT", "AuditRow", "Base", "insert_statement", "record_of", "values_of"]


class Base(DeclarativeBase):
    """The audit trail's own metadata: its table is created apart from the app's and the OAuth server's."""


class AuditRow(Base):
    """One ended call; the columns are :class:`~flask_mcp.core.audit.AuditRecord`'s fields."""

    __tablename__ = "mcp_audit"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    time: Mapped[float] = mapped_column(Float, index=True)
    principal: Mapped[str | None] = mapped_column(String(255), index=True)
    client: Mapped[str | None] = mapped_column(String(255))
    session: Mapped[str | None] = mapped_column(String(128))
    surface: Mapped[str] = mapped_column(String(8))
    revision: Mapped[str | None] = mapped_column(String(16))
    kind: Mapped[str] = mapped_column(String(8))
    tool: Mapped[str] = mapped_column(String(1024), index=True)
    arguments_digest: Mapped[str] = mapped_column(String(64))
    arguments: Mapped[str | None] = mapped_column(Text)
    approval: Mapped[str] = mapped_column(String(16))
    approval_mode: Mapped[str | None] = mapped_column(String(16))
    approver: Mapped[str | None] = mapped_column(String(255))
    outcome: Mapped[str] = mapped_column(String(16))
    error_code: Mapped[str | None] = mapped_column(String(64))
    duration_ms: Mapped[float] = mapped_column(Float)
    trace_id: Mapped[str | None] = mapped_column(String(32))


#: The longest value each string column holds; longer ones are cut, never refused.
_LENGTHS: dict[str, int] = {
    column.name: column.type.length
    for column in AuditRow.__table__.columns
    if isinstance(column.type, String) and not isinstance(column.type, Text) and column.type.length
}


#: The columns a record fills, in the order of :func:`values_of`.
COLUMNS: tuple[str, ...] = tuple(field.name for field in dataclasses.fields(AuditRecord))
_LIMITS: tuple[int | None, ...] = tuple(_LENGTHS.get(name) for name in COLUMNS)


#: A record's values in :data:`COLUMNS` order, read in one C call.
_VALUES = operator.attrgetter(*COLUMNS)
_ARGUMENTS = COLUMNS.index("arguments")
#: (index, longest) of each column with a longest value.
_CUT = tuple((index, limit) for index, limit in enumerate(_LIMITS) if limit is not None)


def values_of(record: AuditRecord | tuple[t.Any, ...]) -> tuple[t.Any, ...]:
    """The row's values for *record*, in :data:`COLUMNS` order: its arguments as JSON text, every
    string cut to its column (never refused).

    :param record: a record, or its values in the order of its fields
        (:func:`~flask_mcp.core.audit_calls.audit_values`).
    """
    values = list(record) if type(record) is tuple else list(_VALUES(record))
    arguments = values[_ARGUMENTS]
    if arguments is not None:
        values[_ARGUMENTS] = json.dumps(arguments, sort_keys=True, default=str)
    for index, limit in _CUT:
        value = values[index]
        if isinstance(value, str) and len(value) > limit:
            values[index] = value[:limit]
    return tuple(values)


#: Rows an ``INSERT`` writes at most: a batch is written in statements of this many rows and one of
#: the rest, whose texts repeat from batch to batch (see :func:`insert_statement`).
ROWS_PER_STATEMENT = 32


@functools.lru_cache(maxsize=2 * ROWS_PER_STATEMENT)
def insert_statement(paramstyle: str, rows: int) -> str:
    """One ``INSERT`` of *rows* rows of :data:`COLUMNS` (``VALUES (...), (...)``), in the driver's own
    parameter style (``qmark`` for sqlite3, ``format``/``pyformat`` for psycopg).

    A statement for many rows: the driver runs it in one step, where ``executemany`` would take
    the GIL back once a row, each time behind the threads serving calls. At most
    :data:`ROWS_PER_STATEMENT` of them: the few texts that makes are made once here, and compiled
    once by a driver that keeps its compiled statements (sqlite3 does, per connection), where a
    statement for each batch's own size would be compiled anew for nearly every batch.
    """
    width = len(COLUMNS)
    if paramstyle == "qmark":
        markers = ["?"] * (rows * width)
    elif paramstyle == "numeric":
        markers = [f":{index + 1}" for index in range(rows * width)]
    else:
        markers = ["%s"] * (rows * width)
    groups = ", ".join("(" + ", ".join(markers[row * width : (row + 1) * width]) + ")" for row in range(rows))
    return f"INSERT INTO {AuditRow.__tablename__} ({', '.join(COLUMNS)}) VALUES {groups}"


def record_of(row: t.Any) -> AuditRecord:
    """The record a row (:class:`AuditRow` or a result row) holds."""
    values = {field.name: getattr(row, field.name) for field in dataclasses.fields(AuditRecord)}
    text = values["arguments"]
    values["arguments"] = json.loads(text) if isinstance(text, str) else None
    return AuditRecord(**values)
