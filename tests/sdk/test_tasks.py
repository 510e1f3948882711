"""``flask_mcp.sdk.TasksExtension``: the official SDK's client follows a task to its result, in both eras.

The tasks run on the embedded executor; the client reaches the app in this
process (``flask_mcp.sdk.connect``), and once over real HTTP.
"""

from __future__ import annotations

import itertools
import typing as t

import anyio
import mcp_types as types
import pytest
from flask import Flask
from mcp import Client
from mcp.client import ClientRequestContext, InputRequiredRoundsExceededError
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter

from flask_mcp import MCP, Context, ToolError
from flask_mcp import MCPError as ServerError
from flask_mcp.sdk import TaskCancelledError, TasksExtension, TaskUpdate, connect
from flask_mcp.sdk.task_messages import CancelTask, GetTask, TaskParams

from ..conftest import Gates
from .conftest import ERAS, OK

pytestmark = pytest.mark.anyio
ANY = TypeAdapter(dict[str, t.Any])


def kitchen(gates: Gates) -> MCP:
    mcp = MCP(name="kitchen", version="1.0")

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

    @mcp.tool(task="required")
    def watch(ctx: Context) -> str:
        gates.started.set()
        while not gates.release.wait(0.01):
            if ctx.cancelled:
                gates.saw_cancel.set()
                return "stopped"
        return "watched"

    @mcp.tool(task="required")
    def burn() -> str:
        raise ServerError(-32010, "out of beans", {"beans": 0})

    @mcp.tool(task="required")
    def spill() -> str:
        raise ToolError("the cup fell")

    @mcp.tool(task="required")
    def quiz(ctx: Context) -> str:
        """Asks question after question, never done."""
        for number in itertools.count():
            ctx.elicit(f"Question {number}?", OK, key=f"q{number}")
        return "never"

    @mcp.tool
    def plain(ctx: Context) -> str:
        return "in its request"

    return mcp


@pytest.fixture
def app(make_app: t.Callable[..., Flask], gates: Gates) -> Flask:
    return make_app(kitchen(gates), MCP_TASK_POLL_INTERVAL=0.01)


class Statuses:
    """Every update a :class:`TasksExtension` reports, and an event per (status, message) seen."""

    def __init__(self) -> None:
        self.updates: list[TaskUpdate] = []
        self.events: dict[tuple[str, str | None], anyio.Event] = {}

    async def __call__(self, update: TaskUpdate) -> None:
        self.updates.append(update)
        self.event(update.status, update.message).set()

    def event(self, status: str, message: str | None = None) -> anyio.Event:
        return self.events.setdefault((status, message), anyio.Event())

    async def wait(self, status: str, message: str | None = None) -> None:
        with anyio.fail_after(10):
            await self.event(status, message).wait()

    @property
    def task_id(self) -> str:
        return self.updates[0].task_id


async def accept(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"ok": True})


async def status_of(client: Client, task_id: str) -> str:
    if client.protocol_version == "2025-11-25":
        request = types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id))
        return (await client.session.send_request(request, types.GetTaskResult)).status
    return t.cast(str, (await client.session.send_request(GetTask(params=TaskParams(task_id=task_id)), ANY))["status"])


@pytest.mark.parametrize("mode", ERAS)
async def test_a_required_task_is_followed_to_its_result_at_the_servers_pace(
    app: Flask, mode: str, gates: Gates
) -> None:
    """The tool's progress message shows while it works; the server's poll interval, not the default, paces it."""
    statuses = Statuses()
    tasks = TasksExtension(on_status=statuses, default_poll_interval=3600)
    results: list[types.CallToolResult] = []
    async with connect(app, mode=mode, extensions=[tasks]) as client:

        async def call() -> None:
            results.append(await tasks.call_tool(client, "brew", {"kind": "tea"}))

        async with anyio.create_task_group() as group:
            group.start_soon(call)
            await statuses.wait("working", "brewing tea")
            gates.release.set()
            with anyio.fail_after(10):  # at the default interval the next poll would be an hour away
                await statuses.event("completed").wait()
    assert results[0].content[0].text == "a tea"  # type: ignore[union-attr]
    assert statuses.updates[-1] == TaskUpdate(statuses.task_id, "completed", None)


async def test_the_sdks_own_call_tool_follows_a_task_in_the_2026_revision(app: Flask, gates: Gates) -> None:
    gates.release.set()
    async with connect(app, mode="2026-07-28", extensions=[TasksExtension()]) as client:
        result = await client.call_tool("brew", {"kind": "coffee"})
    assert result.content[0].text == "a coffee"  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", ERAS)
async def test_a_tasks_question_is_answered_by_the_clients_own_callback(app: Flask, mode: str) -> None:
    asked: list[str] = []

    async def elicitation(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"ok": True})

    statuses = Statuses()
    tasks = TasksExtension(on_status=statuses)
    async with connect(app, mode=mode, extensions=[tasks], elicitation_callback=elicitation) as client:
        result = await tasks.call_tool(client, "order", {"item": "cake"})
    assert result.content[0].text == "ordered cake"  # type: ignore[union-attr]
    assert asked == ["Order cake?"]
    assert "input_required" in [update.status for update in statuses.updates]  # it was a task, in both eras


@pytest.mark.parametrize("mode", ERAS)
async def test_a_declined_question_raises_its_error_and_ends_the_task(app: Flask, mode: str) -> None:
    async def decline(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ErrorData:
        return types.ErrorData(code=-32600, message="no user here to ask")

    statuses = Statuses()
    tasks = TasksExtension(on_status=statuses)
    async with connect(app, mode=mode, extensions=[tasks], elicitation_callback=decline) as client:
        with pytest.raises(MCPError) as declined:
            await tasks.call_tool(client, "order", {"item": "cake"})
        assert (declined.value.code, declined.value.message) == (-32600, "no user here to ask")
        # Nothing is left waiting for an answer: failed by the answer (2025-11-25), or cancelled (2026-07-28).
        assert await status_of(client, statuses.task_id) == ("failed" if mode == "legacy" else "cancelled")


@pytest.mark.parametrize("mode", ERAS)
async def test_the_callers_cancellation_cancels_the_task(app: Flask, mode: str, gates: Gates) -> None:
    statuses = Statuses()
    tasks = TasksExtension(on_status=statuses)
    async with connect(app, mode=mode, extensions=[tasks]) as client:
        with anyio.move_on_after(10) as scope:
            async with anyio.create_task_group() as group:
                group.start_soon(tasks.call_tool, client, "watch", {})
                assert await anyio.to_thread.run_sync(gates.started.wait, 10)
                await statuses.wait("working")  # the client follows the task
                group.cancel_scope.cancel()  # the caller stops waiting
        assert not scope.cancelled_caught
        assert await anyio.to_thread.run_sync(gates.saw_cancel.wait, 10)  # the tool was told
        assert await status_of(client, statuses.task_id) == "cancelled"


async def test_a_caller_cancelling_while_the_task_is_made_cancels_it_once_made(app: Flask, gates: Gates) -> None:
    """2025-11-25: the tool may run before the task's id reaches the client; the task is cancelled all the same."""
    statuses = Statuses()
    tasks = TasksExtension(on_status=statuses)
    async with connect(app, mode="legacy", extensions=[tasks]) as client:
        with anyio.move_on_after(10) as scope:
            async with anyio.create_task_group() as group:
                group.start_soon(tasks.call_tool, client, "watch", {})
                assert await anyio.to_thread.run_sync(gates.started.wait, 10)
                group.cancel_scope.cancel()
        assert not scope.cancelled_caught
        assert await anyio.to_thread.run_sync(gates.saw_cancel.wait, 10)


@pytest.mark.parametrize("mode", ERAS)
async def test_a_task_cancelled_by_someone_else_raises_task_cancelled(app: Flask, mode: str, gates: Gates) -> None:
    statuses = Statuses()
    tasks = TasksExtension(on_status=statuses)
    async with connect(app, mode=mode, extensions=[tasks]) as client:

        async def call() -> None:
            with pytest.raises(TaskCancelledError) as cancelled:
                await tasks.call_tool(client, "watch", {})
            assert cancelled.value.task_id == statuses.task_id

        async with anyio.create_task_group() as group:
            group.start_soon(call)
            assert await anyio.to_thread.run_sync(gates.started.wait, 10)
            await statuses.wait("working")
            cancel: types.Request[t.Any, t.Any]
            if mode == "legacy":
                cancel = types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=statuses.task_id))
            else:
                cancel = CancelTask(params=TaskParams(task_id=statuses.task_id))
            await client.session.send_request(cancel, ANY)


@pytest.mark.parametrize("mode", ERAS)
async def test_a_failed_task_raises_its_error_and_a_tools_error_is_its_result(app: Flask, mode: str) -> None:
    tasks = TasksExtension()
    async with connect(app, mode=mode, extensions=[tasks]) as client:
        with pytest.raises(MCPError) as failed:
            await tasks.call_tool(client, "burn", {})
        error = failed.value.error
        assert (error.code, error.message, error.data) == (-32010, "out of beans", {"beans": 0})
        spilled = await tasks.call_tool(client, "spill", {})
        assert spilled.is_error is True and "the cup fell" in spilled.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", ERAS)
async def test_errors_surface_as_the_sdk_surfaces_them(app: Flask, mode: str) -> None:
    tasks = TasksExtension()
    async with connect(app, mode=mode, extensions=[tasks]) as client:
        with pytest.raises(MCPError) as unknown:
            await tasks.call_tool(client, "nope", {})
        assert unknown.value.code == -32602 and "nope" in unknown.value.message
        # Arguments that do not fit are the tool's error result, as for any call.
        invalid = await tasks.call_tool(client, "brew", {"kind": 3})
        assert invalid.is_error is True


@pytest.mark.parametrize("mode", ERAS)
async def test_a_tool_that_runs_in_its_request_is_called_as_usual(app: Flask, mode: str) -> None:
    statuses = Statuses()
    tasks = TasksExtension(on_status=statuses)
    async with connect(app, mode=mode, extensions=[tasks]) as client:
        assert (await tasks.call_tool(client, "plain")).content[0].text == "in its request"  # type: ignore[union-attr]
    assert statuses.updates == []  # no task was made


async def test_rounds_of_questions_are_bounded_and_the_task_cancelled(app: Flask) -> None:
    statuses = Statuses()
    tasks = TasksExtension(on_status=statuses, max_rounds=2)
    async with connect(app, mode="2026-07-28", extensions=[tasks], elicitation_callback=accept) as client:
        with pytest.raises(InputRequiredRoundsExceededError):
            await tasks.call_tool(client, "quiz")
        assert await status_of(client, statuses.task_id) == "cancelled"


async def test_without_the_extension_a_required_task_is_refused_and_said_so(app: Flask) -> None:
    async with connect(app, mode="2026-07-28") as client:
        with pytest.raises(MCPError) as refused:
            await client.call_tool("brew", {"kind": "tea"})
        assert refused.value.code == -32021
        with pytest.raises(ValueError, match=r"pass it to Client\(extensions="):
            await TasksExtension().call_tool(client, "brew", {"kind": "tea"})


def test_a_servers_poll_interval_is_kept_within_bounds() -> None:
    tasks = TasksExtension(default_poll_interval=2, min_poll_interval=0.05, max_poll_interval=60)
    assert tasks._interval(None) == 2
    assert tasks._interval(500) == 0.5
    assert tasks._interval(0) == 0.05  # a server asking for a busy loop does not get one
    assert tasks._interval(10**12) == 60  # nor one asking the client to wait for ever


@pytest.mark.parametrize("mode", ERAS)
async def test_over_http_too(make_app: t.Callable[..., Flask], live_server: t.Any, gates: Gates, mode: str) -> None:
    gates.release.set()
    app = make_app(kitchen(gates), MCP_TASK_POLL_INTERVAL=0.01)
    tasks = TasksExtension()
    with live_server(app) as server:
        async with Client(server.url + "/mcp", mode=mode, extensions=[tasks]) as client:
            result = await tasks.call_tool(client, "brew", {"kind": "tea"})
    assert result.content[0].text == "a tea"  # type: ignore[union-attr]
