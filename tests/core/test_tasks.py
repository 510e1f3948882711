"""Tasks: tool calls that outlive their request, in the 2026-07-28 extension and in 2025-11-25."""

from __future__ import annotations

import typing as t

import pytest
from flask import Flask

from flask_mcp import MCP, ConfigurationError, Context, Elicit, MCPError, ToolError
from flask_mcp.core.tasks import EXTENSION, RELATED_TASK

from ..conftest import Gates

TASKS = {"extensions": {EXTENSION: {}}}
ASKING = {"elicitation": {}, "extensions": {EXTENSION: {}}}
CONFIRM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}
NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@pytest.fixture
def tasks_mcp(gates: Gates) -> MCP:
    mcp = MCP(name="tasks")

    @mcp.tool()
    def plain(name: str) -> str:
        return f"Hello, {name}!"

    @mcp.tool(task="optional")
    def crunch(rows: int, ctx: Context) -> dict[str, int]:
        ctx.report_progress(1, total=2, message=f"crunching {rows} rows")
        gates.started.set()  # after the progress: a test that waits for the start then sees its message
        while not gates.release.wait(0.01):
            if ctx.cancelled:
                gates.saw_cancel.set()
                return {"rows": -1}
        return {"rows": rows}

    @mcp.tool(task="required")
    def erase(filename: str, ctx: Context) -> str:
        answer = ctx.elicit(f"Erase {filename}?", CONFIRM, key="confirm")
        return f"erased {filename}" if (answer.content or {}).get("confirm") else f"kept {filename}"

    @mcp.tool(task="optional")
    def survey(ctx: Context) -> str:
        answers = ctx.ask(first=Elicit("Name?", NAME), second=Elicit("Name again?", NAME))
        return " and ".join((answers[key].content or {}).get("name", "?") for key in ("first", "second"))

    @mcp.tool(task="optional")
    def steps(ctx: Context) -> str:
        ctx.info("step 1 of 2")
        ctx.info({"step": 2})
        ctx.debug("below info: not a status")
        gates.started.set()
        gates.release.wait(10)
        return "done"

    @mcp.tool(task="optional")
    def broken() -> str:
        raise ToolError("it broke")

    @mcp.tool(task="optional")
    def refused() -> str:
        raise MCPError(-32603, "the backend refused")

    @mcp.tool(task="required", ask_first={"who": Elicit("Who is asking?", NAME)})
    def report(ctx: Context) -> str:
        return f"report for {(ctx.elicit('Who is asking?', NAME, key='who').content or {}).get('name')}"

    return mcp


@pytest.fixture
def app(tasks_mcp: MCP, make_app: t.Any) -> t.Iterator[Flask]:
    app = make_app(tasks_mcp, MCP_TASK_POLL_INTERVAL=0.01)
    yield app
    app.extensions["mcp"].server.tasks.runner.shutdown(wait=False)


def test_the_extension_is_declared_when_a_tool_runs_as_a_task(app: Flask, make_client: t.Any, make_app: t.Any) -> None:
    assert make_client(app, era="modern").discover()["capabilities"]["extensions"] == {EXTENSION: {}}
    plain_mcp = MCP(name="plain")
    plain_mcp.tool(name="only")(lambda: "x")
    assert "extensions" not in make_client(make_app(plain_mcp), era="modern").discover()["capabilities"]


def test_a_declaring_client_gets_a_task_and_its_result(app: Flask, make_client: t.Any, gates: Gates) -> None:
    client = make_client(app, era="modern", capabilities=TASKS)
    created = client.request("tools/call", {"name": "crunch", "arguments": {"rows": 7}})
    assert created["resultType"] == "task" and created["status"] == "working"
    assert set(created) >= {"taskId", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"}
    assert gates.started.wait(5)
    working = client.get_task(created["taskId"])
    assert working["status"] == "working" and working["statusMessage"] == "crunching 7 rows"
    gates.release.set()
    done = client.wait_for_task(created["taskId"])
    assert done["status"] == "completed" and done["resultType"] == "complete"
    assert done["result"]["structuredContent"] == {"rows": 7}


def test_without_the_extension_a_call_runs_in_the_request_or_is_refused(
    app: Flask, make_client: t.Any, gates: Gates
) -> None:
    gates.release.set()
    client = make_client(app, era="modern", capabilities={"elicitation": {}})
    assert client.call_tool("crunch", {"rows": 3})["structuredContent"] == {"rows": 3}
    refused = client.error("tools/call", {"name": "erase", "arguments": {"filename": "a"}})
    assert refused["code"] == -32021
    assert refused["data"] == {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}
    # Before any lookup: an undeclared client learns nothing of tasks.
    assert client.error("tasks/get", {"taskId": "anything"})["code"] == -32021
    assert client.error("tasks/update", {"taskId": "anything", "inputResponses": {}})["code"] == -32021


def test_questions_in_a_task_are_answered_with_tasks_update(app: Flask, make_client: t.Any) -> None:
    client = make_client(app, era="modern", capabilities=ASKING)
    task_id = client.request("tools/call", {"name": "survey", "arguments": {}})["taskId"]
    waiting = client.wait_for_task(task_id)
    assert waiting["status"] == "input_required" and set(waiting["inputRequests"]) == {"first", "second"}
    assert waiting["inputRequests"]["first"]["method"] == "elicitation/create"
    # One answer (and one for a question never asked, ignored): still waiting for the other.
    answered = {"first": {"action": "accept", "content": {"name": "Ada"}}, "nonsense": {"ignored": True}}
    assert client.request("tasks/update", {"taskId": task_id, "inputResponses": answered})["resultType"] == "complete"
    assert set(client.get_task(task_id)["inputRequests"]) == {"second"}
    second = {"second": {"action": "accept", "content": {"name": "Grace"}}}
    client.request("tasks/update", {"taskId": task_id, "inputResponses": second})
    done = client.wait_for_task(task_id, {"completed", "failed"})
    assert done["result"]["content"][0]["text"] == "Ada and Grace"


def test_log_messages_are_status_messages_whether_or_not_the_client_asked(
    app: Flask, make_client: t.Any, gates: Gates
) -> None:
    client = make_client(app, era="modern", capabilities=TASKS)  # no log level in its requests
    task_id = client.request("tools/call", {"name": "steps", "arguments": {}})["taskId"]
    assert gates.started.wait(5)
    assert client.get_task(task_id)["statusMessage"] == '{"step": 2}'
    gates.release.set()
    assert client.wait_for_task(task_id)["status"] == "completed"


def test_ask_first_questions_are_rounds_before_the_task(app: Flask, make_client: t.Any) -> None:
    client = make_client(app, era="modern", capabilities=ASKING)
    first = client.request("tools/call", {"name": "report", "arguments": {}})
    assert first["resultType"] == "input_required" and "taskId" not in first
    assert set(first["inputRequests"]) == {"who"}
    retry = {
        "name": "report",
        "arguments": {},
        "inputResponses": {"who": {"action": "accept", "content": {"name": "Alice"}}},
        "requestState": first["requestState"],
    }
    created = client.request("tools/call", retry)
    assert created["resultType"] == "task" and "requestState" not in created
    done = client.wait_for_task(created["taskId"])
    assert done["result"]["content"][0]["text"] == "report for Alice"


def test_a_tool_error_completes_and_a_protocol_error_fails(app: Flask, make_client: t.Any) -> None:
    client = make_client(app, era="modern", capabilities=TASKS)
    broken = client.wait_for_task(client.request("tools/call", {"name": "broken", "arguments": {}})["taskId"])
    assert broken["status"] == "completed" and broken["result"]["isError"] is True
    refused = client.wait_for_task(client.request("tools/call", {"name": "refused", "arguments": {}})["taskId"])
    assert refused["status"] == "failed" and refused["error"]["message"] == "the backend refused"
    assert "result" not in refused


def test_cancelling_reaches_the_running_tool(app: Flask, make_client: t.Any, gates: Gates) -> None:
    client = make_client(app, era="modern", capabilities=TASKS)
    task_id = client.request("tools/call", {"name": "crunch", "arguments": {"rows": 1}})["taskId"]
    assert gates.started.wait(5)
    assert client.request("tasks/cancel", {"taskId": task_id})["resultType"] == "complete"
    assert gates.saw_cancel.wait(5)
    # It stays cancelled whatever the tool returned, and cancelling again is acknowledged.
    assert client.wait_for_task(task_id)["status"] == "cancelled"
    assert client.request("tasks/cancel", {"taskId": task_id}) == client.request("tasks/cancel", {"taskId": task_id})


@pytest.mark.filterwarnings("ignore::flask_mcp.UnprotectedToolWarning")
def test_a_task_is_its_callers_alone(tasks_mcp: MCP, make_app: t.Any, make_client: t.Any, gates: Gates) -> None:
    gates.release.set()
    tokens = {"ada-token": "ada", "eve-token": "eve"}
    app = make_app(tasks_mcp, MCP_AUTH_TOKENS=tokens)
    ada = make_client(app, era="modern", capabilities=TASKS, token="ada-token")
    eve = make_client(app, era="modern", capabilities=TASKS, token="eve-token")
    task_id = ada.request("tools/call", {"name": "crunch", "arguments": {"rows": 2}})["taskId"]
    assert ada.wait_for_task(task_id)["status"] == "completed"
    unknown = eve.error("tasks/get", {"taskId": "no-such-task"})
    foreign = eve.error("tasks/get", {"taskId": task_id})
    assert foreign["code"] == unknown["code"] == -32602
    assert eve.error("tasks/cancel", {"taskId": task_id})["code"] == -32602


def test_a_caller_has_a_bounded_number_of_live_tasks(tasks_mcp: MCP, make_app: t.Any, make_client: t.Any) -> None:
    app = make_app(tasks_mcp, MCP_TASK_MAX_PER_CALLER=1)
    client = make_client(app, era="modern", capabilities=TASKS)
    client.request("tools/call", {"name": "crunch", "arguments": {"rows": 1}})
    limited = client.error("tools/call", {"name": "crunch", "arguments": {"rows": 2}})
    assert limited["code"] == -31429 and limited["data"] == {"limit": 1}
    assert client.last_response is not None and client.last_response.status_code == 429


def test_the_routing_header_must_name_the_task(app: Flask, make_client: t.Any, gates: Gates) -> None:
    gates.release.set()
    client = make_client(app, era="modern", capabilities=TASKS)
    task_id = client.request("tools/call", {"name": "crunch", "arguments": {"rows": 1}})["taskId"]
    body = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "tasks/get",
        "params": {"taskId": task_id, "_meta": client.modern_request("tasks/get", {})[0]["_meta"]},
    }
    headers = {"Mcp-Method": "tasks/get", "Mcp-Name": "another-task", "MCP-Protocol-Version": "2026-07-28"}
    answer = client.http.post("/mcp", json=body, headers={**headers, "Accept": "application/json, text/event-stream"})
    assert answer.status_code == 400 and answer.get_json()["error"]["code"] == -32020


# -- 2025-11-25 ----------------------------------------------------------------------------------


def test_the_handshake_era_declares_tasks_and_each_tools_support(app: Flask, make_client: t.Any) -> None:
    client = make_client(app)
    capabilities = client.initialize()["capabilities"]
    assert capabilities["tasks"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    support = {tool["name"]: tool.get("execution") for tool in client.list_tools()}
    assert support["plain"] is None and support["crunch"] == {"taskSupport": "optional"}
    assert support["erase"] == {"taskSupport": "required"}


def test_a_handshake_task_is_created_waited_for_and_listed(app: Flask, make_client: t.Any, gates: Gates) -> None:
    client = make_client(app)
    client.initialize()
    created = client.request("tools/call", {"name": "crunch", "arguments": {"rows": 5}, "task": {"ttl": 60000}})
    task = created["task"]
    assert task["status"] == "working" and task["ttl"] == 60000
    assert client.get_task(task["taskId"])["taskId"] == task["taskId"]
    gates.release.set()
    result = client.request("tasks/result", {"taskId": task["taskId"]})  # waits for the end
    assert result["structuredContent"] == {"rows": 5}
    assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task["taskId"]}
    assert [listed["taskId"] for listed in client.request("tasks/list", {})["tasks"]] == [task["taskId"]]
    # Another session does not see it.
    other = make_client(app)
    other.initialize()
    assert other.request("tasks/list", {})["tasks"] == []
    assert other.error("tasks/get", {"taskId": task["taskId"]})["code"] == -32602
    # An ended task cannot be cancelled.
    assert client.error("tasks/cancel", {"taskId": task["taskId"]})["code"] == -32602


def test_handshake_cancel_and_the_support_rules(app: Flask, make_client: t.Any, gates: Gates) -> None:
    client = make_client(app)
    client.initialize(capabilities={"elicitation": {}})
    task_id = client.request("tools/call", {"name": "crunch", "arguments": {"rows": 1}, "task": {}})["task"]["taskId"]
    cancelled = client.request("tasks/cancel", {"taskId": task_id})
    assert cancelled["status"] == "cancelled" and cancelled["taskId"] == task_id
    assert client.error("tools/call", {"name": "erase", "arguments": {"filename": "x"}})["code"] == -32601
    assert client.error("tools/call", {"name": "plain", "arguments": {"name": "x"}, "task": {}})["code"] == -32601
    # A question inside a 2025-11-25 task waits for tasks/result to bring it to the client; cancelling ends that.
    asking = client.request("tools/call", {"name": "erase", "arguments": {"filename": "x"}, "task": {}})
    waiting = client.wait_for_task(asking["task"]["taskId"])
    assert waiting["status"] == "input_required" and "inputRequests" not in waiting
    assert client.request("tasks/cancel", {"taskId": waiting["taskId"]})["status"] == "cancelled"
    assert client.error("tasks/result", {"taskId": waiting["taskId"]})["message"].endswith("was cancelled")


def test_a_handshake_tasks_questions_come_on_the_stream_of_tasks_result(
    app: Flask, make_client: t.Any, schema_checker: t.Any
) -> None:
    client = make_client(app)
    client.initialize(capabilities={"elicitation": {}})
    task_id = client.request("tools/call", {"name": "survey", "arguments": {}, "task": {}})["task"]["taskId"]
    assert client.wait_for_task(task_id)["status"] == "input_required"
    names = {"Name?": "Ada", "Name again?": "Grace"}
    asked: list[dict[str, t.Any]] = []

    def answer(key: str, request: dict[str, t.Any]) -> dict[str, t.Any]:
        asked.append(request["params"])
        return {"action": "accept", "content": {"name": names[request["params"]["message"]]}}

    result = client.task_result(task_id, answers=answer)
    assert result["content"][0]["text"] == "Ada and Grace"
    assert [params["message"] for params in asked] == ["Name?", "Name again?"]
    assert all(params["_meta"][RELATED_TASK] == {"taskId": task_id} for params in asked)
    # Changes of status while it waited came on the stream: running again (unless it ended first), then done.
    changes = [note["params"] for note in client.notifications if note["method"] == "notifications/tasks/status"]
    assert [change["status"] for change in changes] in (["working", "completed"], ["completed"])
    assert {change["taskId"] for change in changes} == {task_id}
    for note in client.notifications:
        if note["method"] == "notifications/tasks/status":
            schema_checker.check("TaskStatusNotification", note)
    assert client.get_task(task_id)["status"] == "completed"


def test_the_executor_setting_is_checked(tasks_mcp: MCP) -> None:
    app = Flask("bad_executor")
    app.config.update(MCP_TASK_EXECUTOR="rq")
    with pytest.raises(ValueError, match="MCP_TASK_EXECUTOR must be 'thread' or 'celery', not 'rq'"):
        tasks_mcp.init_app(app)


def test_the_celery_executor_needs_the_apps_celery_first(tasks_mcp: MCP) -> None:
    app = Flask("no_celery")
    app.config.update(MCP_TASK_EXECUTOR="celery")
    with pytest.raises(ConfigurationError, match=r'app.extensions\["celery"\] before the MCP extension'):
        tasks_mcp.init_app(app)
