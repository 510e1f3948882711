"""The official SDK following tasks: a client extension, built on the SDK's own ``ClientExtension``.

The SDK (``mcp==2.3.0``) neither declares the 2026-07-28 tasks extension
nor asks for a 2025-11-25 task, so a tool a server runs only as a task
(``task="required"``) is out of its reach. :class:`TasksExtension` fills that in::

    from mcp import Client
    from flask_mcp.sdk import TasksExtension

    tasks = TasksExtension()
    async with Client(url, extensions=[tasks]) as client:
        result = await client.call_tool("build_report", {"year": 2026})  # 2026-07-28
        result = await tasks.call_tool(client, "build_report", {"year": 2026})  # either era

In the 2026-07-28 revision it declares ``io.modelcontextprotocol/tasks`` and
claims the task answer of ``tools/call`` (``resultType: "task"``), so the
SDK's own ``call_tool`` hands it the task; it polls ``tasks/get`` at the
task's ``pollIntervalMs``, answers the task's questions with the client's
own elicitation, sampling and roots callbacks (``tasks/update``), and
returns the task's ``CallToolResult``. The SDK activates a claim on modern
revisions only; on a handshake-era connection :meth:`TasksExtension.call_tool` asks
for a task when the tool's ``execution.taskSupport`` allows one, polls
``tasks/get`` at its ``pollInterval`` and fetches the end with
``tasks/result``, whose questions the SDK's session answers with the same
callbacks. Either way, a caller that stops waiting (its cancel scope, a
timeout) cancels the task.
"""

from __future__ import annotations

import dataclasses
import logging
import typing as t
import weakref

import anyio
import mcp_types as types
from mcp.client import ClientRequestContext, ClientSession, InputRequiredRoundsExceededError
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ..core.tasks import EXTENSION
from .task_messages import CancelTask, CreatedTask, DetailedTask, GetTask, TaskParams, UpdateParams, UpdateTask

if t.TYPE_CHECKING:
    from mcp import Client
    from mcp.shared.dispatcher import CallOptions

__all__ = ["StatusCallback", "TaskCancelledError", "TaskUpdate", "TasksExtension"]

logger = logging.getLogger("flask_mcp.sdk")

#: The statuses a task does not leave.
TERMINAL = frozenset({"completed", "failed", "cancelled"})
#: Pages of ``tools/list`` read to find a tool's ``execution.taskSupport``; a listing that never ends stops there.
LISTING_PAGES = 100


class TaskCancelledError(MCPError):
    """The task ended ``cancelled`` before it had a result (cancelled by another client, or by the server).

    :param task_id: the task's id.
    :param message: the task's status message, when it has one.
    """

    def __init__(self, task_id: str, message: str | None = None) -> None:
        super().__init__(types.INTERNAL_ERROR, f"Task {task_id} was cancelled" + (f": {message}" if message else ""))
        #: The task's id.
        self.task_id = task_id


@dataclasses.dataclass(frozen=True)
class TaskUpdate:
    """What a poll of a task said, when it differs from the poll before."""

    #: The task's id.
    task_id: str
    #: ``working``, ``input_required``, ``completed``, ``failed`` or ``cancelled``.
    status: str
    #: The task's status message (a flask_mcp tool's progress message, or its last log line).
    message: str | None


#: What :class:`TasksExtension` calls with each :class:`TaskUpdate`.
StatusCallback = t.Callable[[TaskUpdate], t.Awaitable[None]]


class TasksExtension(ClientExtension):
    """The ``io.modelcontextprotocol/tasks`` extension of an SDK ``Client``: it follows a task to its result.

    Pass it to ``Client(extensions=[...])``; on a 2026-07-28 connection the
    client's own ``call_tool`` then returns a task's result, and
    :meth:`call_tool` does it in either era.

    :param on_status: awaited with each change of a followed task's status or status message.
    :param ttl_ms: how long a 2025-11-25 task should be kept (the server may keep it less);
        ``None``: the server's default.
    :param default_poll_interval: seconds between two polls when the server gives no interval.
    :param min_poll_interval: the fewest seconds between two polls, whatever the server says.
    :param max_poll_interval: the most seconds between two polls, whatever the server says.
    :param max_rounds: rounds of questions one task may ask before it is cancelled
        (:exc:`mcp.client.InputRequiredRoundsExceededError`), as the SDK bounds input rounds.
    :param cancel_grace: seconds given to ``tasks/cancel`` when the caller stops waiting.
    """

    identifier = EXTENSION

    def __init__(
        self,
        *,
        on_status: StatusCallback | None = None,
        ttl_ms: int | None = None,
        default_poll_interval: float = 1.0,
        min_poll_interval: float = 0.01,
        max_poll_interval: float = 30.0,
        max_rounds: int = 10,
        cancel_grace: float = 5.0,
    ) -> None:
        self.on_status = on_status
        self.ttl_ms = ttl_ms
        self.default_poll_interval = default_poll_interval
        self.min_poll_interval = min_poll_interval
        self.max_poll_interval = max_poll_interval
        self.max_rounds = max_rounds
        self.cancel_grace = cancel_grace
        # Each handshake-era connection's tools and their taskSupport, read once (a session may
        # outlive nothing here: the key is weak).
        self._task_support: weakref.WeakKeyDictionary[ClientSession, dict[str, str]] = weakref.WeakKeyDictionary()

    def claims(self) -> t.Sequence[ResultClaim[t.Any]]:
        """The task answer of ``tools/call``, which :meth:`follow` turns into the call's result."""
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=self.follow)]

    async def call_tool(
        self,
        client: Client,
        name: str,
        arguments: dict[str, t.Any] | None = None,
        *,
        read_timeout_seconds: float | None = None,
    ) -> types.CallToolResult:
        """Call the tool *name*, following a task to its result when the server runs it as one, in either era.

        :param client: an entered ``mcp.Client`` given this extension (``extensions=[tasks]``).
        :param read_timeout_seconds: the longest wait for one request's answer (not for the task).
        :raises mcp.shared.exceptions.MCPError: the call was refused, or the task failed with this error.
        :raises TaskCancelledError: the task was cancelled by someone else.
        """
        if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
            if not any(extension is self for extension in client.extensions or ()):
                raise ValueError("this TasksExtension is not the client's: pass it to Client(extensions=[...])")
            return await client.call_tool(name, arguments, read_timeout_seconds=read_timeout_seconds)
        if await self._handshake_task_support(client, name) not in ("optional", "required"):
            return await client.call_tool(name, arguments, read_timeout_seconds=read_timeout_seconds)
        return await self._follow_handshake(client.session, name, arguments, read_timeout_seconds)

    # -- 2026-07-28 ------------------------------------------------------------------------------

    async def follow(self, created: CreatedTask, context: ClaimContext) -> types.CallToolResult:
        """Poll a 2026-07-28 task until it ends, answering its questions; its ``CallToolResult``.

        The SDK calls it with the task ``tools/call`` answered with.
        """
        session, timeout, task_id = context.session, context.read_timeout_seconds, created.task_id
        interval = self._interval(created.poll_interval_ms)
        last = await self._report(None, TaskUpdate(task_id, created.status, created.status_message))
        answered: set[str] = set()
        rounds = 0
        ended = False
        try:
            while True:
                await anyio.sleep(interval)
                task = await session.send_request(
                    GetTask(params=TaskParams(task_id=task_id)), DetailedTask, request_read_timeout_seconds=timeout
                )
                interval = self._interval(task.poll_interval_ms)
                last = await self._report(last, TaskUpdate(task_id, task.status, task.status_message))
                if task.status in TERMINAL:
                    ended = True
                    return _ended_modern(task)
                # Keys already answered are not asked again: the server may not have moved on yet.
                pending = {key: asked for key, asked in (task.input_requests or {}).items() if key not in answered}
                if task.status != "input_required" or not pending:
                    continue
                rounds += 1
                if rounds > self.max_rounds:
                    raise InputRequiredRoundsExceededError(self.max_rounds)
                responses = await _answer(session, pending)
                answered.update(pending)
                update = UpdateTask(params=UpdateParams(task_id=task_id, input_responses=responses))
                await session.send_request(update, types.Result, request_read_timeout_seconds=timeout)
        except BaseException:
            if not ended:
                await self._cancel(session, CancelTask(params=TaskParams(task_id=task_id)))
            raise

    # -- 2025-11-25 ------------------------------------------------------------------------------

    async def _handshake_task_support(self, client: Client, name: str) -> str | None:
        """The tool's ``execution.taskSupport`` (``None`` for a tool not listed), the listing read once."""
        known = self._task_support.get(client.session)
        if known is None or name not in known:
            known = {}
            cursor: str | None = None
            for _ in range(LISTING_PAGES):
                page = await client.list_tools(cursor=cursor)
                for tool in page.tools:
                    execution = tool.execution
                    known[tool.name] = (execution.task_support if execution else None) or "forbidden"
                cursor = page.next_cursor
                if cursor is None:
                    break
            self._task_support[client.session] = known
        return known.get(name)

    async def _follow_handshake(
        self, session: ClientSession, name: str, arguments: dict[str, t.Any] | None, timeout: float | None
    ) -> types.CallToolResult:
        """Ask for a 2025-11-25 task, poll it, and fetch its end with ``tasks/result``."""
        raw = await self._created(
            lambda: _create_handshake_task(session, name, arguments, self.ttl_ms, timeout),
            lambda raw: (
                self._cancel(session, _handshake_cancel(raw["task"]["taskId"])) if "task" in raw else _nothing()
            ),
        )
        if "task" not in raw:  # the server ran the call in its request after all
            return types.CallToolResult.model_validate(raw, by_name=False)
        created = types.CreateTaskResult.model_validate(raw, by_name=False).task
        task_id = created.task_id
        interval = self._interval(created.poll_interval)
        last = await self._report(None, TaskUpdate(task_id, created.status, created.status_message))
        get = types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id))
        ended = False
        try:
            while True:
                await anyio.sleep(interval)
                task = await session.send_request(get, types.GetTaskResult, request_read_timeout_seconds=timeout)
                interval = self._interval(task.poll_interval)
                last = await self._report(last, TaskUpdate(task_id, task.status, task.status_message))
                if task.status == "working":
                    continue
                # Ended, or waiting for input: tasks/result brings the questions (the session's callbacks
                # answer them), then the end.
                fetch = types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=task_id))
                try:
                    result = await session.send_request(
                        fetch, types.CallToolResult, request_read_timeout_seconds=timeout
                    )
                except MCPError as error:
                    after = task if task.status in TERMINAL else await session.send_request(get, types.GetTaskResult)
                    if after.status == "cancelled":
                        ended = True
                        raise TaskCancelledError(task_id, after.status_message) from error
                    if after.status in TERMINAL:
                        ended = True
                        raise
                    continue  # the wait ended before the task did (the server's bound): poll on
                ended = True
                return result
        except BaseException:
            if not ended:
                await self._cancel(session, _handshake_cancel(task_id))
            raise

    # -- shared ----------------------------------------------------------------------------------

    async def _created(
        self,
        create: t.Callable[[], t.Awaitable[dict[str, t.Any]]],
        cancel: t.Callable[[dict[str, t.Any]], t.Awaitable[None]],
    ) -> dict[str, t.Any]:
        """*create*'s answer, the request that makes a task.

        A caller that stops waiting meanwhile still waits for the answer
        (``cancel_grace`` seconds at most) and cancels the task it made, which
        would otherwise run on with nobody to know its id.
        """
        shield = anyio.CancelScope(shield=True)
        answers: list[dict[str, t.Any]] = []
        failures: list[Exception] = []
        done = anyio.Event()
        abandoned = False

        async def run() -> None:
            try:
                with shield:
                    answers.append(await create())
                    if abandoned:
                        await cancel(answers[0])
            except Exception as failure:  # raised to the caller as it is, not in the group's ExceptionGroup
                failures.append(failure)
            finally:
                done.set()

        async with anyio.create_task_group() as group:
            group.start_soon(run)
            try:
                await done.wait()
            except anyio.get_cancelled_exc_class():
                abandoned = True
                shield.deadline = anyio.current_time() + self.cancel_grace
                if answers:  # answered just before the cancellation, so run() cancelled nothing
                    await cancel(answers[0])
                raise
        if failures:
            raise failures[0]
        return answers[0]

    def _interval(self, milliseconds: int | None) -> float:
        """Seconds until the next poll: the server's interval, within this extension's bounds."""
        seconds = self.default_poll_interval if milliseconds is None else milliseconds / 1000
        return min(max(seconds, self.min_poll_interval), self.max_poll_interval)

    async def _report(self, last: TaskUpdate | None, update: TaskUpdate) -> TaskUpdate:
        if self.on_status is not None and update != last:
            await self.on_status(update)
        return update

    async def _cancel(self, session: ClientSession, request: types.Request[t.Any, t.Any]) -> None:
        """Cancel the task the caller stopped waiting for, within ``cancel_grace``, whatever else happens now."""
        with anyio.move_on_after(self.cancel_grace, shield=True):
            try:
                await session.send_request(request, types.Result)
            except Exception:  # the connection may be closing: the task then ends by its ttl
                logger.debug("could not cancel a task the caller stopped waiting for", exc_info=True)


def _handshake_cancel(task_id: str) -> types.CancelTaskRequest:
    return types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=task_id))


async def _nothing() -> None:
    return None


def _ended_modern(task: DetailedTask) -> types.CallToolResult:
    """The result of a 2026-07-28 task that has ended, or the exception it ended with."""
    if task.status == "completed":
        if task.result is None:
            raise MCPError(types.INTERNAL_ERROR, f"Task {task.task_id} completed without a result")
        return types.CallToolResult.model_validate(task.result, by_name=False)
    if task.status == "cancelled":
        raise TaskCancelledError(task.task_id, task.status_message)
    raise MCPError.from_error_data(task.error or types.ErrorData(code=types.INTERNAL_ERROR, message="Internal error"))


async def _answer(session: ClientSession, asked: types.InputRequests) -> types.InputResponses:
    """The client's answers to a task's questions, from its own callbacks.

    :raises MCPError: a callback declined (``ErrorData``); the task is then cancelled.
    """
    responses: types.InputResponses = {}
    for key, request in asked.items():
        meta = request.params.meta if request.params else None
        context = ClientRequestContext(session=session, request_id=key, meta=meta)
        response = await session.dispatch_input_request(context, request)
        if isinstance(response, types.ErrorData):
            raise MCPError.from_error_data(response)
        responses[key] = response
    return responses


async def _create_handshake_task(
    session: ClientSession, name: str, arguments: dict[str, t.Any] | None, ttl_ms: int | None, timeout: float | None
) -> dict[str, t.Any]:
    """Send a 2025-11-25 ``tools/call`` asking for a task; the raw answer.

    The session's typed ``send_request`` checks every ``tools/call`` answer
    against ``CallToolResult``, which a ``CreateTaskResult`` is not, and the
    SDK activates result claims on modern revisions only: the request goes
    through the session's dispatcher, with the header the session's own
    handshake-era requests carry.
    """
    params = types.CallToolRequestParams(name=name, arguments=arguments, task=types.TaskMetadata(ttl=ttl_ms))
    options: CallOptions = {"headers": {MCP_PROTOCOL_VERSION_HEADER: session.protocol_version or ""}}
    if timeout is not None:
        options["timeout"] = timeout
    wire = params.model_dump(by_alias=True, mode="json", exclude_none=True)
    return await session._dispatcher.send_raw_request("tools/call", wire, options)
