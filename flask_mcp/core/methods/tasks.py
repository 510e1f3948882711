"""``tasks/*``: reading, answering and cancelling tasks (:mod:`flask_mcp.core.tasks`), in both eras.

The modern era (the 2026-07-28 extension) has ``tasks/get`` (the task with
its result, error or questions), ``tasks/update`` (answers) and
``tasks/cancel`` (an acknowledgement), each only for a request that
declares the extension. The handshake era (2025-11-25) has ``tasks/get``,
``tasks/result`` (waits for the end, sending the client the task's
questions meanwhile, then answers as the call would have),
``tasks/list`` (the caller's own, paged) and ``tasks/cancel`` (the task).
"""

from __future__ import annotations

import time
import typing as t

from ...protocol.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, MCPError
from ..context import NoAnswer, requests_unavailable
from ..task_start import declared_extension, missing_extension, session_of
from ..tasks import OWNERLESS, RELATED_TASK, account_of, answer, cancel, end, owner_of
from .listing import paged

if t.TYPE_CHECKING:
    from ..client import Call
    from ..tasks import TaskRecord, Tasks

__all__ = [
    "cancel_task",
    "get_task",
    "list_tasks",
    "modern_cancel_task",
    "modern_get_task",
    "task_result",
    "update_task",
]

#: Seconds between two reads of a task ``tasks/result`` waits for.
RESULT_POLL = 0.05


def _tasks(call: Call) -> Tasks:
    tasks = call.server.tasks
    if tasks is None:
        raise MCPError(METHOD_NOT_FOUND, f"Method not found: {call.method} (this server runs no tasks)")
    return tasks


def _record(call: Call) -> TaskRecord:
    return _tasks(call).owned_record(call.params.get("taskId"), call.principal, session_of(call))


# -- the 2026-07-28 extension ------------------------------------------------------------------


def _declared(call: Call) -> None:
    # Before the task is looked up: a client that did not declare the extension learns nothing of it.
    if not declared_extension(call):
        raise missing_extension()


def modern_get_task(call: Call) -> dict[str, t.Any]:
    """The task with its ``result``, ``error`` or outstanding ``inputRequests``."""
    _declared(call)
    return _record(call).modern_detailed()


def update_task(call: Call) -> dict[str, t.Any]:
    """Keep the answers to the task's questions; it runs on once none is outstanding."""
    _declared(call)
    record = _record(call)
    responses = call.params.get("inputResponses")
    if not isinstance(responses, dict):
        raise MCPError(INVALID_PARAMS, "Invalid params: 'inputResponses' must be an object")
    tasks = _tasks(call)
    ready = answer(tasks.store, record.task_id, responses)
    if ready is not None:
        tasks.submit(ready)
    return {}


def modern_cancel_task(call: Call) -> dict[str, t.Any]:
    """Ask the task to stop; an acknowledgement, whatever its status."""
    _declared(call)
    record = _record(call)
    cancel(_tasks(call).store, record.task_id)
    return {}


# -- 2025-11-25 ----------------------------------------------------------------------------------


def get_task(call: Call) -> dict[str, t.Any]:
    """The task."""
    return _record(call).handshake_task()


def task_result(call: Call) -> dict[str, t.Any]:
    """What the call would have answered, once the task has ended (waiting for it, within bounds).

    While the task waits for input, its questions go to the client as
    requests on this request's stream, as 2025-11-25 asks; the answers let
    it run on. Each change of its status meanwhile is sent on the same
    stream as ``notifications/tasks/status``.
    """
    record = _record(call)
    tasks = _tasks(call)
    deadline = time.monotonic() + call.server.client_request_timeout
    while not record.terminal:
        if record.status == "input_required" and record.input_requests:
            _put_questions(call, tasks, record)
            deadline = time.monotonic() + call.server.client_request_timeout  # the user's time is not the task's
        elif time.monotonic() >= deadline:
            raise MCPError(INTERNAL_ERROR, f"Task {record.task_id} has not ended yet; poll tasks/get")
        else:
            time.sleep(RESULT_POLL)
        found = tasks.store.load(record.task_id)
        if found is None:
            raise MCPError(INVALID_PARAMS, f"Failed to retrieve task: Task not found: {record.task_id}")
        if found.status != record.status and call.channel is not None:
            # The stream the client waits on tells it each change (the revision's optional status notification).
            call.channel.notify("notifications/tasks/status", found.handshake_task())
        record = found
    related = {RELATED_TASK: {"taskId": record.task_id}}
    if record.result is not None:
        return {**record.result, "_meta": {**(record.result.get("_meta") or {}), **related}}
    if record.status == "cancelled":
        raise MCPError(INTERNAL_ERROR, f"Task {record.task_id} was cancelled", related)
    error = record.error or {}
    raise MCPError(
        int(error.get("code", INTERNAL_ERROR)), str(error.get("message", "Internal error")), error.get("data")
    )


def _put_questions(call: Call, tasks: Tasks, record: TaskRecord) -> None:
    """Send the task's questions to the client, keep its answers, and let the task run on once all are in.

    A question the client answers with an error fails the task with that
    error; one it does not answer (in time, or at all) leaves the task
    waiting, and this request ends with that error.
    """
    channel = call.channel
    reason = requests_unavailable(channel)
    if channel is None or reason is not None:
        raise MCPError(INTERNAL_ERROR, f"Task {record.task_id} is waiting for input, which needs {reason}")
    related = {RELATED_TASK: {"taskId": record.task_id}}
    answers: dict[str, t.Any] = {}
    for key, question in record.input_requests.items():
        params = dict(question["params"])
        params["_meta"] = {**(params.get("_meta") or {}), **related}
        try:
            answers[key] = channel.request(question["method"], params, call.server.client_request_timeout)
        except NoAnswer:
            raise  # the task keeps waiting: a later tasks/result asks again
        except MCPError as refused:
            end(tasks.store, record.task_id, "failed", error=refused)
            return
    ready = answer(tasks.store, record.task_id, answers)
    if ready is not None:
        tasks.submit(ready)


def list_tasks(call: Call) -> dict[str, t.Any]:
    """The caller's tasks, oldest first, a page at a time; none for a caller without an owner.

    A caller neither authenticated nor in a session shares nothing with the
    next one that could tell their tasks apart: its tasks are read by their
    ids alone, and none is listed.
    """
    tasks = _tasks(call)
    owner = owner_of(call.principal, call.state.session_id)
    records = []
    if owner != OWNERLESS:
        records = tasks.store.owned(account_of(call.principal, call.state.session_id, None), owner)
    now = time.time()
    listing = [record.handshake_task() for record in records if not record.expired(now, tasks.lost_after)]
    return paged(call, "tasks", listing, tasks.page_size)


def cancel_task(call: Call) -> dict[str, t.Any]:
    """Cancel the task: the task, now ``cancelled``; -32602 when it has already ended."""
    record = _record(call)
    if record.terminal:
        raise MCPError(INVALID_PARAMS, f"Cannot cancel task {record.task_id}: it is already {record.status}")
    updated = cancel(_tasks(call).store, record.task_id) or record
    return updated.handshake_task()
