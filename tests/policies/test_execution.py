"""Per-tool time limits and the transaction hook of atomic tools."""

from __future__ import annotations

import contextlib
import json
import threading
import typing as t

import pytest
from flask import g, request

from flask_mcp import MCP, ToolError
from flask_mcp.policies.execution import ToolTimeout, in_transaction, with_timeout


class FakeSession:
    """The two methods a SQLAlchemy session offers the hook."""

    def __init__(self) -> None:
        self.log: list[str] = []

    def commit(self) -> None:
        self.log.append("commit")

    def rollback(self) -> None:
        self.log.append("rollback")


def test_with_timeout_returns_and_raises() -> None:
    assert with_timeout(5, lambda: 42) == 42
    with pytest.raises(KeyError):
        with_timeout(5, lambda: {}["missing"])


def test_with_timeout_abandons_a_slow_call() -> None:
    release = threading.Event()
    with pytest.raises(ToolTimeout, match=r"did not finish within 0\.05 seconds"):
        with_timeout(0.05, lambda: release.wait(10))
    release.set()


def test_tool_timeout_is_an_error_result(mcp: MCP, make_app: t.Any, make_client: t.Any) -> None:
    release = threading.Event()

    @mcp.tool(timeout=0.05, error_format="json")
    def slow() -> str:
        release.wait(10)
        return "late"

    @mcp.tool
    def quick() -> str:
        return "on time"

    client = make_client(make_app(mcp, MCP_TOOL_TIMEOUT=30))
    client.initialize()
    try:
        error = json.loads(client.call_tool("slow")["content"][0]["text"])["error"]
    finally:
        release.set()
    assert error["type"] == "timeout"
    assert error["message"] == "the tool did not finish within 0.05 seconds and was abandoned"
    assert error["detail"] == {"timeout": 0.05}
    assert client.call_tool("quick")["content"][0]["text"] == "on time"


def test_default_timeout_and_flask_context_in_the_worker(mcp: MCP, make_app: t.Any, make_client: t.Any) -> None:
    @mcp.tool
    def where() -> str:
        g.seen = True
        return f"{request.path} {threading.current_thread().name}"

    client = make_client(make_app(mcp, MCP_TOOL_TIMEOUT=5))
    client.initialize()
    assert client.call_tool("where")["content"][0]["text"] == "/mcp mcp-tool"


def test_in_transaction_with_a_session() -> None:
    session = FakeSession()
    assert in_transaction(session, lambda: 1) == 1
    with pytest.raises(ZeroDivisionError):
        in_transaction(session, lambda: 1 / 0)
    assert session.log == ["commit", "rollback"]


def test_in_transaction_with_a_context_manager_factory() -> None:
    log: list[str] = []

    @contextlib.contextmanager
    def atomic() -> t.Iterator[None]:
        log.append("begin")
        try:
            yield
        except Exception:
            log.append("rollback")
            raise
        log.append("commit")

    in_transaction(atomic, lambda: None)
    with pytest.raises(ValueError):
        in_transaction(atomic, lambda: int("x"))
    assert log == ["begin", "commit", "begin", "rollback"]
    with pytest.raises(TypeError, match="must return a context manager"):
        in_transaction(lambda: 3, lambda: None)


def test_atomic_tools_commit_or_roll_back(make_app: t.Any, make_client: t.Any) -> None:
    session = FakeSession()
    mcp = MCP(transaction=session)

    @mcp.tool(atomic=True)
    def transfer(amount: int) -> str:
        if amount < 0:
            raise ToolError("negative amount")
        return "moved"

    @mcp.tool
    def read() -> str:
        return "read"

    client = make_client(make_app(mcp))
    client.initialize()
    assert client.call_tool("transfer", {"amount": 1})["content"][0]["text"] == "moved"
    assert client.call_tool("transfer", {"amount": -1})["isError"] is True
    assert client.call_tool("transfer", {"amount": "x"})["isError"] is True  # never ran: nothing to roll back
    client.call_tool("read")
    assert session.log == ["commit", "rollback"]


def test_atomic_needs_a_hook(mcp: MCP) -> None:
    with pytest.raises(ValueError, match=r"atomic=True but MCP\(transaction=\.\.\.\) is not set"):

        @mcp.tool(atomic=True)
        def f() -> None: ...
