"""The tasks messages the official SDK has no types for, in its own type system.

The SDK (``mcp_types``) types the 2025-11-25 tasks (``CreateTaskResult``,
``GetTaskRequest``, ``CancelTaskRequest``, ``GetTaskPayloadRequest``) but not
the 2026-07-28 ``io.modelcontextprotocol/tasks`` extension: its task answer
to ``tools/call`` (``resultType: "task"``), ``tasks/get`` with the task's
``result``, ``error`` or ``inputRequests``, ``tasks/update`` and
``tasks/cancel``. They are declared here as the SDK declares its own, so
``ClientSession.send_request`` sends them (with ``Mcp-Name``, which the
extension's methods carry) and validates what comes back.
"""

from __future__ import annotations

import typing as t

import mcp_types as types

__all__ = [
    "CancelTask",
    "CreatedTask",
    "DetailedTask",
    "GetTask",
    "TaskParams",
    "UpdateParams",
    "UpdateTask",
]


class CreatedTask(types.Result):
    """A 2026-07-28 ``tools/call`` answered with a task (``resultType: "task"``)."""

    result_type: t.Literal["task"] = "task"
    task_id: str
    status: str
    status_message: str | None = None
    poll_interval_ms: int | None = None
    ttl_ms: int | None = None


class DetailedTask(types.Result):
    """A 2026-07-28 ``tasks/get`` answer: the task, with its ``result``, ``error`` or ``inputRequests``."""

    task_id: str
    status: str
    status_message: str | None = None
    poll_interval_ms: int | None = None
    result: dict[str, t.Any] | None = None
    error: types.ErrorData | None = None
    input_requests: types.InputRequests | None = None


class TaskParams(types.RequestParams):
    """Params naming one task."""

    task_id: str


class UpdateParams(TaskParams):
    """``tasks/update`` params: answers to the task's questions, by key."""

    input_responses: types.InputResponses


class GetTask(types.Request[TaskParams, t.Literal["tasks/get"]]):
    """2026-07-28 ``tasks/get``."""

    method: t.Literal["tasks/get"] = "tasks/get"
    params: TaskParams
    #: The params key the ``Mcp-Name`` header carries.
    name_param: t.ClassVar[str | None] = "taskId"


class UpdateTask(types.Request[UpdateParams, t.Literal["tasks/update"]]):
    """2026-07-28 ``tasks/update``."""

    method: t.Literal["tasks/update"] = "tasks/update"
    params: UpdateParams
    #: The params key the ``Mcp-Name`` header carries.
    name_param: t.ClassVar[str | None] = "taskId"


class CancelTask(types.Request[TaskParams, t.Literal["tasks/cancel"]]):
    """2026-07-28 ``tasks/cancel``."""

    method: t.Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskParams
    #: The params key the ``Mcp-Name`` header carries.
    name_param: t.ClassVar[str | None] = "taskId"
