"""The app the deployment docs' server commands are tested with: ``create_app()`` as in ``docs/deployment.rst``.

``add`` answers at once; ``count`` reports progress on the way (an event stream when the client sends a
progress token).
"""

from __future__ import annotations

from flask import Flask

from flask_mcp import MCP, Context


def create_app() -> Flask:
    """An app with one plain tool and one that streams progress."""
    mcp = MCP(name="deployed", version="1.0.0")

    @mcp.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @mcp.tool
    def count(to: int, ctx: Context) -> int:
        """Count up to *to*, reporting each step."""
        for step in range(1, to + 1):
            ctx.report_progress(step, to, f"step {step}")
        return to

    app = Flask(__name__)
    mcp.init_app(app)
    return app
