"""fastmcp serving ``add(a, b)``: ``app`` (default, stateful) and ``stateless_app`` (stateless, JSON).

``stateless_app`` serves both the handshake-era load and the modern (2026-07-28) one.
"""

from __future__ import annotations

from fastmcp import FastMCP

mcp = FastMCP("bench")


@mcp.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


app = mcp.http_app(path="/mcp")
stateless_app = mcp.http_app(path="/mcp", stateless_http=True, json_response=True)
