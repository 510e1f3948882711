"""Where MCP tasks run: in a thread of the app's process, or on the app's Celery workers.

:mod:`~flask_mcp.integrations.tasks.runner` runs a task in a thread with the
app's context, :mod:`~flask_mcp.integrations.tasks.celery` sends it to
Celery, and :mod:`~flask_mcp.integrations.tasks.setup` builds an app's task
manager from its settings.
"""
