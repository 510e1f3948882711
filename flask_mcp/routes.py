"""The app's own routes as MCP tools: :func:`expose_routes` and :func:`route_tool`.

This path is kept for imports; the code lives in :mod:`flask_mcp.integrations.routes`.
"""

from __future__ import annotations

from .integrations.routes.arguments import RouteArguments, route_arguments
from .integrations.routes.expose import ROUTE_TOOL_ATTRIBUTE, expose_routes, route_tool
from .integrations.routes.view_tools import ViewRoute, route_caller_digest, route_for, route_of

__all__ = [
    "ROUTE_TOOL_ATTRIBUTE",
    "RouteArguments",
    "ViewRoute",
    "expose_routes",
    "route_arguments",
    "route_caller_digest",
    "route_for",
    "route_of",
    "route_tool",
]
