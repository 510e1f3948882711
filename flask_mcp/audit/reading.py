"""Reading the audit trail back: filtered, newest first."""

from __future__ import annotations

import datetime
import re
import typing as t

from sqlalchemy import select
from sqlalchemy.engine import Engine

from ..core.audit import AuditRecord
from .models import AuditRow, record_of

__all__ = ["as_json_ready", "parse_since", "read_records"]

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_AGO = re.compile(r"(\d{1,9})([smhdw])")


def parse_since(text: str, now: float) -> float:
    """The time *text* names, in seconds since the epoch: an age (``45s``, ``30m``, ``1h``, ``2d``, ``1w``)
    before *now*, or an ISO 8601 date or date and time (UTC unless it says otherwise).

    :raises ValueError: anything else.
    """
    text = text.strip()
    found = _AGO.fullmatch(text)
    if found is not None:
        return now - int(found.group(1)) * _UNITS[found.group(2)]
    try:
        when = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"{text!r} is neither an age (45s, 30m, 1h, 2d, 1w) nor an ISO 8601 date or time (2026-11-28T10:00)"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return when.timestamp()


def read_records(
    engine: Engine,
    *,
    tool: str | None = None,
    principal: str | None = None,
    client: str | None = None,
    outcome: str | None = None,
    since: float | None = None,
    limit: int = 100,
) -> list[AuditRecord]:
    """The records matching every filter given, newest first, at most *limit*."""
    query = select(AuditRow)
    for column, value in (
        (AuditRow.tool, tool),
        (AuditRow.principal, principal),
        (AuditRow.client, client),
        (AuditRow.outcome, outcome),
    ):
        if value is not None:
            query = query.where(column == value)
    if since is not None:
        query = query.where(AuditRow.time >= since)
    query = query.order_by(AuditRow.time.desc(), AuditRow.id.desc()).limit(limit)
    with engine.connect() as connection:
        return [record_of(row) for row in connection.execute(query)]


def as_json_ready(record: AuditRecord) -> dict[str, t.Any]:
    """*record* as ``flask mcp audit --json`` prints it: its time an ISO 8601 UTC string."""
    values = record.as_dict()
    when = datetime.datetime.fromtimestamp(record.time, tz=datetime.UTC)
    values["time"] = when.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return values
