"""The app the official SDK's client is tested against, in this process, and the package's fixtures."""

from __future__ import annotations

import typing as t

import pytest
from flask import Flask

from flask_mcp import MCP, Context, MCPError, ScopeRequired

from ..conftest import Gates

__all__ = ["ERAS"]

#: The SDK's ``mode=`` for each era: the handshake (2025-11-25) and the stateless revision.
ERAS = ["legacy", "2026-07-28"]
OK = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
TOKENS = {"ada-token": {"subject": "ada", "scopes": ["notes:read"]}, "eve-token": "eve"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def shop(gates: Gates) -> MCP:
    """Tools, a resource template and a prompt, as a Flask developer writes them."""
    mcp = MCP(name="shop", version="1.0")

    @mcp.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @mcp.tool
    def pack(items: int, ctx: Context) -> str:
        """Report progress for each item; wait for the test before the last one."""
        for item in range(1, items + 1):
            ctx.report_progress(item, total=items, message=f"item {item}")
            if item == items - 1:
                gates.started.set()
                gates.release.wait(10)
        return f"packed {items}"

    @mcp.tool
    def watch(ctx: Context) -> str:
        """Report progress, then run until the test releases it or the client cancels."""
        ctx.report_progress(1, message="watching")
        while not gates.release.wait(0.01):
            if ctx.cancelled:
                gates.saw_cancel.set()
                return "stopped"
        return "watched"

    @mcp.tool
    def order(item: str, ctx: Context) -> str:
        """Ask the user to confirm."""
        answer = ctx.elicit(f"Order {item}?", OK, key="ok")
        return f"ordered {item}" if (answer.content or {}).get("ok") else "not ordered"

    @mcp.tool(permissions=[ScopeRequired("notes:read")])
    def notes(ctx: Context) -> str:
        """Only for a caller with the scope."""
        return f"notes of {ctx.principal.subject if ctx.principal else None}"

    @mcp.tool
    def refuse() -> str:
        """Refuse with a JSON-RPC error of the tool's own."""
        raise MCPError(-32010, "out of stock", {"item": "cake"})

    @mcp.resource("notes://{note_id}", mime_type="text/plain")
    def note(note_id: str) -> str:
        return f"note {note_id}"

    @mcp.prompt
    def review(code: str, language: str = "python") -> str:
        """Ask for a code review."""
        return f"Review this {language}:\n{code}"

    return mcp


@pytest.fixture
def app(make_app: t.Callable[..., Flask], gates: Gates) -> Flask:
    return make_app(shop(gates), MCP_SSE_KEEPALIVE=0.05)
