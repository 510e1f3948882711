"""Direct tool calls (REST, CGI): one value or one reason for failing."""

from __future__ import annotations

import json

import pytest
from marshmallow import Schema, fields

from flask_mcp import NotFoundError, ToolError
from flask_mcp.components.build import build_tool
from flask_mcp.components.registry import Registry
from flask_mcp.core.direct_calls import DirectCallFailed, call_tool_json
from flask_mcp.core.server import Server


class Item(Schema):
    id = fields.Integer(required=True)
    secret = fields.String(load_only=True)


def server(expose: bool = False) -> Server:
    registry = Registry()

    def add(a: int, b: int) -> int:
        return a + b

    def item(id: int) -> dict[str, object]:
        return {"id": id, "secret": "s"}

    def find(key: str) -> str:
        raise NotFoundError(f"no {key}")

    def refuse() -> None:
        raise ToolError("not today")

    def crash() -> None:
        raise RuntimeError("password=x")

    for func in (add, find, refuse, crash):
        registry.add_tool(build_tool(func))
    registry.add_tool(build_tool(item, output_schema=Item))
    registry.add_tool(build_tool(lambda: {"id": "x"}, name="wrong_type", output_schema=Item))
    registry.add_tool(build_tool(lambda: {}, name="missing", output_schema=Item))
    registry.add_tool(build_tool(lambda: float("nan"), name="nan"))
    return Server(registry, name="n", version="1", expose_errors=expose)


def test_success_is_the_encoded_result() -> None:
    assert json.loads(call_tool_json(server(), "add", {"a": 2, "b": 3})) == {"result": 5}
    assert json.loads(call_tool_json(server(), "item", {"id": 4})) == {"result": {"id": 4}}


@pytest.mark.parametrize(
    ("name", "arguments", "reason", "message"),
    [
        ("nope", {}, "unknown_tool", "nope"),
        ("add", {"a": "x"}, "invalid_arguments", "a: Not a valid integer.; b: Missing data for required field."),
        ("find", {"key": "k"}, "not_found", "no k"),
        ("refuse", {}, "tool_error", "not today"),
        ("nan", {}, "tool_error", "the tool returned a value that cannot be sent as JSON"),
        # A value that does not fit the output schema: one message, whatever is wrong with it.
        (
            "wrong_type",
            {},
            "tool_error",
            "Tool 'wrong_type' returned a value that does not match its output schema: id: Not a valid integer.",
        ),
        (
            "missing",
            {},
            "tool_error",
            "Tool 'missing' returned a value that does not match its output schema: "
            "id: Missing data for required field.",
        ),
    ],
)
def test_failures_have_a_reason(name: str, arguments: dict[str, object], reason: str, message: str) -> None:
    with pytest.raises(DirectCallFailed) as info:
        call_tool_json(server(), name, arguments)
    assert info.value.reason == reason and info.value.message.startswith(message)


@pytest.mark.parametrize("expose", [False, True])
def test_unexpected_failures_are_masked_unless_exposed(expose: bool) -> None:
    with pytest.raises(DirectCallFailed) as info:
        call_tool_json(server(expose), "crash", {})
    assert ("password=x" in info.value.message) is expose
