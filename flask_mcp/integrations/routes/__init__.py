"""The app's own routes as MCP tools: chosen by :func:`~flask_mcp.routes.expose_routes`,
or a view that is also a tool.

:mod:`~flask_mcp.integrations.routes.expose` makes the tools,
:mod:`~flask_mcp.integrations.routes.arguments` their arguments,
:mod:`~flask_mcp.integrations.routes.declarations` reads what a view declares,
:mod:`~flask_mcp.integrations.routes.dispatch` runs one call through the app,
and :mod:`~flask_mcp.integrations.routes.view_tools` serves a tool whose
function is a view. The public names are importable from :mod:`flask_mcp.routes`.
"""
