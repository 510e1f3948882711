"""Reading the trail back: each filter narrows it, newest first, at most the limit; ``--since`` parsed."""

from __future__ import annotations

import datetime
import typing as t

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import create_engine
from sqlalchemy.engine import Engine

from flask_mcp.audit.reading import parse_since, read_records
from flask_mcp.audit.writer import AuditWriter
from flask_mcp.core.audit import AuditRecord
from tests.conftest import BOTH_DATABASES

ROWS = [
    AuditRecord(time=100.0, tool="add", principal="alice", client="Claude", outcome="ok", arguments_digest="1"),
    AuditRecord(time=200.0, tool="wipe", principal="bob", client="Cursor", outcome="refused", arguments_digest="2"),
    AuditRecord(time=300.0, tool="add", principal="bob", client="Claude", outcome="tool_error", arguments_digest="3"),
    AuditRecord(time=400.0, tool="add", principal="alice", client="Cursor", outcome="ok", arguments_digest="4"),
]


@pytest.fixture
def engine(database_uri: str) -> t.Iterator[Engine]:
    engine = create_engine(database_uri)
    writer = AuditWriter(engine, retention_days=None)
    writer.create_table()
    for row in ROWS:
        writer.record(row)
    assert writer.flush()
    writer.close()
    yield engine
    engine.dispose()


def digests(records: list[AuditRecord]) -> list[str]:
    return [record.arguments_digest for record in records]


@BOTH_DATABASES
def test_newest_first_and_at_most_the_limit(engine: Engine) -> None:
    assert digests(read_records(engine)) == ["4", "3", "2", "1"]
    assert digests(read_records(engine, limit=2)) == ["4", "3"]


@BOTH_DATABASES
@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"tool": "add"}, ["4", "3", "1"]),
        ({"principal": "bob"}, ["3", "2"]),
        ({"client": "Cursor"}, ["4", "2"]),
        ({"outcome": "ok"}, ["4", "1"]),
        ({"since": 250.0}, ["4", "3"]),
        ({"tool": "add", "principal": "alice", "since": 150.0}, ["4"]),
        ({"tool": "nothing"}, []),
    ],
)
def test_each_filter_narrows_the_trail(engine: Engine, filters: dict[str, t.Any], expected: list[str]) -> None:
    assert digests(read_records(engine, **filters)) == expected


@given(amount=st.integers(1, 10**6), unit=st.sampled_from(["s", "m", "h", "d", "w"]))
def test_an_age_is_that_long_before_now(amount: int, unit: str) -> None:
    seconds = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}[unit]
    assert parse_since(f"{amount}{unit}", 2e9) == 2e9 - amount * seconds


@given(when=st.datetimes(min_value=datetime.datetime(1971, 1, 1), max_value=datetime.datetime(2200, 1, 1)))
def test_an_iso_time_without_a_zone_is_utc(when: datetime.datetime) -> None:
    expected = when.replace(tzinfo=datetime.UTC).timestamp()
    assert parse_since(when.isoformat(), 0) == expected


@given(text=st.text(max_size=12).filter(lambda text: not text.strip()[:1].isdigit()))
def test_anything_else_is_refused_saying_what_is_taken(text: str) -> None:
    with pytest.raises(ValueError, match="neither an age"):
        parse_since(text, 0)
