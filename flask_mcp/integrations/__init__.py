"""What the extension serves from the rest of a Flask app: its routes, its task workers, skills folders, views.

Each is a package or module of its own, and none imports another:
:mod:`~flask_mcp.integrations.routes` (the app's routes as tools),
:mod:`~flask_mcp.integrations.tasks` (running tasks in threads or on Celery),
:mod:`~flask_mcp.integrations.skills` (skills folders) and
:mod:`~flask_mcp.integrations.apps` (MCP Apps views rendered from templates).
They are built on the transports and the protocol core, and the Flask
binding (:mod:`flask_mcp.binding`) wires them to an app.
"""
