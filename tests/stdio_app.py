"""A small app for the stdio and CLI tests: ``flask --app tests.stdio_app mcp stdio``.

It serves a plain tool, a tool that fails, a tool that reports progress and
asks the client's model (a :class:`~flask_mcp.Context` handler), a tool that
prints (which must not reach stdout), a tool that announces a note changed
(for listen streams), a resource, a resource template and a prompt.
"""

from __future__ import annotations

from flask import Flask, current_app, g

from flask_mcp import MCP, Context, ToolError

mcp = MCP(name="stdio-app", version="2.0.0")


@mcp.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool
def explode(reason: str) -> str:
    """Always fails, as a tool error."""
    raise ToolError(f"exploded: {reason}")


@mcp.tool
def chatty(word: str) -> str:
    """Prints to stdout, which the stdio transport sends to stderr."""
    print(f"chatty says {word}")
    g.word = word  # g works: every message runs in its own request context
    return f"{current_app.name}:{g.word}"


@mcp.tool
def ask(question: str, ctx: Context) -> str:
    """Report progress, then ask the client's model."""
    ctx.report_progress(1, total=2, message="asking")
    reply = ctx.sample(question, max_tokens=16)
    ctx.report_progress(2, total=2)
    return f"model said: {reply['content']['text']}"


@mcp.tool
def touch(note_id: str) -> str:
    """Tell listeners that a note changed."""
    mcp.notify_resource_updated(f"notes://{note_id}")
    return f"touched notes://{note_id}"


@mcp.resource("config://motd", mime_type="text/plain", description="Message of the day.")
def motd() -> str:
    return "Hello from stdio"


@mcp.resource("notes://{note_id}", mime_type="text/plain")
def note(note_id: str) -> str:
    return f"note {note_id}"


@mcp.prompt
def review(code: str, language: str = "python") -> str:
    """Ask for a code review."""
    return f"Review this {language}:\n{code}"


app = Flask(__name__)
mcp.init_app(app)
