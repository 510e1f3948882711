"""MCP tasks run on the app's Celery workers (:func:`celery_runner`).

This path is kept for imports; the code lives in :mod:`flask_mcp.integrations.tasks.celery`.
"""

from __future__ import annotations

from .integrations.tasks.celery import CELERY_TASK, CeleryTaskRunner, celery_runner

__all__ = ["CELERY_TASK", "CeleryTaskRunner", "celery_runner"]
