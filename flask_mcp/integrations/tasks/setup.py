"""A server's tasks as the app's settings make them (:mod:`flask_mcp.core.tasks`).

The store is the ephemeral cache, the runner the embedded executor or the
app's Celery, and the bounds are the ``MCP_TASK_*`` settings. A new
ownerless task (an anonymous caller without a session) spends the budget
of new sessions of its remote address (``MCP_SESSION_RATE_LIMIT``): it is
something kept for an hour on one request, as a session is.
"""

from __future__ import annotations

import functools
import typing as t

from ...core.tasks import TaskLimits, TaskRunner, Tasks
from ...policies.ratelimit import enforce
from ...stores.tasks import CacheTaskStore
from .celery import celery_runner
from .runner import ThreadTaskRunner

if t.TYPE_CHECKING:
    from flask import Flask

    from ...config.settings import Settings
    from ...policies.ratelimit import Limit, RateLimiter
    from ...stores.quota import StoreGuard

__all__ = ["build_tasks"]


def _admit(limiter: RateLimiter, limit: Limit, account: str) -> None:
    # The key of the session budget (stores.admission): new sessions and ownerless tasks share it.
    enforce(limiter, f"session:{account}", limit, "new sessions and tasks without a session")


def build_tasks(
    app: Flask,
    server: str,
    settings: Settings,
    cache: t.Any,
    limiter: RateLimiter | None,
    guard: StoreGuard | None = None,
) -> Tasks:
    """The tasks of *app*'s MCP server *server*: records in *cache*, budgets counted by *limiter*.

    *guard* refuses a new record when the store is at its high water, as for every kind a client makes it keep.
    """
    runner: TaskRunner
    if settings.task_executor == "celery":
        runner = celery_runner(app, server)
    else:
        share = settings.task_workers_per_caller or max(1, settings.task_workers // 2)
        runner = ThreadTaskRunner(app, server, settings.task_workers, per_caller=share)
    limit = settings.session_rate_limit
    return Tasks(
        CacheTaskStore(
            cache,
            settings.task_max_bytes,
            lost_after=settings.task_lost_after,
            heartbeat=settings.task_heartbeat,
            room=None if guard is None else guard.check_room,
        ),
        runner,
        ttl_ms=settings.task_ttl * 1000,
        poll_interval_ms=max(1, round(settings.task_poll_interval * 1000)),
        limits=TaskLimits(
            max_live=settings.task_max_per_caller,
            max_kept=settings.task_max_kept_per_caller,
            max_kept_bytes=settings.task_max_bytes_per_caller,
            max_total=settings.task_max_total,
            max_total_bytes=settings.task_max_total_bytes,
        ),
        heartbeat=settings.task_heartbeat,
        lost_after=settings.task_lost_after,
        admit=None if limiter is None or limit is None else functools.partial(_admit, limiter, limit),
    )
