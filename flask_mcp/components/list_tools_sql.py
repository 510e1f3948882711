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

__all__ = [
    "Condition",
    "Sessions",
    "SessionSource",
    "column",
    "check_session",
    "condition",
    "query_page",
    "returns_select",
    "rows",
    "select_page",
    "session_source",
    "single_entity",
    "sql_kind",
]

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


def returns_select(func: t.Callable[..., t.Any]) -> bool:
    """Whether *func* is annotated to return a ``Select`` (``-> sa.Select``, ``-> Select[tuple[Task]]``)."""
    if "sqlalchemy" not in sys.modules:
        return False
    from sqlalchemy.sql import Select

    try:
        hint = t.get_type_hints(func).get("return")
    except Exception:  # unresolvable forward references: nothing to tell from them
        return False
    hint = t.get_origin(hint) or hint
    return isinstance(hint, type) and issubclass(hint, Select)


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


#: What a ``Select`` runs in when ``MCP(transaction=...)`` is a session and no ``session=`` was given.
_NO_SESSION = (
    "tool {tool!r} returned a SQLAlchemy Select but has no session to run it: "
    "pass session= to the decorator, or give the extension one with MCP(transaction=db.session)"
)


def session_source(transaction: t.Any) -> SessionSource | None:
    """*transaction* (``MCP(transaction=...)``) as a session source, or ``None`` when it is none.

    A ``Session``, a ``scoped_session`` and Flask-SQLAlchemy's ``db.session``
    run statements; a hook returning a context manager
    (``lambda: db.session.begin()``) cannot be told from any other callable,
    so it is no session source.
    """
    if transaction is not None and hasattr(transaction, "execute") and hasattr(transaction, "scalars"):
        return t.cast(SessionSource, transaction)
    return None


class Sessions:
    """Resolves the session a ``Select`` runs in, when it has to run.

    :param source: the decorator's ``session=``; without it, the
        extension's ``MCP(transaction=...)``, read from the running call's
        :class:`~flask_mcp.Context` (so each app's own, at call time).
    """

    def __init__(self, source: SessionSource | None, tool: str) -> None:
        self.source = source
        self.tool = tool

    def get(self, context: t.Any = None) -> Session:
        """The session to run in; *context* is the call's :class:`~flask_mcp.Context`, if any.

        :raises ToolError: neither ``session=`` nor a session as the extension's transaction.
        """
        source = self.source
        if source is None:
            transaction = getattr(context, "transaction", None)
            source = session_source(transaction)
            if source is None:
                message = _NO_SESSION.format(tool=self.tool)
                if transaction is not None:
                    message += f" (MCP(transaction=...) is {transaction!r}, which is no session)"
                raise ToolError(message)
        # A Session is not callable; a factory, a scoped_session or db.session is.
        return source() if callable(source) else source

    def query(self, query: t.Any, context: t.Any = None) -> t.Any:
        """A legacy ``Query`` runs on its own session, or on the configured one when it has none."""
        return query if query.session is not None else query.with_session(self.get(context))


def rows(session: Session, stmt: t.Any, first: bool = False) -> t.Any:
    """The objects (one entity selected) or row mappings *stmt* yields in *session*: all, or the first."""
    result = session.scalars(stmt) if single_entity(stmt) else session.execute(stmt).mappings()
    return result.first() if first else result.all()


#: One active filter: the attribute, the lookup and the value the caller gave.
Condition = tuple[str, str, t.Any]


def condition(column: t.Any, lookup: str, value: t.Any, dialect: str) -> t.Any:
    """The SQL condition of one lookup (see :data:`~flask_mcp.components.list_tools_filters.LOOKUPS`).

    Text lookups escape ``%`` and ``_`` (``autoescape``). SQLite's ``LIKE``
    ignores ASCII case, so the case-sensitive ones use ``GLOB`` there, with
    its wildcards bracketed; elsewhere ``LIKE`` is as case-sensitive as the
    database makes it (PostgreSQL: yes; MySQL: as the column's collation says).
    """
    if lookup == "exact":
        return column == value  # == None is IS NULL, as None == None in Python
    if lookup == "in":
        return column.in_(value)
    if lookup == "isnull":
        return column.is_(None) if value else column.is_not(None)
    if lookup in _ORDER:
        return getattr(column, _ORDER[lookup])(value)
    if lookup.startswith("i"):  # icontains, istartswith, iendswith: lower() on both sides
        return getattr(column, lookup)(value, autoescape=True)
    if dialect == "sqlite":
        pattern = "".join(f"[{char}]" if char in "*?[" else char for char in value)
        return column.op("GLOB")(_GLOB[lookup].format(pattern))
    return getattr(column, lookup)(value, autoescape=True)


_ORDER = {"gt": "__gt__", "gte": "__ge__", "lt": "__lt__", "lte": "__le__"}
_GLOB = {"contains": "*{}*", "startswith": "{}*", "endswith": "*{}"}


def _filtered(stmt: t.Any, conditions: t.Sequence[Condition], dialect: t.Callable[[], str]) -> t.Any:
    name = dialect() if any(lookup in _GLOB for _, lookup, _ in conditions) else ""
    where = [condition(column(stmt, attribute), lookup, value, name) for attribute, lookup, value in conditions]
    return stmt.filter(*where) if where else stmt


def _ordered(stmt: t.Any, ordering: tuple[str, bool] | None) -> t.Any:
    if ordering is None:
        return stmt
    by = column(stmt, ordering[0])
    return stmt.order_by(by.desc() if ordering[1] else by.asc())


def select_page(
    session: Session,
    stmt: t.Any,
    conditions: t.Sequence[Condition],
    ordering: tuple[str, bool] | None,
    page: int | None,
    limit: int,
) -> tuple[list[t.Any], int]:
    """Run a ``Select`` filtered, ordered and (unless *page* is ``None``) paged; with the total count."""
    import sqlalchemy as sa

    source = stmt
    stmt = _ordered(_filtered(stmt, conditions, lambda: session.get_bind(clause=source).dialect.name), ordering)
    if page is None:
        return list(rows(session, stmt)), 0
    total = session.scalar(sa.select(sa.func.count()).select_from(stmt.subquery())) or 0
    return list(rows(session, stmt.limit(limit).offset((page - 1) * limit))), total


def query_page(
    query: t.Any,
    conditions: t.Sequence[Condition],
    ordering: tuple[str, bool] | None,
    page: int | None,
    limit: int,
) -> tuple[list[t.Any], int]:
    """Run a legacy ``Query`` filtered, ordered and (unless *page* is ``None``) paged; with the total count."""
    source = query

    def dialect() -> str:
        return str(source.session.get_bind(clause=source.statement).dialect.name)

    query = _ordered(_filtered(query, conditions, dialect), ordering)
    if page is None:
        return list(query.all()), 0
    return list(query.limit(limit).offset((page - 1) * limit).all()), query.count()


def check_session(func: t.Callable[..., t.Any], options: t.Mapping[str, t.Any], transaction: t.Any) -> None:
    """Refuse, at registration, a list or retrieve tool whose ``Select`` no session could run.

    Only a function annotated to return a ``Select`` tells what it returns
    before it is called; any other is checked when its result needs a session.

    :param transaction: the extension's ``MCP(transaction=...)``.
    :raises ValueError: annotated ``-> Select`` with neither ``session=`` nor a
        session as the transaction.
    """
    if options.get("session") is not None or session_source(transaction) is not None:
        return
    if returns_select(func):
        name = options.get("name") or getattr(func, "__name__", "?")
        raise ValueError(
            f"tool {name!r} returns a SQLAlchemy Select but has no session to run it: pass session= "
            "to the decorator, or give the extension one with MCP(transaction=db.session)"
        )
