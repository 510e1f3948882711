"""One run of a task's tool, wherever the runner runs it (:mod:`flask_mcp.core.tasks`).

The run rebuilds the call from the task's record (the tool, its arguments,
the client's capabilities, the caller) and goes through the same path as a
``tools/call`` in a request, less the admission the request already passed.
What the tool reports reaches the record: a progress message, or a log
message at ``info`` or above (or the level the client asked for), becomes
the task's ``statusMessage``, ``ctx.cancelled`` reads the task's stop flag, and
a question without an answer yet puts the task in ``input_required`` with
the question in ``inputRequests``. When the client has answered them all
(``tasks/update``; in 2025-11-25, the requests ``tasks/result`` sends it),
the runner runs the tool again from the start, and the questions find
their answers, as in :mod:`flask_mcp.core.rounds`.

A run that finds its task cancelled, ended or gone does nothing; a task
cancelled while its tool runs stays cancelled whatever the tool returns.
"""

from __future__ import annotations

import json
import logging
import time
import typing as t

from ..policies.principal import Principal
from ..protocol.jsonrpc import INTERNAL_ERROR, MCPError
from .approval import APPROVAL_META, Approval
from .audit import Outcome
from .audit_calls import error_outcome, record_call, result_outcome
from .client import Call, ClientState
from .heartbeats import HEARTBEATS, stamp
from .methods.tools import run_in_task
from .rounds import Answers, InputRequired
from .tasks import end, ran

if t.TYPE_CHECKING:
    from ..components.model import Tool
    from .server import Server
    from .tasks import TaskRecord, Tasks, TaskStore

__all__ = ["TaskChannel", "run_task"]

logger = logging.getLogger("flask_mcp")


class TaskChannel:
    """A :class:`~flask_mcp.core.context.Channel` whose other end is the task's record."""

    def __init__(self, store: TaskStore, task_id: str) -> None:
        self.store = store
        self.task_id = task_id

    def notify(self, method: str, params: dict[str, t.Any]) -> None:
        """A progress message or a log message becomes the task's ``statusMessage``; nothing else has a reader."""
        if method == "notifications/progress":
            message = params.get("message")
        elif method == "notifications/message":
            data = params.get("data")
            message = data if isinstance(data, str) else json.dumps(data, default=str)
        else:
            return
        if not isinstance(message, str):
            return

        def describe(record: TaskRecord) -> bool:
            if record.terminal:
                return False
            record.moved(record.status, message)
            return True

        self.store.update(self.task_id, describe)

    def request(self, method: str, params: dict[str, t.Any], timeout: float) -> dict[str, t.Any]:
        """Never reached: a task's questions go through its answers (``call.round``)."""
        raise MCPError(INTERNAL_ERROR, "a task sends the client no requests")

    def cancelled(self) -> bool:
        """Whether the task was asked to stop."""
        return self.store.cancel_requested(self.task_id)

    def close_stream(self) -> None:
        """A task has no stream to close."""

    def unavailable(self) -> str | None:
        """A task can ask, through its answers."""
        return None


def _principal(record: TaskRecord) -> Principal | None:
    data = record.principal
    if data is None:
        return None
    return Principal(str(data.get("subject")), frozenset(data.get("scopes") or ()), dict(data.get("claims") or {}))


def run_task(server: Server, task_id: str) -> None:
    """Run the tool of task *task_id* once, and record what became of it."""
    tasks = server.tasks
    if tasks is None:
        return
    returned = False
    try:
        returned = _run(server, tasks, task_id)
    finally:
        HEARTBEATS.forget(task_id)
        try:
            if not returned:  # an ended task noted its run's return with its end
                ran(tasks.store, task_id)  # its tool no longer holds a worker: it stops counting as running
        except Exception:  # the store failed: the run's count goes stale with its heartbeat
            logger.warning("task %s: the end of its run could not be recorded", task_id, exc_info=True)


def _run(server: Server, tasks: Tasks, task_id: str) -> bool:
    """Run the task's tool; whether it ended the task, its run's return noted with the end."""
    store = tasks.store
    record = store.load(task_id)
    if record is not None and record.heartbeat_at is None and record.runs > 0:
        # Not watched while it waited (another host queued it): it starts giving signs of life now.
        record = store.update(task_id, stamp)
    # Cancelling sets the status before the stop flag: a task cancelled before it ran is terminal here.
    if record is None or record.terminal or record.status == "input_required":
        return False
    tool = server.registry.tools.get(record.tool)
    if tool is None:
        gone = MCPError(INTERNAL_ERROR, f"Tool {record.tool!r} is no longer served")
        end(store, task_id, "failed", error=gone, returned=True)
        return True
    params = {"name": record.tool, "arguments": record.arguments, "_meta": {"progressToken": task_id, **record.meta}}
    client = ClientState.from_dict(record.client)
    if client.log_level is None:
        client.log_level = "info"  # a task's log messages are its status messages, asked for or not
    call = Call(server, client, "tools/call", params, None, None, _principal(record))
    call.channel = TaskChannel(store, task_id)
    call.component = tool
    call.round = Answers(record.answers)
    try:
        HEARTBEATS.watch(store, task_id, tasks.heartbeat)  # run_task forgets it, however the run ends
        result = _run_traced(call, tool, record.arguments)
    except InputRequired as pending:
        _ask(store, task_id, {key: request.wire() for key, request in pending.requests.items()})
        return False
    except MCPError as exc:
        end(store, task_id, "failed", error=exc, returned=True)
        _audit(call, record, *error_outcome(exc.code))
        return True
    except Exception as exc:  # a bug: logged, and the task says so rather than staying "working"
        logger.exception("task %s of tool %r failed", task_id, record.tool)
        end(store, task_id, "failed", error=server.internal_error(exc), returned=True)
        _audit(call, record, "tool_error", "-32603")
        return True
    failed = bool(result.get("isError")) and record.era == "handshake"  # 2025-11-25: an error result fails it
    end(store, task_id, "failed" if failed else "completed", result=result, returned=True)
    _audit(call, record, *result_outcome(result, None), cancelled=call.channel.cancelled())
    return True


def _audit(call: Call, record: TaskRecord, outcome: Outcome, code: str | None, *, cancelled: bool = False) -> None:
    """The audit record of the task's call, as it ends: from its creation to now."""
    sink = call.server.audit
    if sink is None:
        return
    asked = record.meta.get(APPROVAL_META)
    approval = None
    if isinstance(asked, dict):
        approval = Approval(asked.get("outcome", "accepted"), asked.get("mode"), asked.get("approver"))
    now = time.time()
    call.state.session_id = record.owner.partition("\x00")[2] or None
    record_call(
        sink,
        kind="tool",
        name=record.tool,
        arguments=record.arguments,
        started=record.created_at,
        duration=max(0.0, now - record.created_at),
        outcome="cancelled" if cancelled else outcome,
        surface="task",
        principal=call.principal,
        state=call.state,
        tool=call.component,
        approval=approval,
        error_code=code,
    )


def _run_traced(call: Call, tool: Tool, arguments: dict[str, t.Any]) -> dict[str, t.Any]:
    """:func:`run_in_task` in the trace of the call that created the task (its ``_meta`` carries it)."""
    tracer = call.server.tracer
    if tracer is None:
        return run_in_task(call, tool, arguments)
    with tracer.message("tools/call", call.params, None, call.state) as trace:
        try:
            result = run_in_task(call, tool, arguments)
        except InputRequired:
            trace.answered(None)  # a question, not a failure: the next run goes on
            raise
        except MCPError as exc:
            trace.failed(str(exc.code), exc.message, exc.code)
            raise
        trace.answered({"result": result})
        return result


def _ask(store: TaskStore, task_id: str, requests: dict[str, t.Any]) -> None:
    def wait(record: TaskRecord) -> bool:
        if record.terminal:
            return False
        record.input_requests = requests
        record.heartbeat_at = None
        record.moved("input_required", "waiting for the client's answers")
        return True

    store.update(task_id, wait)
