"""Tasks with the official Python client (``mcp==2.3.0``): its extension mechanism claims the task result.

The SDK ships no tasks extension, so the test writes the small one a host
would: it advertises ``io.modelcontextprotocol/tasks``, claims the
``resultType: "task"`` answer of ``tools/call`` and resolves it by polling
``tasks/get`` (with ``Mcp-Name``, as the SDK sends for tasks methods) until
the task ends, answering its questions with ``tasks/update``.
"""

from __future__ import annotations

import threading
import typing as t

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.shared.exceptions import MCPError as ClientError
from pydantic import TypeAdapter

from flask_mcp import MCP, Context
from flask_mcp.core.tasks import EXTENSION

pytestmark = pytest.mark.anyio


class CreatedTask(types.Result):
    """The extension's answer to ``tools/call``: a task."""

    result_type: t.Literal["task"] = "task"
    task_id: str
    status: str


class TaskParams(types.RequestParams):
    task_id: str


class GetTask(types.Request[TaskParams, t.Literal["tasks/get"]]):
    method: t.Literal["tasks/get"] = "tasks/get"
    name_param = "taskId"


class UpdateParams(TaskParams):
    input_responses: dict[str, t.Any]


class UpdateTask(types.Request[UpdateParams, t.Literal["tasks/update"]]):
    method: t.Literal["tasks/update"] = "tasks/update"
    name_param = "taskId"


class Tasks(ClientExtension):
    """Polls a task until it ends; answers elicitation requests with *answer*."""

    identifier = EXTENSION

    def __init__(self, answer: t.Callable[[dict[str, t.Any]], dict[str, t.Any]] | None = None) -> None:
        self.answer = answer
        self.seen: list[str] = []

    def claims(self) -> t.Sequence[ResultClaim[t.Any]]:
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=self.resolve)]

    async def resolve(self, created: CreatedTask, context: ClaimContext) -> types.CallToolResult:
        adapter = TypeAdapter(dict[str, t.Any])
        while True:
            task = await context.session.send_request(GetTask(params=TaskParams(task_id=created.task_id)), adapter)
            self.seen.append(task["status"])
            if task["status"] == "completed":
                return types.CallToolResult.model_validate(task["result"])
            if task["status"] in ("failed", "cancelled"):
                raise RuntimeError(f"task {task['status']}: {task.get('error') or task.get('statusMessage')}")
            if task["status"] == "input_required" and self.answer is not None:
                answers = {key: self.answer(request) for key, request in task["inputRequests"].items()}
                params = UpdateParams(task_id=created.task_id, input_responses=answers)
                await context.session.send_request(UpdateTask(params=params), adapter)
            await anyio.sleep(task.get("pollIntervalMs", 10) / 1000)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def url(live_server: t.Any, make_app: t.Any) -> t.Iterator[str]:
    mcp = MCP(name="tasks-interop")
    done = threading.Event()

    @mcp.tool(task="required")
    def brew(kind: str, ctx: Context) -> str:
        ctx.report_progress(1, message=f"brewing {kind}")
        done.set()
        return f"a {kind}"

    @mcp.tool(task="optional")
    def order(item: str, ctx: Context) -> str:
        answer = ctx.elicit(f"Order {item}?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}, key="ok")
        return f"ordered {item}" if (answer.content or {}).get("ok") else "not ordered"

    app = make_app(mcp, MCP_TASK_POLL_INTERVAL=0.01)
    with live_server(app) as server:
        yield server.url + "/mcp"


async def test_the_official_client_follows_a_task_to_its_result(url: str) -> None:
    tasks = Tasks()
    async with Client(url, mode="2026-07-28", extensions=[tasks]) as client:
        result = await client.call_tool("brew", {"kind": "tea"})
    assert result.content[0].text == "a tea"  # type: ignore[union-attr]
    assert tasks.seen[-1] == "completed"


async def test_the_official_client_answers_a_tasks_question(url: str) -> None:
    tasks = Tasks(answer=lambda request: {"action": "accept", "content": {"ok": True}})

    async def elicitation(context: t.Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"ok": True})

    async with Client(url, mode="2026-07-28", extensions=[tasks], elicitation_callback=elicitation) as client:
        result = await client.call_tool("order", {"item": "cake"})
    assert result.content[0].text == "ordered cake"  # type: ignore[union-attr]
    assert "input_required" in tasks.seen


async def test_without_the_extension_a_required_task_is_refused(url: str) -> None:
    async with Client(url, mode="2026-07-28") as client:
        with pytest.raises(ClientError) as refused:
            await client.call_tool("brew", {"kind": "coffee"})
    assert refused.value.code == -32021
