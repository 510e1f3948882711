"""Tasks with the official Python client (``mcp==2.3.0``), in both eras, over real HTTP.

2026-07-28: the SDK ships no tasks extension; flask_mcp ships one, built on
the SDK's own extension API (:class:`flask_mcp.sdk.TasksExtension`): it advertises
``io.modelcontextprotocol/tasks``, claims the ``resultType: "task"`` answer
of ``tools/call`` and resolves it by polling ``tasks/get`` (with
``Mcp-Name``, as the SDK sends for tasks methods) until the task ends,
answering its questions with ``tasks/update``.

2025-11-25 (``mode="legacy"``): the SDK's session sends ``tasks/get``,
``tasks/result``, ``tasks/list`` and ``tasks/cancel`` as typed requests,
and answers the questions ``tasks/result`` brings with its own
``elicitation_callback``. Only the task-creating ``tools/call`` goes through
the session's raw request: the SDK checks every ``tools/call`` answer
against ``CallToolResult``, which a ``CreateTaskResult`` is not.
"""

from __future__ import annotations

import contextlib
import typing as t

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError as ClientError
from pydantic import TypeAdapter

from flask_mcp import MCP, Context
from flask_mcp.core.tasks import RELATED_TASK
from flask_mcp.sdk import TaskCancelledError, TasksExtension, TaskUpdate

from ...conftest import Gates

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::flask_mcp.UnprotectedToolWarning")]

ANY = TypeAdapter(dict[str, t.Any])
OK = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
TOKENS = {"ada-token": "ada", "eve-token": "eve"}


class TaskParams(types.RequestParams):
    task_id: str


class GetTask(types.Request[TaskParams, t.Literal["tasks/get"]]):
    method: t.Literal["tasks/get"] = "tasks/get"
    name_param = "taskId"


class CancelTask(types.Request[TaskParams, t.Literal["tasks/cancel"]]):
    method: t.Literal["tasks/cancel"] = "tasks/cancel"
    name_param = "taskId"


class TaskResult(types.Request[TaskParams, t.Literal["tasks/result"]]):
    method: t.Literal["tasks/result"] = "tasks/result"


class ListTasks(types.Request[types.RequestParams, t.Literal["tasks/list"]]):
    method: t.Literal["tasks/list"] = "tasks/list"


class UpdateParams(TaskParams):
    input_responses: dict[str, t.Any]


class UpdateTask(types.Request[UpdateParams, t.Literal["tasks/update"]]):
    method: t.Literal["tasks/update"] = "tasks/update"
    name_param = "taskId"


class Statuses:
    """What :class:`~flask_mcp.sdk.TasksExtension` reports of each poll, and the ids of the tasks it followed."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str | None]] = []
        self.created: list[str] = []
        self.given = anyio.Event()

    async def __call__(self, update: TaskUpdate) -> None:
        if not self.created:
            self.created.append(update.task_id)
            self.given.set()
        self.seen.append((update.status, update.message))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def url(live_server: t.Any, make_app: t.Any, gates: Gates) -> t.Iterator[str]:
    mcp = MCP(name="tasks-interop")

    @mcp.tool(task="required")
    def brew(kind: str, ctx: Context) -> str:
        ctx.report_progress(1, message=f"brewing {kind}")
        gates.started.set()
        gates.release.wait(10)
        return f"a {kind}"

    @mcp.tool(task="optional")
    def order(item: str, ctx: Context) -> str:
        answer = ctx.elicit(f"Order {item}?", OK, key="ok")
        return f"ordered {item}" if (answer.content or {}).get("ok") else "not ordered"

    @mcp.tool(task="optional")
    def watch(ctx: Context) -> str:
        gates.started.set()
        while not gates.release.wait(0.01):
            if ctx.cancelled:
                gates.saw_cancel.set()
                return "stopped"
        return "watched"

    app = make_app(mcp, MCP_TASK_POLL_INTERVAL=0.01, MCP_AUTH_TOKENS=TOKENS)
    with live_server(app) as server:
        yield server.url + "/mcp"


@contextlib.asynccontextmanager
async def connect(url: str, mode: str, token: str = "ada-token", **options: t.Any) -> t.AsyncIterator[Client]:
    """The official client, sending *token*."""
    http_client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    async with Client(streamable_http_client(url, http_client=http_client), mode=mode, **options) as client:
        yield client


async def get(client: Client, task_id: str) -> dict[str, t.Any]:
    return await client.session.send_request(GetTask(params=TaskParams(task_id=task_id)), ANY)


async def until(client: Client, task_id: str, done: t.Callable[[dict[str, t.Any]], bool]) -> dict[str, t.Any]:
    """Poll the task at its ``pollInterval`` until *done* says so (within a bounded number of polls)."""
    for _ in range(1000):
        task = await get(client, task_id)
        if done(task):
            return task
        await anyio.sleep(task.get("pollInterval", task.get("pollIntervalMs", 10)) / 1000)
    raise AssertionError(f"task {task_id} never got there: {task}")


# -- 2026-07-28 ----------------------------------------------------------------------------------


async def test_the_official_client_follows_a_task_to_its_result(url: str, gates: Gates) -> None:
    statuses = Statuses()
    tasks = TasksExtension(on_status=statuses)
    results: list[types.CallToolResult] = []
    async with connect(url, "2026-07-28", extensions=[tasks]) as client:

        async def call() -> None:
            results.append(await client.call_tool("brew", {"kind": "tea"}))

        async with anyio.create_task_group() as group:
            group.start_soon(call)
            # The tool's progress message is the task's status message while it works.
            with anyio.fail_after(10):
                while ("working", "brewing tea") not in statuses.seen:
                    await anyio.sleep(0.01)
            gates.release.set()
    assert results[0].content[0].text == "a tea"  # type: ignore[union-attr]
    assert statuses.seen[-1][0] == "completed"


async def test_the_official_client_answers_a_tasks_question(url: str) -> None:
    statuses = Statuses()
    tasks = TasksExtension(on_status=statuses)

    async def elicitation(context: t.Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"ok": True})

    async with connect(url, "2026-07-28", extensions=[tasks], elicitation_callback=elicitation) as client:
        result = await client.call_tool("order", {"item": "cake"})
    assert result.content[0].text == "ordered cake"  # type: ignore[union-attr]
    assert "input_required" in [status for status, _ in statuses.seen]


async def test_the_official_client_cancels_a_running_task_and_sees_only_its_own(url: str, gates: Gates) -> None:
    statuses = Statuses()
    async with connect(url, "2026-07-28", extensions=[TasksExtension(on_status=statuses)]) as ada:

        async def call() -> None:
            with pytest.raises(TaskCancelledError):  # cancelled by someone else than the waiting caller
                await ada.call_tool("watch", {})

        async with anyio.create_task_group() as group:
            group.start_soon(call)
            with anyio.fail_after(10):
                await statuses.given.wait()
            task_id = statuses.created[0]
            async with connect(url, "2026-07-28", token="eve-token", extensions=[TasksExtension()]) as eve:
                for request in (GetTask, CancelTask):
                    with pytest.raises(ClientError) as foreign:
                        await eve.session.send_request(request(params=TaskParams(task_id=task_id)), ANY)
                    assert foreign.value.code == -32602 and "Task not found" in str(foreign.value)
            cancelled = await ada.session.send_request(CancelTask(params=TaskParams(task_id=task_id)), ANY)
            assert cancelled["resultType"] == "complete" and set(cancelled) == {"resultType", "_meta"}
            assert await anyio.to_thread.run_sync(gates.saw_cancel.wait, 10)
        assert (await get(ada, task_id))["status"] == "cancelled"


async def test_without_the_extension_a_required_task_is_refused(url: str) -> None:
    async with connect(url, "2026-07-28") as client:
        with pytest.raises(ClientError) as refused:
            await client.call_tool("brew", {"kind": "coffee"})
    assert refused.value.code == -32021


# -- 2025-11-25 ----------------------------------------------------------------------------------


async def create(client: Client, name: str, arguments: dict[str, t.Any]) -> str:
    """Call *name* as a 2025-11-25 task; its id."""
    params = {"name": name, "arguments": arguments, "task": {"ttl": 60_000}}
    created = await client.session._dispatcher.send_raw_request("tools/call", params, {})
    assert created["task"]["status"] == "working" and created["task"]["ttl"] == 60_000
    return t.cast(str, created["task"]["taskId"])


async def test_a_legacy_task_is_polled_and_its_result_fetched(url: str, gates: Gates) -> None:
    async with connect(url, "legacy") as client:
        assert client.server_capabilities.model_dump(exclude_none=True)["tasks"]["requests"] == {"tools": {"call": {}}}
        task_id = await create(client, "brew", {"kind": "tea"})
        # The tool's progress message is the task's status message while it works.
        working = await until(client, task_id, lambda task: task.get("statusMessage") == "brewing tea")
        assert working["status"] == "working"
        gates.release.set()
        result = await client.session.send_request(TaskResult(params=TaskParams(task_id=task_id)), ANY)
        assert result["content"] == [{"type": "text", "text": "a tea"}]
        assert result["_meta"][RELATED_TASK] == {"taskId": task_id}
        assert (await get(client, task_id))["status"] == "completed"


async def test_a_legacy_tasks_question_comes_on_its_result_stream(url: str) -> None:
    asked: list[dict[str, t.Any]] = []

    async def elicitation(context: t.Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.model_dump(by_alias=True, exclude_none=True))
        return types.ElicitResult(action="accept", content={"ok": True})

    async with connect(url, "legacy", elicitation_callback=elicitation) as client:
        task_id = await create(client, "order", {"item": "cake"})
        await until(client, task_id, lambda task: task["status"] == "input_required")
        result = await client.session.send_request(TaskResult(params=TaskParams(task_id=task_id)), ANY)
    assert result["content"] == [{"type": "text", "text": "ordered cake"}]
    assert [question["message"] for question in asked] == ["Order cake?"]
    assert asked[0]["_meta"][RELATED_TASK] == {"taskId": task_id}


async def test_a_legacy_task_is_cancelled_listed_and_its_callers_alone(url: str, gates: Gates) -> None:
    async with connect(url, "legacy") as ada, connect(url, "legacy", token="eve-token") as eve:
        task_id = await create(ada, "watch", {})
        await anyio.to_thread.run_sync(gates.started.wait, 10)
        mine = await ada.session.send_request(ListTasks(params=types.RequestParams()), ANY)
        assert [task["taskId"] for task in mine["tasks"]] == [task_id]
        assert (await eve.session.send_request(ListTasks(params=types.RequestParams()), ANY))["tasks"] == []
        for request in (GetTask, CancelTask, TaskResult):
            with pytest.raises(ClientError) as foreign:
                await eve.session.send_request(request(params=TaskParams(task_id=task_id)), ANY)
            assert foreign.value.code == -32602 and "Task not found" in str(foreign.value)
        cancelled = await ada.session.send_request(CancelTask(params=TaskParams(task_id=task_id)), ANY)
        assert cancelled["status"] == "cancelled"
        assert await anyio.to_thread.run_sync(gates.saw_cancel.wait, 10)
        with pytest.raises(ClientError) as again:  # an ended task cannot be cancelled
            await ada.session.send_request(CancelTask(params=TaskParams(task_id=task_id)), ANY)
        assert again.value.code == -32602


async def test_a_legacy_question_refused_with_an_error_fails_the_task(url: str) -> None:
    async def elicitation(context: t.Any, params: types.ElicitRequestParams) -> types.ErrorData:
        return types.ErrorData(code=-32600, message="no user here to ask")

    async with connect(url, "legacy", elicitation_callback=elicitation) as client:
        task_id = await create(client, "order", {"item": "cake"})
        await until(client, task_id, lambda task: task["status"] == "input_required")
        with pytest.raises(ClientError) as refused:
            await client.session.send_request(TaskResult(params=TaskParams(task_id=task_id)), ANY)
        assert refused.value.code == -32600 and refused.value.message == "no user here to ask"
        failed = await get(client, task_id)
    assert failed["status"] == "failed" and failed["statusMessage"] == "no user here to ask"
