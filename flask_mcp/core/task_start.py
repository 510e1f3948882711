"""Whether a ``tools/call`` becomes a task, and creating it (:mod:`flask_mcp.core.tasks`).

The 2026-07-28 extension lets the server decide: a tool that runs as a
task (``task="optional"`` or ``"required"``) answers a client that declared
the extension with a task, and a client that did not declare it gets the
call run in the request (``optional``) or -32021 (``required``). The
2025-11-25 revision lets the client ask (``params.task``): a ``required``
tool called without one gets -32601, as does a ``forbidden`` one called
with one; a server none of whose tools runs as a task ignores the member.

Questions a tool declares with ``ask_first=`` are settled before the task
exists: in the modern era as ``input_required`` rounds of the
``tools/call`` itself; their answers go with the task.
"""

from __future__ import annotations

import typing as t

from ..protocol.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND, MISSING_CAPABILITY, MCPError
from .approval import APPROVAL_META
from .tasks import EXTENSION

if t.TYPE_CHECKING:
    from ..components.model import Tool
    from .client import Call
    from .server import Server
    from .tasks import TaskRecord, Tasks

__all__ = ["declared_extension", "serves_tasks", "session_of", "start_task"]


def serves_tasks(server: Server) -> bool:
    """Whether *server* can run tasks and has a tool that runs as one."""
    return server.tasks is not None and any(tool.task_support != "forbidden" for tool in server.registry.tools.values())


def declared_extension(call: Call) -> bool:
    """Whether the modern request declared the tasks extension in its client capabilities."""
    extensions = call.state.capabilities.get("extensions")
    return isinstance(extensions, dict) and EXTENSION in extensions


def missing_extension() -> MCPError:
    """-32021 for a request that needs the tasks extension its client did not declare."""
    return MCPError(
        MISSING_CAPABILITY,
        f"This request needs the client to declare the {EXTENSION!r} extension",
        {"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
    )


def start_task(call: Call, tool: Tool, arguments: dict[str, t.Any]) -> dict[str, t.Any] | None:
    """The result announcing a new task for this call of *tool*, or ``None`` to run it in the request.

    :raises MCPError: -32021, -32601 or -32602 as the module's docstring says.
    :raises ~flask_mcp.core.rounds.InputRequired: an ``ask_first`` question is still open.
    """
    server = call.server
    # A tool that runs as a task makes the server one that serves tasks; only a call that asks for
    # a task of another tool needs the whole registry looked at.
    if server.tasks is None or (tool.task_support == "forbidden" and not serves_tasks(server)):
        return None
    if call.state.modern:
        if tool.task_support == "forbidden":
            return None  # the legacy params.task is not part of the revision: ignored
        if not declared_extension(call):
            if tool.task_support == "required":
                raise missing_extension()
            return None
        answers: dict[str, t.Any] = {}
        if tool.ask_first and call.round is not None:
            call.round.ask(dict(tool.ask_first), call.state.capabilities)
            answers = dict(call.round.used)
        record = _create(call, tool, arguments, era="modern", answers=answers)
        return {"resultType": "task", **record.modern_task()}
    requested = call.params.get("task")
    if requested is None:
        if tool.task_support == "required":
            raise MCPError(METHOD_NOT_FOUND, f"Tool {tool.name!r} runs only as a task: call it with params.task")
        return None
    if tool.task_support == "forbidden":
        raise MCPError(METHOD_NOT_FOUND, f"Tool {tool.name!r} does not run as a task: call it without params.task")
    if not isinstance(requested, dict):
        raise MCPError(INVALID_PARAMS, "Invalid params: 'task' must be an object")
    ttl = requested.get("ttl")
    if ttl is not None and (not isinstance(ttl, int) or isinstance(ttl, bool) or ttl < 1):
        raise MCPError(INVALID_PARAMS, "Invalid params: 'task.ttl' must be a positive integer of milliseconds")
    record = _create(call, tool, arguments, era="handshake", ttl_ms=ttl)
    return {"task": record.handshake_task()}


def _create(call: Call, tool: Tool, arguments: dict[str, t.Any], **options: t.Any) -> TaskRecord:
    """A new task running *tool* with *arguments* for the caller of *call*, as the request's client."""
    client_key = call.server.client_key
    return t.cast("Tasks", call.server.tasks).new_record(
        tool=tool.name,
        arguments=arguments,
        client=call.state.to_dict(),
        principal=call.principal,
        # The modern era has no session: a task is its principal's, or nobody's (read by its id alone).
        session_id=session_of(call),
        # What tells anonymous callers without a session apart, for their budgets.
        address=client_key() if client_key is not None else None,
        meta=_meta(call),
        **options,
    )


def session_of(call: Call) -> str | None:
    """The session a task of *call* belongs to: the handshake session; ``None`` in the modern era."""
    return None if call.state.modern else call.state.session_id


def _meta(call: Call) -> dict[str, t.Any]:
    # What the task's runs need of the request's _meta: its progress token, if any, and the trace
    # context of the call that creates it, so that its runs (in any process) continue that trace.
    tracer = call.server.tracer
    kept: dict[str, t.Any] = {} if tracer is None else tracer.outgoing({}).get("_meta", {})
    approval = call.approval
    if approval is not None and approval.outcome != "none":
        # Asked before the task was created: the audit record of its end says how it was approved.
        kept[APPROVAL_META] = {"outcome": approval.outcome, "mode": approval.mode, "approver": approval.approver}
    meta = call.params.get("_meta")
    if not isinstance(meta, dict) or "progressToken" not in meta:
        return kept
    token = meta["progressToken"]
    if isinstance(token, (str, int)) and not isinstance(token, bool):
        kept["progressToken"] = token
    return kept
