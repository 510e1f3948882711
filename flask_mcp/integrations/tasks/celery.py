"""Tasks on Celery workers (``MCP_TASK_EXECUTOR = "celery"``), possibly on other hosts.

The app's Celery instance (``app.extensions["celery"]``, as Flask's own
Celery pattern keeps it) gets one Celery task, :data:`CELERY_TASK`, when the
extension is set up; a tool call that becomes an MCP task sends it the
task's id, and a worker runs the tool inside the Flask app context (and a
request context of the endpoint), writing status, progress, questions and
result to the shared store, where every web process reads them. Start the
workers as usual, from the module that builds the app::

    celery -A myapp.celery_app worker

The worker must share the store with the web processes (Redis): the
record is the only thing the two sides exchange. A worker killed mid-task
stops the task's heartbeat, and the task is failed as lost
``MCP_TASK_LOST_AFTER`` seconds later; it never stays ``working``.
"""

from __future__ import annotations

import typing as t
import weakref

from ...policies.tool import ConfigurationError
from .runner import run_in_app

if t.TYPE_CHECKING:
    from flask import Flask

__all__ = ["CELERY_TASK", "CeleryTaskRunner", "celery_runner"]

#: The name of the Celery task that runs MCP tasks.
CELERY_TASK = "flask_mcp.run_task"


class CeleryTaskRunner:
    """A :class:`~flask_mcp.core.tasks.TaskRunner` that sends each task to the app's Celery workers.

    :param celery: the app's Celery instance.
    :param server: the MCP server's blueprint name (the worker runs the task on that server).
    :param queue: the Celery queue; ``None``: Celery's default routing.
    """

    def __init__(self, celery: t.Any, server: str, queue: str | None = None) -> None:
        self.celery = celery
        self.server = server
        self.queue = queue

    def submit(self, task_id: str, account: str = "") -> None:
        """Queue the run of *task_id* for a worker (the queue, not the runner, orders the accounts)."""
        options = {"queue": self.queue} if self.queue else {}
        self.celery.send_task(CELERY_TASK, args=(self.server, task_id), **options)


def celery_runner(app: Flask, server: str) -> CeleryTaskRunner:
    """The runner of *app*'s MCP server *server* on *app*'s Celery, its task registered there.

    :raises ~flask_mcp.ConfigurationError: the app has no Celery instance yet.
    """
    celery = app.extensions.get("celery")
    if celery is None:
        raise ConfigurationError(
            'MCP_TASK_EXECUTOR = "celery" needs the app\'s Celery instance in app.extensions["celery"] before the '
            "MCP extension is set up: create it first (Flask's celery_init_app pattern), then call mcp.init_app(app)"
        )
    if CELERY_TASK not in celery.tasks:
        _register(celery, app)
    return CeleryTaskRunner(celery, server)


def _register(celery: t.Any, app: Flask) -> None:
    flask_app = weakref.ref(app)

    # Acknowledged when a worker takes it (Celery's default): a worker lost mid-task
    # does not get the tool run twice; its heartbeat stops and the task fails as lost.
    @celery.task(name=CELERY_TASK, ignore_result=True)  # type: ignore[untyped-decorator]
    def run_mcp_task(server: str, task_id: str) -> None:
        app = flask_app()
        if app is not None:
            run_in_app(app, server, task_id)
