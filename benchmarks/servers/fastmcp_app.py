"""fastmcp serving ``add(a, b)``: ``app`` (default, stateful) and ``stateless_app`` (stateless, JSON)."""

from __future__ import annotations

from fastmcp import FastMCP

mcp = FastMCP("bench")


@mcp.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


app = mcp.http_app(path="/mcp")
stateless_app = mcp.http_app(path="/mcp", stateless_http=True, json_response=True)
