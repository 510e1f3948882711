"""The writer: records buffered without waiting, written in batches off the request path, bounded, pruned."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import threading
import typing as t

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import create_engine, event, func, select
from sqlalchemy.engine import Engine
from sqlalchemy.pool import StaticPool

from flask_mcp.audit.log import AuditLog
from flask_mcp.audit.models import COLUMNS, AuditRow
from flask_mcp.audit.reading import read_records
from flask_mcp.audit.writer import AuditWriter
from flask_mcp.config.oversight import AuditSettings
from flask_mcp.core.audit import AuditRecord
from tests.conftest import BOTH_DATABASES


def record(n: int = 0, **fields: t.Any) -> AuditRecord:
    return AuditRecord(time=1_000_000.0 + n, tool=f"tool{n}", arguments_digest="d" * 64, **fields)


@pytest.fixture
def engine(database_uri: str) -> t.Iterator[Engine]:
    engine = create_engine(database_uri)
    yield engine
    engine.dispose()


@pytest.fixture
def writer(engine: Engine) -> t.Iterator[AuditWriter]:
    writer = AuditWriter(engine, batch=3, retention_days=None)  # the records here are decades old
    writer.create_table()
    yield writer
    writer.close()
    assert not writer.running


def rows(engine: Engine) -> int:
    with engine.connect() as connection:
        return int(connection.execute(select(func.count()).select_from(AuditRow)).scalar_one())


@BOTH_DATABASES
def test_every_field_comes_back_as_written(writer: AuditWriter, engine: Engine) -> None:
    full = AuditRecord(
        time=1_700_000_000.25,
        tool="delete_note",
        kind="tool",
        principal="alice",
        client="Claude",
        session="s-1",
        surface="mcp",
        revision="2025-11-25",
        arguments_digest="a" * 64,
        arguments={"note_id": 7, "tags": ["x", "ü"]},
        approval="accepted",
        approval_mode="url",
        approver="alice",
        outcome="tool_error",
        error_code="-32010",
        duration_ms=12.5,
        trace_id="0" * 31 + "1",
    )
    writer.record(full)
    assert writer.flush()
    assert read_records(engine) == [full]


@BOTH_DATABASES
def test_ten_records_are_written_in_batches_of_three(writer: AuditWriter, engine: Engine) -> None:
    inserts: list[int] = []

    @event.listens_for(engine, "before_cursor_execute")
    def count(conn: t.Any, cursor: t.Any, statement: str, parameters: t.Any, context: t.Any, many: bool) -> None:
        if statement.lstrip().upper().startswith("INSERT"):
            inserts.append(len(parameters) // len(COLUMNS))  # one statement a batch, its rows' values in a row

    gate = threading.Event()
    original = writer._write

    def held(records: list[AuditRecord]) -> int:
        gate.wait(10)  # every record is buffered before the first batch is taken
        return original(records)

    writer._write = held  # type: ignore[method-assign]
    for n in range(10):
        writer.record(record(n))
    gate.set()
    assert writer.flush()
    assert rows(engine) == 10 and writer.written == 10
    assert max(inserts) <= 3 and sum(inserts) == 10


class _Unstarted:
    """A writer's thread that never runs: records stay buffered."""

    def __init__(self, *args: t.Any, **kwargs: t.Any) -> None:
        pass

    def start(self) -> None:
        pass

    def is_alive(self) -> bool:
        return False

    def join(self, timeout: float | None = None) -> None:
        pass


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(buffer=st.integers(1, 20), sent=st.integers(0, 60))
def test_the_buffer_never_holds_more_than_its_size_and_counts_the_rest(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, buffer: int, sent: int
) -> None:
    monkeypatch.setattr("flask_mcp.audit.writer.threading.Thread", _Unstarted)
    writer = AuditWriter(create_engine("sqlite://"), buffer=buffer)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="flask_mcp.audit"):
        for n in range(sent):
            writer.record(record(n))
    assert writer.waiting == min(sent, buffer)
    assert writer.dropped == max(0, sent - buffer)
    lost = [entry for entry in caplog.records if "audit records lost" in entry.getMessage()]
    assert len(lost) == (1 if sent > buffer else 0)  # once a minute at most, saying how many in all
    assert all("MCP_AUDIT_BUFFER" in entry.getMessage() for entry in lost)


def test_a_database_that_refuses_loses_the_batch_counted_and_never_raises(tmp_path: t.Any) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'missing' / 'audit.sqlite3'}")  # its folder does not exist
    writer = AuditWriter(engine)
    for n in range(4):
        writer.record(record(n))  # nothing raises on the request's side
    assert writer.flush()
    assert (writer.failed, writer.written) == (4, 0)
    writer.close()
    assert not writer.running


@BOTH_DATABASES
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ages=st.lists(st.floats(0, 200, allow_nan=False), min_size=1, max_size=12), days=st.integers(1, 100))
def test_retention_deletes_exactly_the_rows_older_than_it(engine: Engine, ages: list[float], days: int) -> None:
    now = 1_800_000_000.0
    writer = AuditWriter(engine, retention_days=days, batch=5, clock=lambda: now, prune_every=1e12)
    writer.create_table()
    writer.prune(now + 10**9)  # an empty table, whatever an earlier example left
    for n, age in enumerate(ages):
        writer.record(AuditRecord(time=now - age * 86400, tool=f"t{n}", arguments_digest="d"))
    assert writer.flush()
    kept = sum(1 for age in ages if now - age * 86400 >= now - days * 86400)
    writer.prune()  # (the writer prunes on its own once it has written, too)
    assert rows(engine) == kept
    writer.close()


def test_the_thread_ends_when_idle_and_starts_again_on_the_next_record(tmp_path: t.Any) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'audit.sqlite3'}")
    writer = AuditWriter(engine, idle=0.01, retention_days=None)
    writer.create_table()
    writer.record(record(1))
    assert writer.flush()
    thread = writer._thread
    if thread is not None:
        thread.join(10)  # nothing more to write: it ends on its own
    assert not writer.running
    writer.record(record(2))
    assert writer.flush() and writer.written == 2
    writer.close()
    assert not writer.running
    writer.record(record(3))  # after close: counted, never raised
    assert writer.dropped == 1


def test_what_is_buffered_is_written_when_the_process_exits_normally(tmp_path: t.Any) -> None:
    script = tmp_path / "exits.py"
    script.write_text(
        "import sys\n"
        "from sqlalchemy import create_engine\n"
        "from flask_mcp.audit.writer import AuditWriter\n"
        "from flask_mcp.core.audit import AuditRecord\n"
        "writer = AuditWriter(create_engine(sys.argv[1]), retention_days=None, linger=60)\n"
        "writer.create_table()\n"
        "for n in range(50):\n"
        "    writer.record(AuditRecord(time=1.0, tool='t', arguments_digest='d'))\n"
        "# no close(): the interpreter's exit writes them\n"
    )
    database = f"sqlite:///{tmp_path / 'audit.sqlite3'}"
    subprocess.run([sys.executable, str(script), database], check=True, timeout=60)
    assert rows(create_engine(database)) == 50


@given(size=st.integers(min_value=1, max_value=200))
@settings(max_examples=25, deadline=None)
def test_a_batch_is_written_in_statements_of_a_bounded_number_of_rows_in_one_transaction(size: int) -> None:
    """At most ROWS_PER_STATEMENT rows a statement, so the driver compiles a few texts once, not one a batch."""
    from flask_mcp.audit.models import ROWS_PER_STATEMENT

    engine = create_engine("sqlite://")
    writer = AuditWriter(engine, retention_days=None)
    writer.create_table()
    inserts: list[tuple[str, int]] = []
    commits: list[str] = []

    @event.listens_for(engine, "before_cursor_execute")
    def count(conn: t.Any, cursor: t.Any, statement: str, parameters: t.Any, context: t.Any, many: bool) -> None:
        if statement.lstrip().upper().startswith("INSERT"):
            inserts.append((statement, len(parameters) // len(COLUMNS)))

    event.listen(engine, "commit", lambda conn: commits.append("commit"))
    try:
        assert writer._write([record(n) for n in range(size)]) == size
        assert rows(engine) == size and len(commits) == 1
        assert sum(rows for _, rows in inserts) == size
        assert all(rows == ROWS_PER_STATEMENT for _, rows in inserts[:-1]) and 0 < inserts[-1][1] <= ROWS_PER_STATEMENT
        assert all(statement.count("(?") == rows for statement, rows in inserts)
    finally:
        writer.close()
        engine.dispose()


@given(batch=st.integers(min_value=1, max_value=40), batches=st.integers(min_value=1, max_value=4))
@settings(max_examples=20, deadline=None)
def test_a_full_batch_is_written_without_waiting_for_the_linger(batch: int, batches: int) -> None:
    """The linger bounds how long a batch waits to fill; a full one goes at once, one transaction each."""
    engine = create_engine("sqlite://", poolclass=StaticPool, connect_args={"check_same_thread": False})
    writer = AuditWriter(engine, batch=batch, retention_days=None, linger=3600)  # longer than any wait here
    writer.create_table()
    commits: list[str] = []
    event.listen(engine, "commit", lambda conn: commits.append("commit"))
    try:
        for n in range(batch * batches):
            writer.record(record(n))
        with writer._changed:  # no flush(): that would write at once, whatever the linger
            assert writer._changed.wait_for(lambda: writer._finished == batch * batches, timeout=60)
        assert (writer.written, rows(engine), len(commits)) == (batch * batches, batch * batches, batches)
    finally:
        writer.close()
        engine.dispose()


def test_the_app_s_writer_lingers_as_configured() -> None:
    engine = create_engine("sqlite://")
    configured, default = AuditLog(engine, AuditSettings(linger=2.5)), AuditLog(engine, AuditSettings())
    try:
        assert configured.writer.linger == 2.5
        assert default.writer.linger == AuditWriter(engine).linger == AuditSettings().linger
    finally:
        configured.close()
        default.close()
        engine.dispose()


@given(size=st.integers(min_value=1, max_value=200))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_batch_holds_the_interpreter_a_slice_at_a_time(size: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Making a batch's rows, the writer pauses after every _SLICE of them: a call waits for a slice, not a batch."""
    from flask_mcp.audit import writer as writer_module

    made: list[str] = []

    def convert(item: int) -> AuditRecord:
        made.append("row")
        return record(item)

    with monkeypatch.context() as patched:
        patched.setattr(writer_module.time, "sleep", lambda seconds: made.append(f"pause {seconds}"))
        values = AuditWriter(create_engine("sqlite://"), convert=convert)._values(list(range(size)))
    assert len(values) == size * len(COLUMNS)
    runs = "".join("r" if step == "row" else "|" for step in made).split("|")
    assert all(0 < len(run) <= writer_module._SLICE for run in runs)  # no run of rows longer than a slice
    assert len(runs) == -(-size // writer_module._SLICE)  # and no pause that was not needed
    assert {step for step in made if step != "row"} <= {f"pause {writer_module._PAUSE}"}


@given(length=st.integers(min_value=0, max_value=600), arguments=st.none() | st.dictionaries(st.text(), st.integers()))
def test_a_rows_strings_are_cut_to_their_columns_never_refused(length: int, arguments: dict[str, int] | None) -> None:
    from flask_mcp.audit.models import _LENGTHS, values_of

    long = "x" * length
    made = record(1, principal=long, client=long, session=long, error_code=long, arguments=arguments)
    values = dict(zip(COLUMNS, values_of(made), strict=True))
    for name in ("principal", "client", "session", "error_code"):
        assert values[name] == long[: _LENGTHS[name]]
    assert values["tool"] == made.tool and values["time"] == made.time
    assert values["arguments"] == (None if arguments is None else json.dumps(arguments, sort_keys=True))
