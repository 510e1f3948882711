"""Signs of life of running tasks (:mod:`flask_mcp.core.tasks`), one thread per process for all of them.

A task a process runs, or holds queued, is stamped (``heartbeat_at`` in
its record) every ``MCP_TASK_HEARTBEAT`` seconds; when the process dies the
stamps stop, and the task is failed as lost once ``MCP_TASK_LOST_AFTER``
seconds have passed, when it is next read
(:meth:`~flask_mcp.core.tasks.Tasks.alive`).
"""

from __future__ import annotations

import logging
import threading
import time
import typing as t

if t.TYPE_CHECKING:
    from .tasks import TaskRecord, TaskStore

__all__ = ["HEARTBEATS", "Heartbeats", "stamp"]

logger = logging.getLogger("flask_mcp")


class Heartbeats:
    """Signs of life of the tasks this process runs or holds queued, written by one thread for all of them.

    A task whose signs stop (its process was killed) is failed as lost when
    it is next read (:meth:`~flask_mcp.core.tasks.Tasks.alive`). The thread
    starts with the first task and stamps every running one each *every*
    seconds from :meth:`watch` to :meth:`forget`.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[str, tuple[TaskStore, float]] = {}
        self._thread: threading.Thread | None = None
        self._wake = threading.Event()

    def watch(self, store: TaskStore, task_id: str, every: float) -> None:
        """Stamp *task_id* every *every* seconds from now on, until :meth:`forget`."""
        with self._lock:
            self._running[task_id] = (store, every)
            if self._thread is None:
                self._thread = threading.Thread(target=self._beat, name="flask-mcp-task-heartbeat", daemon=True)
                self._thread.start()

    def forget(self, task_id: str) -> None:
        """Stop stamping *task_id*."""
        with self._lock:
            self._running.pop(task_id, None)

    def _beat(self) -> None:
        last: dict[str, float] = {}
        while True:
            with self._lock:
                running = dict(self._running)
                if not running:
                    # Nothing left to stamp: the thread ends (the next task starts another).
                    self._thread = None
                    return
            now = time.monotonic()
            # A task is stamped when it starts being watched; the first beat is *every* later.
            last = {task_id: last.get(task_id, now) for task_id in running}
            for task_id, (store, every) in running.items():
                if now - last[task_id] < every:
                    continue
                last[task_id] = now
                try:
                    store.update(task_id, stamp)
                except Exception:  # a store hiccup: the next beat tries again
                    logger.warning("task %s: its heartbeat could not be written", task_id, exc_info=True)
            shortest = min((every for _, every in running.values()), default=1.0)
            self._wake.wait(min(shortest, 1.0) / 2)


def stamp(record: TaskRecord) -> bool:
    """Stamp ``heartbeat_at`` of a task whose run has not returned: a store update's change.

    A cancelled task whose tool still runs is stamped too: it holds a worker,
    and stays counted and kept until the tool returns.
    """
    if record.runs <= 0:
        return False
    record.heartbeat_at = time.time()
    return True


#: The heartbeats of this process's running tasks.
HEARTBEATS = Heartbeats()
