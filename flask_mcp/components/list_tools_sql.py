"""The SQLAlchemy side of list and retrieve tools (SQLAlchemy itself is optional).

Nothing here imports SQLAlchemy unless the application already has: a value
cannot be a ``Select`` or a ``Query`` otherwise.
"""

from __future__ import annotations

import sys
import typing as t

from ..protocol.errors import ToolError

if t.TYPE_CHECKING:
    from sqlalchemy.orm import Session

__all__ = ["Sessions", "SessionSource", "column", "query_page", "select_page", "single_entity", "sql_kind"]

#: A SQLAlchemy session, or a callable returning one (Flask-SQLAlchemy's ``db.session`` is one).
SessionSource = t.Union["Session", t.Callable[[], "Session"]]


def sql_kind(value: t.Any) -> str | None:
    """``"select"``, ``"query"`` or ``None``; imports nothing unless SQLAlchemy is loaded."""
    if "sqlalchemy" not in sys.modules:
        return None
    from sqlalchemy.orm import Query
    from sqlalchemy.sql import Select

    if isinstance(value, Select):
        return "select"
    if isinstance(value, Query):
        return "query"
    return None


def single_entity(stmt: t.Any) -> bool:
    # select(User) yields User objects through scalars(); anything else
    # (columns, several entities) yields rows, dumped by key from their mapping.
    descriptions = stmt.column_descriptions
    return (
        len(descriptions) == 1
        and descriptions[0]["entity"] is not None
        and descriptions[0]["expr"] is descriptions[0]["entity"]
    )


def column(stmt: t.Any, attribute: str) -> t.Any:
    """The column of a ``Select``/``Query`` that *attribute* names: an entity's attribute, else a selected column."""
    for description in stmt.column_descriptions:
        entity = description["entity"]
        if entity is not None and description["expr"] is entity and hasattr(entity, attribute):
            return getattr(entity, attribute)
    columns = stmt.selected_columns if hasattr(stmt, "selected_columns") else stmt.statement.selected_columns
    if attribute not in columns:
        raise LookupError(f"the query selects nothing named {attribute!r}")
    return columns[attribute]


class Sessions:
    """Resolves the configured session source when a ``Select`` has to run."""

    def __init__(self, source: SessionSource | None, tool: str) -> None:
        self.source = source
        self.tool = tool

    def get(self) -> Session:
        if self.source is None:
            raise ToolError(f"tool {self.tool!r} returned a SQLAlchemy Select but has no session= to run it")
        # A Session is not callable; a factory, a scoped_session or db.session is.
        return self.source() if callable(self.source) else self.source

    def query(self, query: t.Any) -> t.Any:
        """A legacy ``Query`` runs on its own session, or on the configured one when it has none."""
        return query if query.session is not None or self.source is None else query.with_session(self.get())

    def rows(self, stmt: t.Any, first: bool = False) -> t.Any:
        session = self.get()
        result = session.scalars(stmt) if single_entity(stmt) else session.execute(stmt).mappings()
        return result.first() if first else result.all()


def select_page(
    sessions: Sessions,
    stmt: t.Any,
    filters: dict[str, t.Any],
    ordering: tuple[str, bool] | None,
    page: int | None,
    limit: int,
) -> tuple[list[t.Any], int]:
    """Run a ``Select`` filtered, ordered and (unless *page* is ``None``) paged; with the total count."""
    import sqlalchemy as sa

    for key, wanted in filters.items():
        stmt = stmt.where(column(stmt, key) == wanted)
    if ordering is not None:
        by = column(stmt, ordering[0])
        stmt = stmt.order_by(by.desc() if ordering[1] else by.asc())
    if page is None:
        return list(sessions.rows(stmt)), 0
    total = sessions.get().scalar(sa.select(sa.func.count()).select_from(stmt.subquery())) or 0
    return list(sessions.rows(stmt.limit(limit).offset((page - 1) * limit))), total


def query_page(
    query: t.Any, filters: dict[str, t.Any], ordering: tuple[str, bool] | None, page: int | None, limit: int
) -> tuple[list[t.Any], int]:
    """Run a legacy ``Query`` filtered, ordered and (unless *page* is ``None``) paged; with the total count."""
    if filters:
        query = query.filter_by(**filters)
    if ordering is not None:
        by = column(query, ordering[0])
        query = query.order_by(by.desc() if ordering[1] else by.asc())
    if page is None:
        return list(query.all()), 0
    return list(query.limit(limit).offset((page - 1) * limit).all()), query.count()
