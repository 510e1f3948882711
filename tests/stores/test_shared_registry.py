"""Run-time registry changes: every process serves the same set afterwards.

Each "process" is an app with its own extension and registry, as separate
worker processes have; they share a real redis-server.
"""

from __future__ import annotations

import typing as t
import uuid

import pytest
from flask import Flask

from flask_mcp import MCP
from flask_mcp.stores import shared_registry as shared_registry_module
from flask_mcp.stores.events import BROADCAST
from flask_mcp.stores.shared_registry import RuntimeRegistrationWarning
from flask_mcp.testing import MCPTestClient
from tests.conftest import worker_app

#: What the loaders read: a stand-in for database rows every process can see.
REPORTS: dict[str, list[str]] = {}


def worker(redis_url: str, prefix: str, catalogue: str) -> Flask:
    """One worker process's app: ``add`` from code, and a loader that makes one tool per report."""

    def with_reports(server: MCP) -> None:
        @server.loader
        def load_reports() -> None:
            for slug in REPORTS[catalogue]:
                server.tool(name=f"report_{slug}", description=f"The {slug} report.")(
                    lambda slug=slug: f"report {slug}"
                )

    return worker_app(redis_url, prefix, with_reports)


@pytest.fixture
def catalogue() -> t.Iterator[str]:
    name = uuid.uuid4().hex
    REPORTS[name] = ["sales"]
    yield name
    del REPORTS[name]


@pytest.fixture
def pair(redis_url: str, prefix: str, catalogue: str) -> tuple[Flask, Flask]:
    return worker(redis_url, prefix, catalogue), worker(redis_url, prefix, catalogue)


def names(client: MCPTestClient) -> list[str]:
    return [tool["name"] for tool in client.list_tools()]


def broadcasts(app: Flask) -> list[str]:
    """The methods sent to every session so far."""
    state = app.extensions["mcp"]
    with app.app_context():
        return [message["method"] for _, message in state.events.after(None, BROADCAST, 0)]


def test_disable_and_enable_hold_in_every_process(
    pair: tuple[Flask, Flask], make_client: t.Callable[..., MCPTestClient]
) -> None:
    a, b = pair
    client_a, client_b = make_client(a), make_client(b)
    client_a.initialize()
    client_b.initialize()
    with a.app_context():
        a.extensions["mcp"].mcp.disable("add")
    assert "add" not in names(client_b)
    error = client_b.error("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
    assert "add" in error["message"]
    assert broadcasts(a) == ["notifications/tools/list_changed"]
    with b.app_context():
        b.extensions["mcp"].mcp.enable("add")
    assert client_a.call_tool("add", {"a": 1, "b": 2})["structuredContent"] == {"result": 3}
    assert "add" in names(client_a) and "add" in names(client_b)


def test_loaders_run_in_every_process_after_a_reload(
    pair: tuple[Flask, Flask], catalogue: str, make_client: t.Callable[..., MCPTestClient]
) -> None:
    a, b = pair
    client_b = make_client(b)
    client_b.initialize()
    assert names(client_b) == ["add", "report_sales"]
    REPORTS[catalogue] = ["sales", "churn"]  # a new row, visible to every process
    with a.app_context():
        a.extensions["mcp"].mcp.reload()
    assert names(client_b) == ["add", "report_sales", "report_churn"]
    assert client_b.call_tool("report_churn")["content"] == [{"type": "text", "text": "report churn"}]
    REPORTS[catalogue] = ["churn"]  # a row deleted: its tool goes with it
    with b.app_context():
        b.extensions["mcp"].mcp.reload()
    assert names(client_b) == ["add", "report_churn"]
    assert set(broadcasts(a)) == {
        "notifications/tools/list_changed",
        "notifications/resources/list_changed",
        "notifications/prompts/list_changed",
    }


def test_requests_without_a_session_catch_up_within_a_second(
    pair: tuple[Flask, Flask], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The REST adapter loads no session: it reads the record at most once a second (here: every time)."""
    a, b = pair
    monkeypatch.setattr(shared_registry_module, "REFRESH_INTERVAL", 0.0)
    http = b.test_client()
    assert http.post("/mcp/rest/tools/add", json={"a": 1, "b": 1}).status_code == 200
    with a.app_context():
        a.extensions["mcp"].mcp.disable("add")
    assert http.post("/mcp/rest/tools/add", json={"a": 1, "b": 1}).status_code == 404


def test_a_one_process_registration_warns_and_announces_nothing(pair: tuple[Flask, Flask]) -> None:
    """Outside a loader, with a store other processes share, a new tool is served here only: say so."""
    a, _ = pair
    server = a.extensions["mcp"].mcp
    with a.app_context(), pytest.warns(RuntimeRegistrationWarning, match="only this process serves it"):
        server.tool(name="local_only")(lambda: "here")
    assert broadcasts(a) == []


def test_one_process_store_announces_registrations(make_app: t.Callable[..., Flask]) -> None:
    """SimpleCache means one process: what it registers at run time is all there is, and is announced."""
    server = MCP(name="single")
    app = make_app(server)
    with app.app_context():
        server.tool(name="late")(lambda: "late")
    assert broadcasts(app) == ["notifications/tools/list_changed"]


def test_disabling_something_unknown_is_an_error(pair: tuple[Flask, Flask]) -> None:
    a, _ = pair
    server = a.extensions["mcp"].mcp
    with a.app_context():
        with pytest.raises(KeyError, match="no tool 'nope'"):
            server.disable("nope")
        with pytest.raises(ValueError, match="kind must be"):
            server.disable("add", kind="widget")  # type: ignore[arg-type]


def test_a_removal_holds_in_every_process_and_in_later_ones(
    pair: tuple[Flask, Flask],
    redis_url: str,
    prefix: str,
    catalogue: str,
    make_client: t.Callable[..., MCPTestClient],
) -> None:
    a, b = pair
    client_b = make_client(b)
    client_b.initialize()
    with a.app_context():
        a.extensions["mcp"].mcp.remove_tool("add")
    assert "add" not in a.extensions["mcp"].mcp.tools
    assert names(client_b) == ["report_sales"]
    assert "add" in client_b.error("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})["message"]
    assert broadcasts(a) == ["notifications/tools/list_changed"]
    # A process started afterwards registers "add" at import time too, and drops it when it catches up.
    client_c = make_client(worker(redis_url, prefix, catalogue))
    client_c.initialize()
    assert names(client_c) == ["report_sales"]


def test_a_removed_loader_component_comes_back_with_a_reload(
    pair: tuple[Flask, Flask], make_client: t.Callable[..., MCPTestClient]
) -> None:
    a, b = pair
    client_b = make_client(b)
    client_b.initialize()
    with b.app_context():
        b.extensions["mcp"].mcp.remove_tool("report_sales")
    assert names(client_b) == ["add"]
    with a.app_context():
        a.extensions["mcp"].mcp.reload()  # the loader still registers it: served again, everywhere
    assert names(client_b) == ["add", "report_sales"]
    client_a = make_client(a)
    client_a.initialize()
    assert names(client_a) == ["add", "report_sales"]
