"""Task records in the cache, where every process that may answer for a task reads them.

Three kinds of entry:

* one per task: its :class:`~flask_mcp.core.tasks.TaskRecord` as a dict,
  kept until a while after its ``ttl``, and for as long as its tool runs
  (each sign of life of the run renews it);
* one *ledger* per account (whose budgets a task spends,
  :func:`~flask_mcp.core.tasks.account_of`): its kept tasks, oldest first,
  each with its size, when it is let go and whether it has ended. It is
  what ``tasks/list`` reads and what the caps of the account count;
* one *total* for the store: how many tasks, and how many bytes of them,
  it keeps, by the minute at which they are let go, so that what expires
  by itself leaves the total by itself.

A task that ends sheds what it no longer needs (its arguments, questions,
answers and caller) and its ledger entry is settled with its final size.
When an account is at one of its bounds, its oldest ended tasks are let go
to make room; when none has ended, the new task is refused (-31429). When
the store is at its total, new tasks are refused (-31503): nobody's task is
let go to make room for another caller's. Read-modify-write of a record, a
ledger or the total takes its :func:`store_lock` (always in that order), so
a status written by the runner and an answer written by a request on
another host never overwrite each other. A result larger than
``max_bytes`` is replaced by an error saying so (a tool that returns that
much should spill it to a resource: ``max_result_bytes``).
"""

from __future__ import annotations

import hashlib
import json
import math
import time
import typing as t

from ..core.tasks import TaskLimit, TaskRecord, TasksFull
from ..policies.store_keys import key as store_key
from ..protocol import jsonrpc
from .lock import store_lock

if t.TYPE_CHECKING:
    from ..core.tasks import TaskLimits

__all__ = ["BUCKET", "CacheTaskStore"]

_RECORD = "task"
_LEDGER = "tasks-of"
_TOTAL = "tasks-total"
_CANCEL = "task-cancel"
#: Seconds a record outlives its ttl, so "expired" can still be told from "never was" for a moment.
_GRACE = 60
#: Seconds per bucket of the store's total: a task leaves it within this long of being let go.
BUCKET = 60
#: The bucket of records kept without an end (no ``ttl``).
_FOREVER = -1

# A ledger entry: [task id, bytes, when it is let go (seconds since the epoch; 0: never), ended].
Entry = list[t.Any]


def _size(data: t.Any) -> int:
    return len(json.dumps(data, default=str, separators=(",", ":")))


class CacheTaskStore:
    """A :class:`~flask_mcp.core.tasks.TaskStore` in a flask-caching cache (shared by every worker on Redis).

    :param cache: the flask-caching ``Cache`` (the ephemeral one).
    :param max_bytes: the most one task's result may hold, as JSON (``MCP_TASK_MAX_BYTES``).
    :param lost_after: seconds without a sign of life after which a running tool no longer
        keeps its task (``MCP_TASK_LOST_AFTER``).
    :param heartbeat: seconds between two signs of life (``MCP_TASK_HEARTBEAT``).
    :param room: asked with a new record's size before it is kept; raises when the store
        has no room for it (:meth:`StoreGuard.check_room <flask_mcp.stores.quota.StoreGuard.check_room>`).
    :param clock: seconds since the epoch; tests pass their own.
    """

    def __init__(
        self,
        cache: t.Any,
        max_bytes: int = 1_048_576,
        clock: t.Callable[[], float] = time.time,
        *,
        lost_after: float | None = 30.0,
        heartbeat: float = 5.0,
        room: t.Callable[[int], None] | None = None,
    ) -> None:
        self.cache = cache
        self.room = room
        self.max_bytes = max_bytes
        self.clock = clock
        self.lost_after = lost_after
        #: Seconds a running task's record outlives its last save: past its last sign of life, and a grace.
        self.linger = max(lost_after or 0.0, heartbeat * 3) + _GRACE

    @staticmethod
    def _ledger_key(account: str) -> str:
        # Hashed: an account holds a subject, which may be long or hold characters a backend dislikes.
        return store_key(_LEDGER, hashlib.sha256(account.encode("utf-8")).hexdigest()[:40])

    def _until(self, record: TaskRecord, now: float) -> float:
        """When the store lets *record* go: 0 for never."""
        if record.ttl_ms is None:
            return 0.0
        until = record.created_at + record.ttl_ms / 1000 + _GRACE
        if record.in_use(now, self.lost_after):
            until = max(until, now + self.linger)  # its tool runs: kept while it gives signs of life
        return until

    @staticmethod
    def _timeout(until: float, now: float) -> int:
        # 0 is "forever" to flask-caching.
        return 0 if until == 0.0 else max(1, math.ceil(until - now))

    @staticmethod
    def _bucket(until: float) -> int:
        return _FOREVER if until == 0.0 else int(until // BUCKET)

    # -- records ------------------------------------------------------------------------

    def _prepare(self, record: TaskRecord, now: float, new: bool) -> tuple[dict[str, t.Any], float]:
        """The stored form of *record* and when it is let go; its ``charge`` brought up to date."""
        if record.terminal:
            record.shed()
        # Only a result can grow a record past the bound (questions and answers are bounded by the rounds'),
        # so only the result is measured.
        if record.result is not None and _size(record.result) > self.max_bytes:
            record.result = None
            record.error = {
                "code": jsonrpc.INTERNAL_ERROR,
                "message": f"the task's result is larger than the server keeps ({self.max_bytes} bytes, "
                "MCP_TASK_MAX_BYTES); have the tool return less, or spill it to a resource (max_result_bytes)",
            }
            record.status = "failed"
            record.status_message = record.error["message"]
        until = self._until(record, now)
        charge = dict(record.charge)
        if new or (record.terminal and not charge.get("final")):
            # Measured twice in its life: as created (its arguments), and once it has ended (its result).
            record.charge = {}
            charge["bytes"], charge["final"] = _size(record.to_dict()), record.terminal
        charge["bucket"] = self._bucket(until)
        record.charge = charge
        return record.to_dict(), until

    def _save(self, record: TaskRecord) -> None:
        now = self.clock()
        before = dict(record.charge)
        settle = not before.get("settled") and not record.live(now, self.lost_after)
        data, until = self._prepare(record, now, new=False)
        if settle:
            record.charge["settled"] = data["charge"]["settled"] = True
        timeout = self._timeout(until, now)
        self.cache.set(store_key(_RECORD, record.task_id), data, timeout=timeout)
        if record.status == "cancelled":
            # The stop flag lives as long as the record: a tool that runs past its ttl still reads it.
            self.cache.set(store_key(_CANCEL, record.task_id), True, timeout=timeout)
        after = record.charge
        if (before.get("bucket"), before.get("bytes")) != (after["bucket"], after["bytes"]):
            self._move(before, after)
        if settle or before.get("bucket") != after["bucket"]:
            self._note(record, until, ended=settle)

    def load(self, task_id: str) -> TaskRecord | None:
        """The record of *task_id*, or ``None``."""
        data = self.cache.get(store_key(_RECORD, task_id))
        if not isinstance(data, dict):
            return None
        try:
            return TaskRecord.from_dict(data)
        except TypeError:  # a record of another shape (an older version's): as good as gone
            return None

    def update(self, task_id: str, change: t.Callable[[TaskRecord], bool]) -> TaskRecord | None:
        """Apply *change* under the record's lock; keep the record when it returns true."""
        with store_lock(self.cache, store_key(_RECORD, task_id)):
            record = self.load(task_id)
            if record is None:
                return None
            if change(record):
                self._save(record)
            return record

    def request_cancel(self, task_id: str) -> None:
        """Raise the stop flag of *task_id* (for as long as its record is kept)."""
        record = self.load(task_id)
        now = self.clock()
        timeout = self._timeout(self._until(record, now), now) if record is not None else 3600
        self.cache.set(store_key(_CANCEL, task_id), True, timeout=timeout)

    def cancel_requested(self, task_id: str) -> bool:
        """Whether *task_id* was asked to stop."""
        return bool(self.cache.get(store_key(_CANCEL, task_id)))

    # -- ledgers: what each account keeps --------------------------------------------------

    def create(self, record: TaskRecord, limits: TaskLimits) -> None:
        """Keep *record*, within its account's bounds and the store's.

        Only when the account is at a bound are the records of its live
        tasks read (the ended ones leave the count), and then its oldest
        ended tasks let go; creating a task otherwise reads and writes its
        ledger and the total, whatever the account made before.

        :raises TaskLimit: the account is at its live cap, or its kept tasks fill its
            bounds and none of them has ended.
        :raises TasksFull: the store keeps as many tasks (or bytes) as *limits* allow.
        :raises StoreRefused: the store has no room (*room* said so).
        """
        now = self.clock()
        data, until = self._prepare(record, now, new=True)
        size = int(record.charge["bytes"])
        key = self._ledger_key(record.account)
        with store_lock(self.cache, key):
            entries = self._entries(key, now)
            fresh = False
            if limits.max_live is not None and sum(1 for entry in entries if not entry[3]) >= limits.max_live:
                entries, fresh = self._refresh(entries, now), True
                if sum(1 for entry in entries if not entry[3]) >= limits.max_live:
                    raise TaskLimit(limits.max_live)
            while self._over(entries, size, limits):
                if not fresh:
                    entries, fresh = self._refresh(entries, now), True
                    continue
                ended = next((entry for entry in entries if entry[3]), None)
                if ended is None:
                    raise self._full_account(limits)
                entries.remove(ended)
                self._let_go(str(ended[0]))
            if self.room is not None:
                # The store's own room, whatever this account may keep: a full store never evicts another's.
                self.room(size)
            self._add(record.charge, limits, now)
            self.cache.set(store_key(_RECORD, record.task_id), data, timeout=self._timeout(until, now))
            entries.append([record.task_id, size, until, False])
            self._write(key, entries, now)

    @staticmethod
    def _over(entries: list[Entry], size: int, limits: TaskLimits) -> bool:
        if limits.max_kept is not None and len(entries) >= limits.max_kept:
            return True
        kept = sum(int(entry[1]) for entry in entries)
        return limits.max_kept_bytes is not None and kept + size > limits.max_kept_bytes

    @staticmethod
    def _full_account(limits: TaskLimits) -> TaskLimit:
        bound = limits.max_kept if limits.max_kept is not None else limits.max_kept_bytes
        return TaskLimit(
            bound or 0,
            f"Too many tasks: the server keeps at most {limits.max_kept} of yours ({limits.max_kept_bytes} bytes), "
            "and none of them has ended; wait for one to end or cancel one",
        )

    def _entries(self, key: str, now: float) -> list[Entry]:
        """The ledger's entries that are still kept (those past their time are gone from the store)."""
        ledger = self.cache.get(key)
        found = ledger.get("tasks") if isinstance(ledger, dict) else None
        if not isinstance(found, list):
            return []
        return [
            list(entry)
            for entry in found
            if isinstance(entry, list) and len(entry) == 4 and (not entry[2] or entry[2] > now)
        ]

    def _refresh(self, entries: list[Entry], now: float) -> list[Entry]:
        """*entries* with the live ones read again: gone ones dropped, ended ones marked with their size."""
        kept: list[Entry] = []
        for entry in entries:
            if not entry[3]:
                found = self.load(str(entry[0]))
                if found is None:
                    continue
                if not found.live(now, self.lost_after):
                    entry = [entry[0], int(found.charge.get("bytes") or entry[1]), entry[2], True]
            kept.append(entry)
        return kept

    def _write(self, key: str, entries: list[Entry], now: float) -> None:
        # The ledger lives as long as the longest-kept task in it.
        untils = [float(entry[2]) for entry in entries]
        until = 0.0 if 0.0 in untils or 0 in untils else max(untils, default=now + 1)
        self.cache.set(key, {"tasks": entries}, timeout=self._timeout(until, now))

    def _note(self, record: TaskRecord, until: float, *, ended: bool) -> None:
        """Bring the ledger entry of *record* up to date: ended with its final size, or kept longer."""
        key = self._ledger_key(record.account)
        now = self.clock()
        with store_lock(self.cache, key):
            entries = self._entries(key, now)
            for entry in entries:
                if entry[0] == record.task_id:
                    entry[1], entry[2] = int(record.charge["bytes"]), until
                    entry[3] = entry[3] or ended
                    self._write(key, entries, now)
                    return

    def _let_go(self, task_id: str) -> None:
        """Delete an ended task of an account at its bound, and take it out of the total."""
        found = self.load(task_id)
        self.cache.delete(store_key(_RECORD, task_id))
        self.cache.delete(store_key(_CANCEL, task_id))
        if found is not None and found.charge:
            self._move(found.charge, {})

    def owned(self, account: str, owner: str) -> list[TaskRecord]:
        """The kept records of *account* that belong to *owner*, oldest first."""
        entries = self._entries(self._ledger_key(account), self.clock())
        found = (self.load(str(entry[0])) for entry in entries)
        return [record for record in found if record is not None and record.owner == owner]

    # -- the total: what the store keeps in all ---------------------------------------------

    def _buckets(self, now: float) -> dict[int, list[int]]:
        total = self.cache.get(_TOTAL)
        current = int(now // BUCKET)
        if not isinstance(total, dict):
            return {}
        return {
            int(bucket): [int(counts[0]), int(counts[1])]
            for bucket, counts in total.items()
            if (bucket == _FOREVER or int(bucket) >= current) and isinstance(counts, list) and len(counts) == 2
        }

    def _add(self, charge: dict[str, t.Any], limits: TaskLimits, now: float) -> None:
        """Count a new task in the total, unless the store would keep more than *limits* allow."""
        with store_lock(self.cache, _TOTAL):
            buckets = self._buckets(now)
            count = sum(counts[0] for counts in buckets.values())
            size = sum(counts[1] for counts in buckets.values())
            if (limits.max_total is not None and count + 1 > limits.max_total) or (
                limits.max_total_bytes is not None and size + int(charge["bytes"]) > limits.max_total_bytes
            ):
                raise TasksFull()
            counts = buckets.setdefault(int(charge["bucket"]), [0, 0])
            counts[0], counts[1] = counts[0] + 1, counts[1] + int(charge["bytes"])
            self.cache.set(_TOTAL, buckets, timeout=0)

    def _move(self, before: dict[str, t.Any], after: dict[str, t.Any]) -> None:
        """Move a task's share of the total from *before* to *after* (``{}``: out of it)."""
        with store_lock(self.cache, _TOTAL):
            buckets = self._buckets(self.clock())
            for charge, sign in ((before, -1), (after, 1)):
                if "bucket" in charge:
                    counts = buckets.setdefault(int(charge["bucket"]), [0, 0])
                    counts[0] = max(0, counts[0] + sign)
                    counts[1] = max(0, counts[1] + sign * int(charge.get("bytes", 0)))
            self.cache.set(_TOTAL, {bucket: counts for bucket, counts in buckets.items() if counts[0]}, timeout=0)
