"""The conformance suite's fixtures of the tasks extension (its ``tasks-*`` scenarios).

Registered on the conformance server by :func:`register`: tools that run as
tasks, and the plain ``greet`` the scenarios compare them with.
"""

from __future__ import annotations

import threading

from flask_mcp import MCP, Context, Elicit, MCPError, ToolError

NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
CONFIRM_FORM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}
DETAILS_FORM = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "confirm": {"type": "boolean"}},
    "required": ["name"],
}


def _pause(seconds: float, ctx: Context) -> bool:
    """Wait *seconds*, or less when the task is cancelled; whether it was."""
    stop = threading.Event()
    waited = 0.0
    while waited < seconds:
        if ctx.cancelled:
            return True
        stop.wait(0.05)
        waited += 0.05
    return ctx.cancelled


def register(mcp: MCP) -> None:
    """Add the tasks fixtures to *mcp*."""

    @mcp.tool(description="Greets by name, in the request")
    def greet(name: str) -> str:
        return f"Hello, {name}!"

    @mcp.tool(task="optional", description="Computes for a number of seconds, as a task when the client can")
    def slow_compute(seconds: float, ctx: Context, label: str = "") -> str:
        ctx.report_progress(0, message=f"computing {label}".strip())
        if _pause(seconds, ctx):
            return f"{label} stopped".strip()
        return f"{label} computed in {seconds:g} s".strip()

    @mcp.tool(task="required", description="A task whose tool fails: it completes with an error result")
    def failing_job(ctx: Context) -> str:
        _pause(0.5, ctx)
        raise ToolError("the job failed, as it always does")

    @mcp.tool(task="optional", description="A task that ends in a protocol error: it fails")
    def protocol_error_job() -> str:
        raise MCPError(-32603, "the job hit a protocol error")

    @mcp.tool(task="optional", description="Asks for confirmation inside its task")
    def confirm_delete(filename: str, ctx: Context) -> str:
        answer = ctx.elicit(f"Delete {filename}?", CONFIRM_FORM, key="confirm")
        confirmed = answer.action == "accept" and (answer.content or {}).get("confirm")
        return f"Deleted {filename}" if confirmed else f"Kept {filename}"

    @mcp.tool(task="optional", description="Asks two things at once inside its task")
    def multi_input(ctx: Context) -> str:
        answers = ctx.ask(
            name=Elicit("Your name?", DETAILS_FORM),
            confirm=Elicit("Go ahead?", DETAILS_FORM),
        )
        return f"Thanks, {(answers['name'].content or {}).get('name', 'stranger')}"

    @mcp.tool(
        task="required",
        ask_first={"user_name": Elicit("What is your name?", NAME_FORM)},
        description="Asks the user's name before its task starts, then greets them from the task",
    )
    def test_tool_with_task(ctx: Context) -> str:
        answer = ctx.elicit("What is your name?", NAME_FORM, key="user_name")
        return f"Hello, {(answer.content or {}).get('name', 'stranger')}, from a task"
