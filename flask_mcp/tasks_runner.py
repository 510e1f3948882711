"""The embedded task executor: a pool of threads of this process (:mod:`flask_mcp.core.tasks`).

Zero set-up: a task's tool runs in one of ``MCP_TASK_WORKERS`` threads,
inside the app context and a request context of the endpoint (as a stdio
message is), so it finds ``current_app``, ``g`` and the extension as in a
request. Its status and result go to the shared store, so any process
answers for it; the task itself survives the request, not the process. A
worker that dies mid-task leaves it ``working`` until its ``ttl`` ends:
for tasks that must survive a process, run them on Celery workers.
"""

from __future__ import annotations

import logging
import threading
import typing as t
import weakref
from concurrent.futures import ThreadPoolExecutor

from .core.task_run import run_task
from .globals import state_of, use_server
from .transport.stdio import message_context

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
    """A :class:`~flask_mcp.core.tasks.TaskRunner` on a thread pool, started on the first task.

    :param app: the app whose server the tasks belong to (held weakly).
    :param server: that server's blueprint name (several servers may share the app).
    :param workers: the most tasks running at once; more wait their turn.
    """

    #: Tasks wait in this process's queue: the heartbeat covers them from submission on.
    runs_here = True

    def __init__(self, app: Flask, server: str, workers: int) -> None:
        self._app = weakref.ref(app)
        self.server = server
        self.workers = workers
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def submit(self, task_id: str) -> None:
        """Run task *task_id* on the pool."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="flask-mcp-task")
            pool = self._pool
        pool.submit(self._run, task_id)

    def _run(self, task_id: str) -> None:
        app = self._app()
        if app is None:
            return
        try:
            run_in_app(app, self.server, task_id)
        except Exception:  # the store failed: nothing left to record it in
            logger.exception("task %s could not be run", task_id)

    def shutdown(self, wait: bool = True) -> None:
        """Stop taking tasks; with *wait*, until the running ones end (tests, and a clean exit)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=wait)
