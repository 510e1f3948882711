"""Task records in the cache, where every process that may answer for a task reads them.

One entry per task (its :class:`~flask_mcp.core.tasks.TaskRecord` as a
dict), kept until a while after its ``ttl``; one index per owner for
``tasks/list`` and the cap on live tasks; one flag per task asked to stop.
The index holds the owner's newest ids and those of its tasks that had not
ended when last looked at; older ids move, :data:`CHUNK` at a time, to
entries of their own that are written once, so creating a task writes the
same few hundred bytes however many tasks its owner made. Read-modify-write of a record or an index
takes its :func:`store_lock`, so a status written by the runner and an
answer written by a request on another host never overwrite each other.
The size of what a task keeps is bounded: a result larger than
``max_bytes`` is replaced by an error saying so (a tool that returns that
much should spill it to a resource: ``max_result_bytes``).
"""

from __future__ import annotations

import hashlib
import json
import time
import typing as t

from ..core.tasks import TaskLimit, TaskRecord
from ..protocol import jsonrpc
from .lock import store_lock

__all__ = ["CHUNK", "INDEX_SIZE", "CacheTaskStore"]

_RECORD = "task:"
_INDEX = "tasks-of:"
_CANCEL = "task-cancel:"
#: Seconds a record outlives its ttl, so "expired" can still be told from "never was" for a moment.
_GRACE = 60
#: The most task ids of an owner its index keeps, newest first (what ``tasks/list`` can show).
INDEX_SIZE = 1000
#: Task ids per chunk of an owner's index: the newest ones are in the index itself.
CHUNK = 50


class CacheTaskStore:
    """A :class:`~flask_mcp.core.tasks.TaskStore` in a flask-caching cache (shared by every worker on Redis).

    :param cache: the flask-caching ``Cache`` (the ephemeral one).
    :param max_bytes: the most one record may hold, as JSON (``MCP_TASK_MAX_BYTES``).
    :param clock: seconds since the epoch; tests pass their own.
    """

    def __init__(self, cache: t.Any, max_bytes: int = 1_048_576, clock: t.Callable[[], float] = time.time) -> None:
        self.cache = cache
        self.max_bytes = max_bytes
        self.clock = clock

    @staticmethod
    def _index_key(owner: str) -> str:
        # Hashed: an owner holds a subject, which may be long or hold characters a backend dislikes.
        return _INDEX + hashlib.sha256(owner.encode("utf-8")).hexdigest()[:40]

    def _timeout(self, record: TaskRecord) -> int:
        # 0 is "forever" to flask-caching: a task without a ttl lives as long as the store keeps it.
        if record.ttl_ms is None:
            return 0
        return max(1, int(record.created_at + record.ttl_ms / 1000 - self.clock()) + _GRACE)

    def _save(self, record: TaskRecord) -> None:
        data = record.to_dict()
        # Only a result can grow a record past the bound (questions and answers are bounded by the rounds'),
        # so only the result is measured.
        size = 0 if record.result is None else len(json.dumps(record.result, default=str, separators=(",", ":")))
        if size > self.max_bytes:
            data["result"] = None
            data["status"], data["error"] = (
                "failed",
                {
                    "code": jsonrpc.INTERNAL_ERROR,
                    "message": f"the task's result is larger than the server keeps ({self.max_bytes} bytes, "
                    "MCP_TASK_MAX_BYTES); have the tool return less, or spill it to a resource (max_result_bytes)",
                },
            )
        self.cache.set(_RECORD + record.task_id, data, timeout=self._timeout(record))

    def create(self, record: TaskRecord, max_live: int | None) -> None:
        """Keep *record* and add it to its owner's index.

        The index holds the owner's newest task ids (up to :data:`CHUNK`; the
        older ones, up to :data:`INDEX_SIZE` in all, are in chunks of their
        own, for ``tasks/list``) and, with a limit, the ids of those that had
        not ended when last looked at; only when they reach the limit are
        their records read, so creating a task costs the same however many
        its owner made.

        :raises TaskLimit: the owner has *max_live* tasks that have not ended.
        """
        index_key = self._index_key(record.owner)
        with store_lock(self.cache, index_key):
            index = self.cache.get(index_key)
            index = index if isinstance(index, dict) else {}
            live: list[str] = []
            if max_live is not None:
                live = [task_id for task_id in index.get("live", ()) if isinstance(task_id, str)]
                if len(live) >= max_live:
                    # Only at the limit are the records read: the ended ones leave the list.
                    live = [task_id for task_id in live if self._live(task_id)]
                    if len(live) >= max_live:
                        raise TaskLimit(max_live)
            self._save(record)
            # The index lives as long as the longest-lived task in it.
            until = (
                0.0
                if record.ttl_ms is None or index.get("until") == 0.0
                else max(float(index.get("until") or 0.0), record.created_at + record.ttl_ms / 1000 + _GRACE)
            )
            timeout = 0 if until == 0.0 else max(1, int(until - self.clock()))
            recent = [*index.get("recent", ()), record.task_id]
            chunks = [number for number in index.get("chunks", ()) if isinstance(number, int)]
            if len(recent) > CHUNK:
                # The full chunk is written once, under a number of its own; the oldest one is let go.
                number = (chunks[-1] + 1) if chunks else 0
                self.cache.set(f"{index_key}:{number}", recent[:CHUNK], timeout=timeout)
                chunks, recent = [*chunks, number][-(INDEX_SIZE // CHUNK - 1) :], recent[CHUNK:]
            entry = {"recent": recent, "chunks": chunks, "live": [*live, record.task_id], "until": until}
            self.cache.set(index_key, entry, timeout=timeout)

    def _live(self, task_id: str) -> bool:
        found = self.load(task_id)
        return found is not None and not found.terminal

    def load(self, task_id: str) -> TaskRecord | None:
        """The record of *task_id*, or ``None``."""
        data = self.cache.get(_RECORD + task_id)
        if not isinstance(data, dict):
            return None
        try:
            return TaskRecord.from_dict(data)
        except TypeError:  # a record of another shape (an older version's): as good as gone
            return None

    def update(self, task_id: str, change: t.Callable[[TaskRecord], bool]) -> TaskRecord | None:
        """Apply *change* under the record's lock; keep the record when it returns true."""
        with store_lock(self.cache, _RECORD + task_id):
            record = self.load(task_id)
            if record is None:
                return None
            if change(record):
                self._save(record)
            return record

    def owned(self, owner: str) -> list[TaskRecord]:
        """The records of *owner* that are still kept (of its newest :data:`INDEX_SIZE`), oldest first."""
        index_key = self._index_key(owner)
        index = self.cache.get(index_key)
        if not isinstance(index, dict):
            return []
        ids: list[t.Any] = []
        for number in index.get("chunks", ()):
            chunk = self.cache.get(f"{index_key}:{number}")
            ids.extend(chunk if isinstance(chunk, list) else ())
        ids.extend(index.get("recent", ()))
        found = (self.load(task_id) for task_id in ids if isinstance(task_id, str))
        return [record for record in found if record is not None and record.owner == owner]

    def request_cancel(self, task_id: str) -> None:
        """Raise the stop flag of *task_id*."""
        record = self.load(task_id)
        self.cache.set(_CANCEL + task_id, True, timeout=self._timeout(record) if record is not None else 3600)

    def cancel_requested(self, task_id: str) -> bool:
        """Whether *task_id* was asked to stop."""
        return bool(self.cache.get(_CANCEL + task_id))
