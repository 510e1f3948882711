"""blinker signals: tool_called, resource_read, prompt_got with their timing; session_started and session_ended."""

from __future__ import annotations

import typing as t

import pytest
from flask import Flask

from flask_mcp import MCP, ToolError
from flask_mcp.signals import prompt_got, resource_read, session_ended, session_started, tool_called
from flask_mcp.testing import MCPTestClient


def build() -> MCP:
    mcp = MCP(name="signalled", version="1.0.0")

    @mcp.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @mcp.tool()
    def refuse() -> str:
        """Fail."""
        raise ToolError("no")

    @mcp.resource("notes://{slug}")
    def note(slug: str) -> str:
        """A note."""
        return f"note {slug}"

    @mcp.prompt()
    def review(topic: str) -> str:
        """Review a topic."""
        return f"Review {topic}."

    return mcp


class Recorder:
    """A receiver that keeps what each signal sent."""

    def __init__(self) -> None:
        self.sent: list[tuple[t.Any, dict[str, t.Any]]] = []

    def __call__(self, sender: t.Any, **kwargs: t.Any) -> None:
        self.sent.append((sender, kwargs))


@pytest.fixture
def app(make_app: t.Callable[..., Flask]) -> Flask:
    return make_app(build(), SECRET_KEY="signals")


@pytest.mark.parametrize("era", ["handshake", "modern"])
def test_call_signals_carry_the_call_and_its_timing(
    app: Flask, make_client: t.Callable[..., MCPTestClient], era: str
) -> None:
    recorder = Recorder()
    client = make_client(app, era=era)
    if era == "handshake":
        client.initialize()
    with tool_called.connected_to(recorder), resource_read.connected_to(recorder), prompt_got.connected_to(recorder):
        client.call_tool("add", {"a": 2, "b": 3})
        assert client.call_tool("refuse")["isError"] is True
        client.read_resource("notes://x")
        client.get_prompt("review", {"topic": "t"})
    senders = {id(sender) for sender, _ in recorder.sent}
    assert senders == {id(app)}
    added, refused, read, got = (kwargs for _, kwargs in recorder.sent)
    assert {k: added[k] for k in ("method", "name", "arguments", "result", "error", "principal", "era")} == {
        "method": "tools/call",
        "name": "add",
        "arguments": {"a": 2, "b": 3},
        "result": 5,
        "error": None,
        "principal": None,
        "era": era,
    }
    assert added["component"] is app.extensions["mcp"].mcp.tools["add"]
    assert refused["result"] is None and isinstance(refused["error"], ToolError)
    assert (read["method"], read["name"], read["arguments"], read["result"]) == (
        "resources/read",
        "notes://x",
        {"slug": "x"},
        "note x",
    )
    assert (got["method"], got["name"], got["result"]) == ("prompts/get", "review", "Review t.")
    for _, kwargs in recorder.sent:
        assert isinstance(kwargs["duration"], float) and kwargs["duration"] >= 0


def test_duration_spans_the_hooks_and_the_handler(
    app: Flask, make_client: t.Callable[..., MCPTestClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The duration is measured with time.perf_counter around the hooks and the handler."""
    ticks = iter([10.0, 10.25])
    monkeypatch.setattr("flask_mcp.core.hooks.time.perf_counter", lambda: next(ticks))
    recorder = Recorder()
    with tool_called.connected_to(recorder, sender=app):
        client = make_client(app)
        client.initialize()
        client.call_tool("add", {"a": 1, "b": 1})
    assert [kwargs["duration"] for _, kwargs in recorder.sent] == [0.25]


def test_the_signal_sees_the_result_after_the_hooks(app: Flask, make_client: t.Callable[..., MCPTestClient]) -> None:
    mcp = app.extensions["mcp"].mcp
    mcp.after_call(lambda info, result: result * 10 if info.name == "add" else None)
    recorder = Recorder()
    with tool_called.connected_to(recorder):
        client = make_client(app)
        client.initialize()
        assert client.call_tool("add", {"a": 1, "b": 1})["content"][0]["text"] == "20"
    assert recorder.sent[0][1]["result"] == 20


def test_rest_calls_send_the_signal(app: Flask) -> None:
    recorder = Recorder()
    with tool_called.connected_to(recorder):
        response = app.test_client().post("/mcp/rest/tools/add", json={"a": 4, "b": 5})
    assert response.get_json() == {"result": 9}
    assert [(sender, kwargs["result"]) for sender, kwargs in recorder.sent] == [(app, 9)]


def test_no_receiver_no_hook_no_run(
    app: Flask, make_client: t.Callable[..., MCPTestClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without receivers or hooks the call never enters Hooks.run (the hot path stays as it was)."""
    hooks = app.extensions["mcp"].server.hooks
    assert not hooks.engaged(tool_called)
    entered: list[tuple[t.Any, ...]] = []
    original = hooks.run

    def run(*args: t.Any) -> t.Any:
        entered.append(args)
        return original(*args)

    monkeypatch.setattr(hooks, "run", run)
    client = make_client(app)
    client.initialize()
    assert client.call_tool("add", {"a": 1, "b": 2})["content"][0]["text"] == "3"
    assert entered == []


def test_session_signals(make_app: t.Callable[..., Flask], make_client: t.Callable[..., MCPTestClient]) -> None:
    app = make_app(build(), MCP_SESSION_MAX_AGE=100)
    clock = [5000.0]
    app.extensions["mcp"].sessions.clock = lambda: clock[0]
    started, ended = Recorder(), Recorder()
    with session_started.connected_to(started), session_ended.connected_to(ended):
        first = make_client(app)
        first.initialize()
        assert [(s, k["session_id"], k["principal"]) for s, k in started.sent] == [(app, first.session_id, None)]
        assert "name" in started.sent[0][1]["client_info"]
        response = first.post({"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert response.status_code == 200
        assert app.test_client().delete("/mcp", headers={"Mcp-Session-Id": first.session_id}).status_code == 204
        second = make_client(app)
        second.initialize()
        clock[0] += 101
        assert second.post({"jsonrpc": "2.0", "id": 2, "method": "ping"}).status_code == 404
        assert second.post({"jsonrpc": "2.0", "id": 3, "method": "ping"}).status_code == 404
    assert [(s, k["session_id"], k["reason"]) for s, k in ended.sent] == [
        (app, first.session_id, "deleted"),
        (app, second.session_id, "expired"),
    ]
