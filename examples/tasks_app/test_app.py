"""The tasks example, tested as its users would: with flask_mcp's pytest fixtures
(``mcp_client``, ``mcp_client_factory``), over stdio with the official client, and under
gunicorn with two workers sharing Redis and one SQLite file.

The fixtures ``app``, ``reader_token`` and ``writer_token`` come from this folder's conftest.
"""

from __future__ import annotations

import json
import sys
import time
import typing as t
from pathlib import Path

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from examples.tasks_app.app import PRIORITIES, SEED, TaskSchema
from flask_mcp.pytest_plugin import MCPClientFactory
from flask_mcp.testing import MCPTestClient, SchemaValidator

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
#: The official schemas of the two eras; checks are skipped where the files are absent.
MODERN_SCHEMA = SchemaValidator.official("2026-07-28")
HANDSHAKE_SCHEMA = SchemaValidator.official("2025-11-25")

#: The demo tasks as the tools dump them.
TASKS = [TaskSchema().dump({"done": False, **row}) for row in SEED]


@pytest.fixture(params=["modern", "handshake"])
def era(request: pytest.FixtureRequest) -> t.Literal["modern", "handshake"]:
    return t.cast(t.Literal["modern", "handshake"], request.param)


@pytest.fixture
def reader(
    mcp_client_factory: MCPClientFactory, reader_token: str, era: t.Literal["modern", "handshake"]
) -> MCPTestClient:
    validator = MODERN_SCHEMA if era == "modern" else HANDSHAKE_SCHEMA
    return mcp_client_factory(token=reader_token, era=era, validator=validator)


@pytest.fixture
def writer(
    mcp_client_factory: MCPClientFactory, writer_token: str, era: t.Literal["modern", "handshake"]
) -> MCPTestClient:
    validator = MODERN_SCHEMA if era == "modern" else HANDSHAKE_SCHEMA
    return mcp_client_factory(token=writer_token, era=era, validator=validator)


def structured(client: MCPTestClient, name: str, arguments: dict[str, t.Any] | None = None) -> t.Any:
    result = client.call_tool(name, arguments)
    assert not result.get("isError"), result
    return result["structuredContent"]


def listed(client: MCPTestClient, arguments: dict[str, t.Any]) -> list[int]:
    """The ids ``list_tasks`` answers with, every page followed."""
    ids: list[int] = []
    page = 1
    while True:
        answer = structured(client, "list_tasks", {**arguments, "page": page, "limit": 2})
        ids += [task["id"] for task in answer["items"]]
        if not answer["hasNext"]:
            return ids
        page += 1


# -- reading: list with lookups, retrieve, resource, prompt ---------------------------------------


def test_list_tasks_advertises_typed_lookups(mcp_client_factory: MCPClientFactory, reader_token: str) -> None:
    client = mcp_client_factory(token=reader_token)
    tool = next(tool for tool in client.list_tools() if tool["name"] == "list_tasks")
    inputs = tool["inputSchema"]["properties"]
    assert inputs["priority__in"]["type"] == "array" and inputs["priority__in"]["items"]["type"] == "integer"
    assert inputs["title__icontains"]["type"] == "string" and inputs["due__isnull"]["type"] == "boolean"
    assert (inputs["due__lt"]["type"], inputs["due__lt"]["format"]) == ("string", "date")
    assert set(tool["outputSchema"]["required"]) == {"items", "page", "totalPages", "hasNext"}


@pytest.mark.parametrize(
    ("arguments", "keep", "order"),
    [
        ({"title__icontains": "THE"}, lambda task: "the" in task["title"].lower(), "id"),
        ({"priority__in": [1, 4, 5]}, lambda task: task["priority"] in (1, 4, 5), "priority"),
        ({"priority__lte": 2, "done": False}, lambda task: task["priority"] <= 2 and not task["done"], "-priority"),
        ({"due__isnull": True}, lambda task: task["due"] is None, "id"),
        ({"due__lt": "2030-05-01"}, lambda task: task["due"] is not None and task["due"] < "2030-05-01", "id"),
        ({"title__icontains": "50%"}, lambda task: "50%" in task["title"], "id"),
        ({"owner": "robin", "done": True}, lambda task: task["owner"] == "robin" and task["done"], "id"),
    ],
)
def test_list_tasks_filters_in_sql(
    reader: MCPTestClient, arguments: dict[str, t.Any], keep: t.Callable[[dict[str, t.Any]], bool], order: str
) -> None:
    field = order.lstrip("-")
    expected = sorted((task for task in TASKS if keep(task)), key=lambda task: task[field], reverse=order[0] == "-")
    assert listed(reader, {**arguments, "ordering": order}) == [task["id"] for task in expected]


def test_get_task(reader: MCPTestClient) -> None:
    for task in TASKS:
        assert structured(reader, "get_task", {"task_id": task["id"]}) == task
    missing = reader.call_tool("get_task", {"task_id": 999})
    assert missing["isError"] and "not found" in missing["content"][0]["text"]


def test_task_resource(reader: MCPTestClient) -> None:
    task = TASKS[0]
    [content] = reader.read_resource(f"tasks://{task['id']}")
    assert content["mimeType"] == "application/json" and json.loads(content["text"]) == task
    assert reader.error("resources/read", {"uri": "tasks://999"})["data"] == {"uri": "tasks://999"}


def test_plan_day_prompt(reader: MCPTestClient) -> None:
    text = reader.get_prompt("plan_day", {"hours": "4"})["messages"][0]["content"]["text"]
    assert text.startswith("I have 4 hours today.")
    open_tasks = sorted((task for task in TASKS if not task["done"]), key=lambda task: (task["priority"], task["id"]))
    positions = [text.index(task["title"]) for task in open_tasks]
    assert positions == sorted(positions)  # most urgent first
    assert all(task["title"] not in text for task in TASKS if task["done"])


# -- writing: scopes -----------------------------------------------------------------------------


def test_writer_creates_and_completes_a_task(writer: MCPTestClient) -> None:
    created = structured(writer, "create_task", {"title": "Ship it", "priority": 1, "due": "2030-06-01"})
    assert created == {**created, "title": "Ship it", "priority": 1, "due": "2030-06-01", "done": False}
    assert created["owner"] == "walt"  # the token's subject
    assert created["id"] not in {task["id"] for task in TASKS}
    assert structured(writer, "get_task", {"task_id": created["id"]}) == created
    assert listed(writer, {"title__icontains": "ship", "done": False}) == [created["id"]]
    assert structured(writer, "complete_task", {"task_id": created["id"]})["done"] is True
    assert listed(writer, {"title__icontains": "ship", "done": False}) == []
    rejected = writer.call_tool("create_task", {"title": "", "priority": 9})
    assert rejected["isError"] and "title" in rejected["content"][0]["text"]


def test_creating_needs_the_write_scope(reader: MCPTestClient) -> None:
    error = reader.error("tools/call", {"name": "create_task", "arguments": {"title": "Sneaky"}})
    response = reader.last_response
    assert response is not None and response.status_code == 403
    assert 'error="insufficient_scope", scope="tasks:write"' in response.headers["WWW-Authenticate"]
    assert error["data"]["requiredScopes"] == ["tasks:write"]
    assert listed(reader, {"title__icontains": "sneaky"}) == []


def test_no_token_is_refused(mcp_client_factory: MCPClientFactory) -> None:
    anonymous = mcp_client_factory()
    response = anonymous.post({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "list_tasks"}})
    assert response.status_code == 401 and "resource_metadata=" in response.headers["WWW-Authenticate"]
    wrong = mcp_client_factory(token="not-a-token")
    assert wrong.post({"jsonrpc": "2.0", "id": 1, "method": "ping"}).status_code == 401


# -- a tool with a Context: logs and progress on an event stream, and a rate limit -----------------


def test_report_logs_and_reports_progress(mcp_client_factory: MCPClientFactory, reader_token: str) -> None:
    client = mcp_client_factory(token=reader_token, log_level="info", validator=MODERN_SCHEMA)
    result = client.request("tools/call", {"name": "tasks_report", "arguments": {}, "_meta": {"progressToken": "r"}})
    assert client.last_response is not None and client.last_response.mimetype == "text/event-stream"
    open_tasks = [task for task in TASKS if not task["done"]]
    assert result["structuredContent"] == {
        "open": len(open_tasks),
        "done": len(TASKS) - len(open_tasks),
        "byPriority": {str(level): sum(task["priority"] == level for task in open_tasks) for level in PRIORITIES},
    }
    progress = [n["params"] for n in client.notifications if n["method"] == "notifications/progress"]
    assert [(p["progressToken"], p["progress"], p["total"]) for p in progress] == [
        ("r", step, len(PRIORITIES)) for step in range(1, len(PRIORITIES) + 1)
    ]
    logs = [n["params"] for n in client.notifications if n["method"] == "notifications/message"]
    assert [log["level"] for log in logs] == ["info", "info"]
    assert logs[-1]["data"] == f"{len(open_tasks)} open, {len(TASKS) - len(open_tasks)} done"


def test_report_is_rate_limited(reader: MCPTestClient, writer: MCPTestClient) -> None:
    for _ in range(3):  # a burst of three...
        structured(reader, "tasks_report")
    error = reader.error("tools/call", {"name": "tasks_report", "arguments": {}})  # ...then one a minute
    response = reader.last_response
    assert response is not None and response.status_code == 429
    assert error["code"] == -31429 and error["data"]["retryAfter"] >= 1
    assert int(response.headers["Retry-After"]) == error["data"]["retryAfter"]
    structured(writer, "tasks_report")  # each caller has a budget of its own


# -- over stdio, with the token in FLASK_MCP_TOKEN -----------------------------------------------


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_stdio_with_a_token(mode: t.Literal["legacy", "2026-07-28"]) -> None:
    """``flask --app examples/tasks_app/app.py mcp stdio``, as a desktop client starts it; the demo reader token."""
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "flask", "--app", str(HERE / "app.py"), "mcp", "stdio"],
        env={"PYTHONPATH": str(REPO_ROOT), "FLASK_MCP_TOKEN": "reader-token"},
        cwd=str(REPO_ROOT),
    )
    async with Client(server, mode=mode) as client:
        page = await client.call_tool("list_tasks", {"priority__in": [1, 2], "ordering": "priority"})
        assert not page.is_error and page.structured_content is not None
        expected = sorted((task for task in TASKS if task["priority"] in (1, 2)), key=lambda task: task["priority"])
        assert [task["id"] for task in page.structured_content["items"]] == [task["id"] for task in expected]
        with pytest.raises(MCPError, match=r"requires scope.*tasks:write") as refused:
            await client.call_tool("create_task", {"title": "from stdio"})
        assert refused.value.error.code == -31403
        still = await client.call_tool("list_tasks", {"title__icontains": "stdio"})
        assert still.structured_content is not None and still.structured_content["items"] == []


# -- gunicorn: two workers, one Redis, one SQLite file ----------------------------------------------


def one_connection_per_request(token: str) -> httpx2.AsyncClient:
    """Never reuses a connection, so each request may reach either worker."""
    return httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"},
        limits=httpx2.Limits(max_keepalive_connections=0),
        timeout=30,
    )


@pytest.mark.anyio
async def test_two_gunicorn_workers_share_redis_and_the_database(
    serve_gunicorn: t.Any, redis_url: str, tmp_path: Path
) -> None:
    config = {
        "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path / 'tasks.db'}",
        "MCP_CACHE_TYPE": "RedisCache",
        "MCP_CACHE_REDIS_URL": redis_url,
        "MCP_CACHE_KEY_PREFIX": f"tasks_app_test:{tmp_path.name}:",
    }
    with serve_gunicorn(2, config) as server:
        # The handshake era: one session, which both workers find in Redis.
        transport = streamable_http_client(server.url, http_client=one_connection_per_request("writer-token"))
        async with Client(transport, mode="legacy") as client:
            created = await client.call_tool("create_task", {"title": "Seen by every worker"})
            assert not created.is_error and created.structured_content is not None
            workers: set[int] = set()
            deadline = time.monotonic() + 60
            while len(workers) < 2:  # until each worker has answered in this session
                assert time.monotonic() < deadline, f"only worker(s) {workers} answered"
                status = (await client.call_tool("server_status", {})).structured_content
                assert status is not None and status["tasks"] == len(SEED) + 1  # one database for both
                workers.add(status["worker"])
            fetched = await client.call_tool("get_task", {"task_id": created.structured_content["id"]})
            assert fetched.structured_content == created.structured_content
            # The rate limit's counters live in Redis too: three reports, whichever worker, then refused.
            for _ in range(3):
                assert not (await client.call_tool("tasks_report", {})).is_error
            with pytest.raises(MCPError, match="Rate limit exceeded") as limited:
                await client.call_tool("tasks_report", {})
            assert limited.value.error.code == -31429
