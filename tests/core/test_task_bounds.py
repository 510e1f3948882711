"""Tasks against hostile callers: owners nobody shares, bounded stores, ttls that do not free a worker, fair workers."""

from __future__ import annotations

import threading
import time
import typing as t

import pytest
from flask import Flask

from flask_mcp import MCP, Context
from flask_mcp.core.tasks import EXTENSION, Tasks
from flask_mcp.testing import MCPTestClient

from ..conftest import Gates

TASKS = {"extensions": {EXTENSION: {}}}


class Started:
    """Counts the runs of a tool that have started, for a test to wait on."""

    def __init__(self) -> None:
        self.count = 0
        self.changed = threading.Condition()

    def add(self) -> None:
        with self.changed:
            self.count += 1
            self.changed.notify_all()

    def reach(self, count: int, timeout: float = 10) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: self.count >= count, timeout)


@pytest.fixture
def started() -> Started:
    return Started()


@pytest.fixture
def bounded_mcp(gates: Gates, started: Started) -> MCP:
    mcp = MCP(name="bounded")

    @mcp.tool(task="optional")
    def hold(ctx: Context, pad: str = "") -> str:
        """Runs until the test releases it, whatever the client asks (a tool that ignores cancellation)."""
        started.add()
        gates.release.wait(30)
        return "released"

    @mcp.tool(task="optional")
    def quick() -> str:
        return "quick"

    @mcp.tool(task="optional")
    def measure(blob: str) -> int:
        return len(blob)

    return mcp


@pytest.fixture
def make(bounded_mcp: MCP, make_app: t.Any) -> t.Iterator[t.Callable[..., Flask]]:
    apps: list[Flask] = []

    def factory(**config: t.Any) -> Flask:
        app = make_app(bounded_mcp, MCP_TASK_POLL_INTERVAL=0.01, **config)
        apps.append(app)
        return app

    yield factory
    for app in apps:
        tasks(app).runner.shutdown(wait=False)  # type: ignore[attr-defined]


def tasks(app: Flask) -> Tasks:
    return t.cast(Tasks, app.extensions["mcp"].server.tasks)


def caller(make_client: t.Any, app: Flask, era: str, address: str, **options: t.Any) -> MCPTestClient:
    """A client from *address*: modern and declaring tasks, or in the handshake era without a session."""
    client: MCPTestClient = make_client(app, era=era, capabilities=TASKS, **options)
    client.http.environ_base["REMOTE_ADDR"] = address
    return client


def create(client: MCPTestClient, tool: str, arguments: dict[str, t.Any] | None = None, **task: t.Any) -> str:
    params: dict[str, t.Any] = {"name": tool, "arguments": arguments or {}}
    if client.modern:
        return str(client.request("tools/call", params)["taskId"])
    return str(client.request("tools/call", {**params, "task": task})["task"]["taskId"])


def refused(client: MCPTestClient, tool: str, arguments: dict[str, t.Any] | None = None) -> dict[str, t.Any]:
    params: dict[str, t.Any] = {"name": tool, "arguments": arguments or {}}
    return client.error("tools/call", params if client.modern else {**params, "task": {}})


# -- anonymous callers share nothing ------------------------------------------------------------------


def test_anonymous_callers_without_a_session_do_not_see_each_others_tasks(
    make: t.Callable[..., Flask], make_client: t.Any
) -> None:
    app = make(MCP_STATELESS=True)
    ada = caller(make_client, app, "handshake", "10.0.0.1")
    eve = caller(make_client, app, "handshake", "10.0.0.1")  # even from the same address
    task_id = create(ada, "quick")
    assert eve.request("tasks/list", {})["tasks"] == []
    # Nobody's tasks are listed (nothing tells one anonymous caller from the next): each keeps its id.
    assert ada.request("tasks/list", {})["tasks"] == []
    assert ada.task_result(task_id)["content"][0]["text"] == "quick"


def test_an_ownerless_task_and_a_sessions_are_each_their_own(make: t.Callable[..., Flask], make_client: t.Any) -> None:
    app = make()
    anonymous = caller(make_client, app, "modern", "10.0.0.1")
    in_session: MCPTestClient = make_client(app)
    in_session.initialize()
    ownerless = create(anonymous, "quick")
    owned = create(in_session, "quick")
    assert anonymous.wait_for_task(ownerless)["status"] == "completed"
    assert in_session.error("tasks/get", {"taskId": ownerless})["code"] == -32602
    assert anonymous.error("tasks/get", {"taskId": owned})["code"] == -32602
    assert [task["taskId"] for task in in_session.request("tasks/list", {})["tasks"]] == [owned]


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_anonymous_callers_do_not_share_one_cap(
    era: str, make: t.Callable[..., Flask], make_client: t.Any, gates: Gates, started: Started
) -> None:
    app = make(MCP_STATELESS=True, MCP_TASK_MAX_PER_CALLER=1)
    ada = caller(make_client, app, era, "10.0.0.1")
    eve = caller(make_client, app, era, "10.0.0.2")
    create(ada, "hold")
    assert started.reach(1)
    assert refused(ada, "hold")["code"] == -31429  # its own cap holds
    other = create(eve, "hold")  # another address is not held by it
    assert started.reach(2)
    gates.release.set()
    assert eve.wait_for_task(other)["status"] == "completed"


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_ownerless_tasks_spend_the_budget_of_new_sessions(
    era: str, make: t.Callable[..., Flask], make_client: t.Any
) -> None:
    app = make(MCP_STATELESS=True, MCP_SESSION_RATE_LIMIT="2/hour")
    ada = caller(make_client, app, era, "10.0.0.1")
    create(ada, "quick")
    create(ada, "quick")
    error = refused(ada, "quick")
    assert error["code"] == -31429 and error["data"]["retryAfter"] >= 1
    assert ada.last_response is not None and ada.last_response.status_code == 429
    create(caller(make_client, app, era, "10.0.0.2"), "quick")  # another address has its own budget


# -- what is kept is bounded --------------------------------------------------------------------------


def test_an_ended_task_keeps_its_result_not_its_arguments(make: t.Callable[..., Flask], make_client: t.Any) -> None:
    app = make()
    client = caller(make_client, app, "modern", "10.0.0.1")
    task_id = create(client, "measure", {"blob": "x" * 100_000})
    assert client.wait_for_task(task_id)["result"]["structuredContent"] == {"result": 100_000}
    with app.app_context():
        record = tasks(app).store.load(task_id)
    assert record is not None and record.arguments == {} and record.client == {}


def test_what_one_caller_keeps_is_bounded(make: t.Callable[..., Flask], make_client: t.Any) -> None:
    app = make(MCP_TASK_MAX_KEPT_PER_CALLER=3, MCP_TASK_MAX_BYTES_PER_CALLER=250_000)
    client = caller(make_client, app, "modern", "10.0.0.1")
    made = []
    for _ in range(6):
        made.append(create(client, "measure", {"blob": "x" * 100_000}))
        client.wait_for_task(made[-1])
    # The newest three are kept; the oldest ended ones were let go to make room.
    assert client.error("tasks/get", {"taskId": made[0]})["code"] == -32602
    assert all(client.get_task(task_id)["status"] == "completed" for task_id in made[-3:])


def test_live_tasks_that_fill_a_callers_bytes_refuse_the_next(
    make: t.Callable[..., Flask], make_client: t.Any, gates: Gates, started: Started
) -> None:
    app = make(MCP_TASK_MAX_BYTES_PER_CALLER=150_000)
    client = caller(make_client, app, "modern", "10.0.0.1")
    # An ended task has shed its arguments: it leaves room.
    client.wait_for_task(create(client, "measure", {"blob": "x" * 100_000}))
    held = create(client, "hold", {"pad": "x" * 100_000})
    # A live one keeps them: with it, another would not fit.
    assert refused(client, "hold", {"pad": "x" * 100_000})["code"] == -31429
    gates.release.set()
    client.wait_for_task(held)
    create(client, "hold", {"pad": "x" * 100_000})


def test_the_store_refuses_new_tasks_when_full(make: t.Callable[..., Flask], make_client: t.Any) -> None:
    app = make(MCP_TASK_MAX_TOTAL=2)
    for address in ("10.0.0.1", "10.0.0.2"):
        create(caller(make_client, app, "modern", address), "quick")
    late = caller(make_client, app, "modern", "10.0.0.3")
    error = refused(late, "quick")
    assert error["code"] == -31503 and error["data"]["retryAfter"] >= 1
    assert late.last_response is not None and late.last_response.status_code == 503


def test_a_store_at_its_high_water_refuses_new_tasks_and_evicts_nobody(
    make: t.Callable[..., Flask], make_client: t.Any
) -> None:
    """Callers each within their task bounds fill the store: past its high water, 429 for all, no record lost."""
    app = make(MCP_SESSION_RATE_LIMIT=None, MCP_EPHEMERAL_CACHE_THRESHOLD=100)
    kept: list[tuple[MCPTestClient, str]] = []
    error: dict[str, t.Any] | None = None
    for n in range(100):
        client = caller(make_client, app, "modern", f"10.0.1.{n}")
        body = client.envelope("tools/call", {"name": "quick", "arguments": {}})
        response = client.last_response
        assert response is not None
        if "error" in body:
            error = body["error"]
            assert response.status_code == 429 and int(response.headers["Retry-After"]) >= 1
            break
        kept.append((client, body["result"]["taskId"]))
    assert error is not None and kept, "the store never filled"
    assert error["code"] == -31429 and "short-lived store is full" in error["message"]
    for client, task_id in kept:  # every task accepted before the refusal is still there
        assert client.wait_for_task(task_id)["status"] == "completed"


# -- a ttl does not free a worker ---------------------------------------------------------------------


def test_a_running_task_past_its_ttl_stays_counted_readable_and_cancellable(
    make: t.Callable[..., Flask], make_client: t.Any, gates: Gates, started: Started
) -> None:
    app = make(MCP_TASK_MAX_PER_CALLER=2)
    client: MCPTestClient = make_client(app)
    client.initialize()
    first, second = (create(client, "hold", ttl=1) for _ in range(2))
    assert started.reach(2)
    # Its ttl (1 ms) is long past: its tool still runs, so it is still there.
    assert client.get_task(first)["status"] == "working"
    assert [task["taskId"] for task in client.request("tasks/list", {})["tasks"]] == [first, second]
    assert refused(client, "hold")["code"] == -31429
    # Cancelled, and its tool ignores it: the tools still run, and still count.
    assert client.request("tasks/cancel", {"taskId": first})["status"] == "cancelled"
    assert client.request("tasks/cancel", {"taskId": second})["status"] == "cancelled"
    assert refused(client, "hold")["code"] == -31429
    assert started.count == 2
    gates.release.set()
    # Once the tools have returned, the tasks stop counting (and, past their ttl, are gone).
    with app.app_context():
        store = tasks(app).store
        for task_id in (first, second):
            eventually(lambda task_id=task_id: (found := store.load(task_id)) is None or found.runs == 0)
    assert client.request("tools/call", {"name": "quick", "arguments": {}, "task": {}})["task"]["status"]
    assert client.error("tasks/get", {"taskId": first})["code"] == -32602


def eventually(condition: t.Callable[[], bool], timeout: float = 10) -> None:
    """Poll *condition* (it reads the store) until it holds, within *timeout* seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.01)


# -- workers are shared fairly ------------------------------------------------------------------------


def test_one_callers_long_tasks_do_not_hold_every_worker(
    make: t.Callable[..., Flask], make_client: t.Any, gates: Gates, started: Started
) -> None:
    app = make(MCP_TASK_WORKERS=2)
    greedy = caller(make_client, app, "modern", "10.0.0.1")
    for _ in range(4):
        create(greedy, "hold")
    assert started.reach(1)
    other = caller(make_client, app, "modern", "10.0.0.2")
    task_id = create(other, "quick")
    # Its task ends while the greedy caller's are all still held.
    assert other.wait_for_task(task_id)["status"] == "completed"
    assert not gates.release.is_set() and started.count == 1
    gates.release.set()
    assert started.reach(4)
