"""Writing audit records off the request path: a bounded buffer, a thread, rows in batches.

:meth:`AuditWriter.record` only appends to a buffer in memory and never
waits for the database: a call is never slowed or failed by its record. A
thread of this process (started on the first record, ended once it has had
nothing to write for a while) inserts what is buffered in batches of at most
``batch`` rows, one transaction each, and at most once per ``prune_every``
seconds deletes rows older than the retention.

What may be lost, and is always counted and logged, never silently:

- records arriving while the buffer is full (``dropped``: the database is
  slower than the calls, or down);
- the rows of a batch the database refused (``failed``);
- records still buffered when the process dies (a crash, ``kill -9``): at
  most the buffer's size, usually the last second's (``linger``). An
  interpreter that exits normally writes them first.
"""

from __future__ import annotations

import atexit
import collections
import logging
import threading
import time
import typing as t
import weakref

from sqlalchemy import delete, inspect, select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from ..core.audit import AuditRecord
from .models import COLUMNS, ROWS_PER_STATEMENT, AuditRow, Base, insert_statement, values_of

__all__ = ["AuditWriter"]

logger = logging.getLogger("flask_mcp.audit")

#: Seconds between two warnings about lost records (each says how many in all).
_WARN_EVERY = 60.0
#: Rows made at a time (a few tenths of a millisecond of the interpreter), and the pause after each
#: slice, in which the threads serving calls have the interpreter.
_SLICE = 32
_PAUSE = 0.0002
#: Every writer alive: what each has buffered is written when the interpreter exits normally.
_WRITERS: weakref.WeakSet[AuditWriter] = weakref.WeakSet()


@atexit.register
def _write_before_exit() -> None:
    for writer in list(_WRITERS):
        writer.close(timeout=5.0)


class AuditWriter:
    """Keeps records in a bounded buffer and writes them to ``mcp_audit`` from a thread.

    :param engine: the SQLAlchemy engine of the table.
    :param buffer: records waiting at most (``MCP_AUDIT_BUFFER``).
    :param batch: rows per transaction at most (``MCP_AUDIT_BATCH``).
    :param retention_days: rows older than this are deleted (``MCP_AUDIT_RETENTION_DAYS``); ``None``: kept.
    :param clock: seconds since the epoch (rows' ages, the pruning's schedule).
    :param prune_every: seconds between two deletions of old rows.
    :param idle: seconds without a record after which the thread ends (the next record starts it again).
    :param linger: seconds the thread waits for a batch to fill before it writes a smaller one
        (``MCP_AUDIT_LINGER``): one transaction for many calls, rather than one each; a full batch is
        written at once. Each batch takes the interpreter from the calls for a while: fewer, larger
        ones keep a busy worker's slowest calls closer to those of one that records nothing.
    :param convert: makes each buffered item an :class:`~flask_mcp.core.audit.AuditRecord`, or its values in
        the order of its fields, on the thread (an ended call's facts, made into its row off the request
        path); default: items are records.
    """

    def __init__(
        self,
        engine: Engine,
        *,
        buffer: int = 10_000,
        batch: int = 500,
        retention_days: float | None = 90.0,
        clock: t.Callable[[], float] = time.time,
        prune_every: float = 3600.0,
        idle: float = 5.0,
        linger: float = 1.0,
        convert: t.Callable[[t.Any], AuditRecord | tuple[t.Any, ...]] | None = None,
    ) -> None:
        self.engine = engine
        self.buffer = buffer
        self.batch = batch
        self.retention_days = retention_days
        self.clock = clock
        self.prune_every = prune_every
        self.idle = idle
        self.linger = linger
        self.convert = convert
        #: Whether ``mcp_audit`` is known to exist (made at start, or before the first batch after).
        self.table_made = False
        #: Callers of :meth:`flush` waiting: the thread writes at once, without lingering.
        self._flushing = 0
        self._queue: collections.deque[t.Any] = collections.deque()
        self._changed = threading.Condition(threading.Lock())
        self._thread: threading.Thread | None = None
        self._closed = False
        self._accepted = self._finished = 0
        self._written = self._dropped = self._failed = 0
        self._next_prune = 0.0
        self._warned_at: float | None = None
        _WRITERS.add(self)

    # -- the request side ------------------------------------------------------------------------

    def record(self, record: t.Any) -> None:
        """Buffer *record* (or what :attr:`convert` makes one of) for writing; never waits for the
        database and never raises."""
        with self._changed:
            if self._closed or len(self._queue) >= self.buffer:
                self._dropped += 1
                dropped = self._dropped
                warn = self._warned_at is None or self.clock() - self._warned_at >= _WARN_EVERY
                if warn:
                    self._warned_at = self.clock()
            else:
                self._queue.append(record)
                self._accepted += 1
                warn = False
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name="mcp-audit", daemon=True)
                    self._thread.start()
                elif len(self._queue) in (1, self.batch):
                    # The thread waits for a first record, then for a full batch: no wake-up for each call.
                    self._changed.notify_all()
        if warn:
            logger.warning(
                "audit records lost: %d in all, the buffer of %d being full (MCP_AUDIT_BUFFER) or the writer "
                "closed; the database is slower than the calls, or down",
                dropped,
                self.buffer,
            )

    @property
    def written(self) -> int:
        """Rows written so far."""
        return self._written

    @property
    def dropped(self) -> int:
        """Records not kept: the buffer was full, or the writer closed."""
        return self._dropped

    @property
    def failed(self) -> int:
        """Rows the database refused."""
        return self._failed

    @property
    def waiting(self) -> int:
        """Records buffered, not written yet."""
        return len(self._queue)

    @property
    def running(self) -> bool:
        """Whether the writer's thread is alive."""
        thread = self._thread
        return thread is not None and thread.is_alive()

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every record buffered before this call is written (or failed); ``True`` when done in time."""
        deadline = time.monotonic() + timeout
        with self._changed:
            target = self._accepted
            self._flushing += 1
            self._changed.notify_all()  # a lingering thread writes now
            try:
                while self._finished < target:
                    left = deadline - time.monotonic()
                    if left <= 0 or not self._changed.wait(left):
                        return self._finished >= target
            finally:
                self._flushing -= 1
        return True

    def close(self, timeout: float = 10.0) -> None:
        """Write what is buffered, then stop the thread; later records are counted as dropped."""
        self.flush(timeout)
        with self._changed:
            self._closed = True
            thread = self._thread
            self._changed.notify_all()
        if thread is not None:
            thread.join(timeout)

    # -- the writer's thread ---------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._changed:
                if not self._queue and not self._closed:
                    self._changed.wait(self.idle)
                if not self._queue:
                    self._thread = None  # idle, or closed: the next record starts another thread
                    self._changed.notify_all()
                    return
                if len(self._queue) < self.batch and not (self._closed or self._flushing):
                    self._changed.wait(self.linger)  # more calls come: one transaction for them all
                taken = [self._queue.popleft() for _ in range(min(self.batch, len(self._queue)))]
            written = self._write(taken)
            with self._changed:
                self._written += written
                self._failed += len(taken) - written
                self._finished += len(taken)
                self._changed.notify_all()
            if self.retention_days is not None and self.clock() >= self._next_prune:
                self._next_prune = self.clock() + self.prune_every
                self.prune()

    def _write(self, items: list[t.Any]) -> int:
        if not self.table_made:
            try:
                self.create_table()
            except SQLAlchemyError:
                logger.exception("audit: the table could not be made; %d record(s) are lost", len(items))
                return 0
        try:
            values = self._values(items)
        except Exception:  # a bug making records: the batch is lost, and said so
            logger.exception("audit: %d record(s) could not be made and are lost", len(items))
            return 0
        try:
            with self.engine.begin() as connection:
                # Straight to the driver, in statements of many rows: the writer's time is the calls' time
                # too (the GIL). Of ROWS_PER_STATEMENT rows and the rest: texts the driver compiled before.
                paramstyle, width = connection.dialect.paramstyle, len(COLUMNS)
                for start in range(0, len(items), ROWS_PER_STATEMENT):
                    rows = min(ROWS_PER_STATEMENT, len(items) - start)
                    chunk = tuple(values[start * width : (start + rows) * width])
                    connection.exec_driver_sql(insert_statement(paramstyle, rows), chunk)
        except SQLAlchemyError:
            logger.exception("audit: %d record(s) could not be written and are lost", len(items))
            return 0
        return len(items)

    def _values(self, items: list[t.Any]) -> list[t.Any]:
        # The rows' values, made a slice at a time with a pause between: making them holds the
        # interpreter, and a call arriving meanwhile would otherwise wait for the whole batch.
        values: list[t.Any] = []
        convert = self.convert
        for start in range(0, len(items), _SLICE):
            if start:
                time.sleep(_PAUSE)
            for item in items[start : start + _SLICE]:
                values.extend(values_of(item if convert is None else convert(item)))
        return values

    def prune(self, now: float | None = None) -> int:
        """Delete the rows older than the retention, a batch at a time; how many were deleted."""
        if self.retention_days is None:
            return 0
        before = (self.clock() if now is None else now) - self.retention_days * 86400
        deleted = 0
        try:
            while True:
                with self.engine.begin() as connection:
                    # By primary key, a batch at a time: no single delete holds the whole table.
                    ids = select(AuditRow.id).where(AuditRow.time < before).limit(self.batch)
                    found = [row[0] for row in connection.execute(ids)]
                    if not found:
                        return deleted
                    connection.execute(delete(AuditRow).where(AuditRow.id.in_(found)))
                deleted += len(found)
        except SQLAlchemyError:
            logger.exception("audit: old rows could not be deleted")
            return deleted

    def create_table(self) -> None:
        """Create ``mcp_audit`` when it does not exist (two processes starting at once may both try).

        :raises sqlalchemy.exc.SQLAlchemyError: the database cannot be reached; the next batch tries again.
        """
        try:
            Base.metadata.create_all(self.engine)
        except SQLAlchemyError:
            if not inspect(self.engine).has_table(AuditRow.__tablename__):
                raise
        self.table_made = True
