"""The embedded task executor: a pool of threads of this process (:mod:`flask_mcp.core.tasks`).

Zero set-up: a task's tool runs in one of ``MCP_TASK_WORKERS`` threads,
inside the app context and a request context of the endpoint (as a stdio
message is), so it finds ``current_app``, ``g`` and the extension as in a
request. Its status and result go to the shared store, so any process
answers for it; the task itself survives the request, not the process.
The threads are shared fairly: one caller runs at most
``MCP_TASK_WORKERS_PER_CALLER`` tasks at once, and a freed thread goes to
the caller running the fewest. A process that dies mid-task stops its
heartbeat, and the task is failed as lost (``MCP_TASK_LOST_AFTER``): for
tasks that must survive a process, run them on Celery workers.
"""

from __future__ import annotations

import collections
import logging
import threading
import typing as t
import weakref
from concurrent.futures import ThreadPoolExecutor

from ...core.heartbeats import HEARTBEATS
from ...core.task_run import run_task
from ...globals import state_of, use_server
from ...transport.stdio import message_context

if t.TYPE_CHECKING:
    from flask import Flask

__all__ = ["ThreadTaskRunner", "run_in_app"]

logger = logging.getLogger("flask_mcp")


def run_in_app(app: Flask, server: str, task_id: str) -> None:
    """Run task *task_id* of *app*'s MCP server *server* as a request would: in the app context and
    a request context of the endpoint. What every executor's worker does."""
    with app.app_context(), use_server(server):
        state = state_of(app)
        with message_context(app, state.endpoint_path or state.settings.url_prefix):
            run_task(state.server, task_id)


class ThreadTaskRunner:
    """A :class:`~flask_mcp.core.tasks.TaskRunner` on a thread pool, started on the first task, shared fairly.

    Each account (whose task it is, :func:`~flask_mcp.core.tasks.account_of`)
    runs at most *per_caller* of its tasks at once; its others wait in a
    queue of its own. When a thread frees, it takes the oldest waiting task
    of the account that runs the fewest, so one caller's long tasks never
    make another caller's wait behind all of them.

    :param app: the app whose server the tasks belong to (held weakly).
    :param server: that server's blueprint name (several servers may share the app).
    :param workers: the most tasks running at once; more wait their turn.
    :param per_caller: the most tasks of one account running at once; ``None``: *workers*.
    """

    #: Tasks wait in this process's queue: the heartbeat covers them from submission on.
    runs_here = True

    def __init__(self, app: Flask, server: str, workers: int, per_caller: int | None = None) -> None:
        self._app = weakref.ref(app)
        self.server = server
        self.workers = workers
        self.per_caller = min(workers, per_caller or workers)
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        #: Waiting tasks by account, the accounts in the order they first waited.
        self._waiting: dict[str, collections.deque[str]] = {}
        self._running: collections.Counter[str] = collections.Counter()

    def submit(self, task_id: str, account: str = "") -> None:
        """Queue task *task_id* of *account*; it runs as soon as a thread and the account's share allow."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="flask-mcp-task")
            self._waiting.setdefault(account, collections.deque()).append(task_id)
            self._dispatch()

    def _dispatch(self) -> None:
        """Start waiting tasks while threads are free: the account running the fewest first (under the lock)."""
        pool = self._pool
        while pool is not None and sum(self._running.values()) < self.workers:
            ready = [account for account in self._waiting if self._running[account] < self.per_caller]
            if not ready:
                return
            account = min(ready, key=lambda name: self._running[name])  # ties: the longest waiting account
            queue = self._waiting.pop(account)
            task_id = queue.popleft()
            if queue:
                self._waiting[account] = queue  # to the back: the next of its tasks waits its turn
            self._running[account] += 1
            pool.submit(self._run, task_id, account)

    def _run(self, task_id: str, account: str) -> None:
        try:
            app = self._app()
            if app is not None:
                run_in_app(app, self.server, task_id)
        except Exception:  # the store failed: nothing left to record it in
            logger.exception("task %s could not be run", task_id)
        finally:
            with self._lock:
                self._running[account] -= 1
                if self._running[account] <= 0:
                    del self._running[account]
                self._dispatch()

    def shutdown(self, wait: bool = True) -> None:
        """Stop taking tasks, dropping those still waiting; with *wait*, until the running ones end."""
        with self._lock:
            pool, self._pool = self._pool, None
            for queue in self._waiting.values():
                for task_id in queue:
                    HEARTBEATS.forget(task_id)  # never run here: failed as lost once its signs of life stop
            self._waiting.clear()
        if pool is not None:
            pool.shutdown(wait=wait)
