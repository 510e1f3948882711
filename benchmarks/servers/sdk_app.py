"""The official Python SDK's server (``mcp`` 2.x) serving ``add(a, b)``, default settings."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("bench")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


app = mcp.streamable_http_app()
