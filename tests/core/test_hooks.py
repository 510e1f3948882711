"""before_call, after_call and on_error: order, short-circuit, changed arguments and results, recovery, both eras."""

from __future__ import annotations

import io
import json
import typing as t

import pytest
from flask import Flask

from flask_mcp import MCP, CallInfo, Context, ToolError
from flask_mcp.testing import MCPTestClient
from flask_mcp.transport.stdio import serve_stdio

ERAS = ["handshake", "modern"]
NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}}


def build() -> MCP:
    mcp = MCP(name="hooked", version="1.0.0")

    @mcp.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @mcp.tool()
    def boom() -> str:
        """Fail."""
        raise ValueError("kaput")

    @mcp.tool()
    def greet(ctx: Context) -> str:
        """Ask for a name."""
        answer = ctx.elicit("Name?", NAME_FORM, key="name")
        return f"Hello, {(answer.content or {}).get('name')}!"

    @mcp.resource("notes://{slug}")
    def note(slug: str) -> str:
        """A note."""
        return f"note {slug}"

    @mcp.prompt()
    def review(topic: str) -> str:
        """Review a topic."""
        return f"Review {topic}."

    return mcp


@pytest.fixture
def mcp() -> MCP:
    return build()


@pytest.fixture
def client_for(
    make_app: t.Callable[..., Flask], make_client: t.Callable[..., MCPTestClient]
) -> t.Callable[[MCP, str], MCPTestClient]:
    def factory(extension: MCP, era: str) -> MCPTestClient:
        client = make_client(make_app(extension, SECRET_KEY="hooks"), era=era, capabilities={"elicitation": {}})
        if era == "handshake":
            client.initialize()
        return client

    return factory


def text(result: dict[str, t.Any]) -> str:
    return t.cast(str, result["content"][0]["text"])


@pytest.mark.parametrize("era", ERAS)
def test_order_and_what_the_hooks_see(mcp: MCP, client_for: t.Callable[..., MCPTestClient], era: str) -> None:
    """before_call in registration order, after_call in reverse, each seeing the method, component and arguments."""
    seen: list[tuple[str, t.Any]] = []

    @mcp.before_call
    def first(info: CallInfo) -> None:
        seen.append(("before 1", (info.method, info.kind, info.name, info.component.name, info.arguments, info.era)))

    @mcp.before_call
    def second(info: CallInfo) -> None:
        seen.append(("before 2", None))

    @mcp.after_call
    def third(info: CallInfo, result: t.Any) -> None:
        seen.append(("after 1", result))

    @mcp.after_call
    def fourth(info: CallInfo, result: t.Any) -> None:
        seen.append(("after 2", result))

    assert text(client_for(mcp, era).call_tool("add", {"a": 2, "b": 3})) == "5"
    assert seen == [
        ("before 1", ("tools/call", "tool", "add", "add", {"a": 2, "b": 3}, era)),
        ("before 2", None),
        ("after 2", 5),
        ("after 1", 5),
    ]


@pytest.mark.parametrize("era", ERAS)
def test_short_circuit_change_arguments_and_result(
    mcp: MCP, client_for: t.Callable[..., MCPTestClient], era: str
) -> None:
    called: list[str] = []

    @mcp.before_call
    def cached(info: CallInfo) -> t.Any:
        if info.name == "add" and info.arguments == {"a": 0, "b": 0}:
            return 42  # converted like the tool's own return value
        if info.name == "add":
            info.arguments["b"] = info.arguments["b"] * 10
        return None

    @mcp.before_call
    def never_after_a_short_circuit(info: CallInfo) -> None:
        called.append(info.name)

    @mcp.after_call
    def louder(info: CallInfo, result: t.Any) -> t.Any:
        return result.upper() if info.kind == "prompt" or info.kind == "resource" else None

    client = client_for(mcp, era)
    assert text(client.call_tool("add", {"a": 0, "b": 0})) == "42"
    assert called == []
    assert text(client.call_tool("add", {"a": 1, "b": 2})) == "21"
    assert client.read_resource("notes://x")[0]["text"] == "NOTE X"
    assert client.get_prompt("review", {"topic": "tests"})["messages"][0]["content"]["text"] == "REVIEW TESTS."
    assert called == ["add", "notes://x", "review"]


@pytest.mark.parametrize("era", ERAS)
def test_errors_recover_or_go_on(mcp: MCP, client_for: t.Callable[..., MCPTestClient], era: str) -> None:
    """on_error sees the tool's exception and a before_call's; None lets it through, a value recovers."""
    errors: list[str] = []

    @mcp.before_call
    def guard(info: CallInfo) -> None:
        if info.arguments.get("a") == 13:
            raise ToolError("unlucky")

    @mcp.on_error
    def log(info: CallInfo, exc: Exception) -> None:
        errors.append(f"{info.name}: {exc}")

    @mcp.on_error
    def fallback(info: CallInfo, exc: Exception) -> t.Any:
        return "recovered" if isinstance(exc, ValueError) else None

    @mcp.after_call
    def seen_after(info: CallInfo, result: t.Any) -> t.Any:
        return f"{result}!" if result == "recovered" else None

    client = client_for(mcp, era)
    assert text(client.call_tool("boom")) == "recovered!"
    failed = client.call_tool("add", {"a": 13, "b": 1})
    assert failed["isError"] is True and "unlucky" in text(failed)
    assert errors == ["boom: kaput", "add: unlucky"]


def test_invalid_arguments_are_refused_before_any_hook(mcp: MCP, client_for: t.Callable[..., MCPTestClient]) -> None:
    seen: list[str] = []
    mcp.before_call(lambda info: seen.append(info.name))
    result = client_for(mcp, "handshake").call_tool("add", {"a": "x", "b": 1})
    assert result["isError"] is True and seen == []


def test_an_input_round_is_not_an_error(mcp: MCP, client_for: t.Callable[..., MCPTestClient]) -> None:
    """A modern round that asks the client ends the run without after_call or on_error; the retry runs them all."""
    seen: list[str] = []
    mcp.before_call(lambda info: seen.append("before"))
    mcp.after_call(lambda info, result: seen.append(f"after {result}"))
    mcp.on_error(lambda info, exc: seen.append(f"error {exc!r}"))
    client = client_for(mcp, "modern")
    asked = client.call_tool("greet")
    assert asked["resultType"] == "input_required" and seen == ["before"]
    done = client.call_tool("greet", answers={"name": {"action": "accept", "content": {"name": "Ada"}}})
    assert text(done) == "Hello, Ada!"
    assert seen == ["before", "before", "before", "after Hello, Ada!"]


def test_resource_and_prompt_errors_go_through_on_error(mcp: MCP, client_for: t.Callable[..., MCPTestClient]) -> None:
    @mcp.before_call
    def refuse(info: CallInfo) -> None:
        if info.kind != "tool":
            raise ToolError(f"no {info.kind}s today")

    client = client_for(mcp, "handshake")
    assert "no resources today" in client.error("resources/read", {"uri": "notes://x"})["message"]
    mcp.on_error(lambda info, exc: f"{info.kind} anyway")
    assert client.read_resource("notes://x")[0]["text"] == "resource anyway"
    assert client.get_prompt("review", {"topic": "t"})["messages"][0]["content"]["text"] == "prompt anyway"


def test_the_rest_adapter_runs_the_hooks(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    eras: list[str] = []

    @mcp.after_call
    def double(info: CallInfo, result: t.Any) -> t.Any:
        eras.append(info.era)
        return result * 2

    response = make_app(mcp).test_client().post("/mcp/rest/tools/add", json={"a": 1, "b": 2})
    assert response.get_json() == {"result": 6} and eras == ["handshake"]


def test_the_stdio_surface_runs_the_hooks(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    mcp.before_call(lambda info: info.arguments.update(a=100))
    app = make_app(mcp)
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}},
        },
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}},
    ]
    stdout = io.BytesIO()
    serve_stdio(app, io.BytesIO(b"".join(json.dumps(line).encode() + b"\n" for line in lines)), stdout)
    answer = json.loads(stdout.getvalue().splitlines()[1])
    assert answer["result"]["content"][0]["text"] == "102"
