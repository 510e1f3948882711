"""Values that may be null are ``anyOf: [{...}, {"type": "null"}]``, never a type list, wherever a schema comes from.

Gemini's function declarations refuse a ``type`` list; ``anyOf`` with a null
branch is what the official SDK (pydantic) emits and what every client
dialect reads (docs/tools.rst, "Values that may be null").
"""

from __future__ import annotations

import dataclasses
import enum
import typing as t

import jsonschema
import marshmallow as ma
import pydantic
import pytest
from flask import Flask
from marshmallow import fields, validate

from flask_mcp import MCP
from flask_mcp.cli.arguments import parse_arguments
from flask_mcp.schemas.hints import schema_from_signature
from flask_mcp.schemas.json_schema import non_null, portable_nulls, schema_to_json_schema
from flask_mcp.schemas.requested import requested_schema
from flask_mcp.testing import MCPTestClient

NULL = {"type": "null"}


@dataclasses.dataclass
class Greeting:
    text: str | None


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Inner(ma.Schema):
    size = fields.Integer(allow_none=True)


class Everything(ma.Schema):
    text = fields.String(allow_none=True, validate=validate.Length(max=5), metadata={"description": "Some text"})
    choice = fields.String(allow_none=True, validate=validate.OneOf(["x", "y"]))
    color = fields.Enum(Color, by_value=fields.String(), allow_none=True)
    inner = fields.Nested(Inner, allow_none=True)
    numbers = fields.List(fields.Integer(allow_none=True), allow_none=True)
    when = fields.DateTime(allow_none=True, load_default=None)
    price = fields.Decimal(as_string=True, allow_none=True)
    anything = fields.Raw(allow_none=True)


def type_lists(node: t.Any, path: str = "") -> list[str]:
    """Where *node* holds a ``type`` that is a list."""
    if isinstance(node, list):
        return [found for number, item in enumerate(node) for found in type_lists(item, f"{path}/{number}")]
    if not isinstance(node, dict):
        return []
    here = [path or "/"] if isinstance(node.get("type"), list) else []
    return here + [found for key, value in node.items() for found in type_lists(value, f"{path}/{key}")]


@pytest.mark.parametrize("direction", ["input", "output"])
def test_marshmallow_allow_none_fields_have_no_type_list(direction: t.Literal["input", "output"]) -> None:
    schema = schema_to_json_schema(Everything, direction)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert type_lists(schema) == []
    properties = schema["properties"]
    # The constraints go with the non-null branch, the annotations stay beside anyOf.
    assert properties["text"] == {"anyOf": [{"type": "string", "maxLength": 5}, NULL], "description": "Some text"}
    assert properties["choice"] == {"anyOf": [{"type": "string", "enum": ["x", "y"]}, NULL]}
    assert properties["color"] == {"anyOf": [{"type": "string", "enum": ["red", "blue"]}, NULL]}
    assert properties["inner"] == {"anyOf": [{"$ref": "#/$defs/Inner"}, NULL]}
    assert properties["numbers"] == {
        "anyOf": [{"type": "array", "items": {"anyOf": [{"type": "integer"}, NULL]}}, NULL]
    }
    assert schema["$defs"]["Inner"]["properties"]["size"] == {"anyOf": [{"type": "integer"}, NULL]}
    assert properties["anything"] == {}
    price = {"type": "string"} if direction == "output" else {"type": "number"}
    assert properties["price"] == {"anyOf": [price, NULL]}


def test_the_schema_still_takes_null_and_refuses_what_it_did() -> None:
    validator = jsonschema.Draft202012Validator(schema_to_json_schema(Everything))
    nulls = {"text": None, "choice": None, "color": None, "inner": None, "numbers": [None, 1], "when": None}
    assert validator.is_valid(nulls)
    assert validator.is_valid({"text": "abc", "choice": "x", "color": "red", "inner": {"size": None}})
    for wrong in ({"text": "too long"}, {"choice": "z"}, {"color": "green"}, {"numbers": ["1"]}, {"text": 1}):
        assert not validator.is_valid(wrong), wrong


def hinted(
    name: str | None,
    count: t.Optional[int] = None,  # noqa: UP045 - the spelling under test
    tags: list[str] | None = None,
    color: Color | None = None,
    when: t.Union[str, None] = "now",
) -> None:
    """Every way a hint says None is allowed."""


def test_type_hints_with_none() -> None:
    schema = schema_to_json_schema(schema_from_signature(hinted, name="hinted"))
    assert type_lists(schema) == []
    properties = schema["properties"]
    assert properties["name"] == {"anyOf": [{"type": "string"}, NULL]}
    assert properties["count"] == {"anyOf": [{"type": "integer"}, NULL]}
    assert properties["tags"] == {"anyOf": [{"type": "array", "items": {"type": "string"}}, NULL]}
    assert properties["color"] == {"anyOf": [{"type": "string", "enum": ["red", "blue"]}, NULL]}
    assert properties["when"] == {"anyOf": [{"type": "string"}, NULL], "default": "now"}
    assert schema["required"] == ["name"]


def test_the_same_form_as_pydantic_and_the_official_sdk() -> None:
    """What the official Python SDK's MCPServer advertises for ``str | None`` (pydantic's JSON Schema)."""

    class Model(pydantic.BaseModel):
        name: str | None

    from_pydantic = Model.model_json_schema()["properties"]["name"]
    ours = schema_to_json_schema(schema_from_signature(hinted, name="hinted"))["properties"]["name"]
    assert ours["anyOf"] == from_pydantic["anyOf"]


def test_several_types_and_null_become_one_branch_each() -> None:
    rewritten = portable_nulls({"type": ["string", "integer", "null"], "minimum": 1, "title": "Id"})
    assert rewritten == {
        "anyOf": [{"type": "string", "minimum": 1}, {"type": "integer", "minimum": 1}, NULL],
        "title": "Id",
    }


def test_data_and_extensions_are_not_rewritten() -> None:
    node = {
        "type": "object",
        "default": {"type": ["string", "null"]},
        "enum": [{"type": ["a", "null"]}],
        "x-mcp-header": "X-Id",
        "properties": {"type": {"type": ["string", "null"]}},
    }
    rewritten = portable_nulls(node)
    assert rewritten["default"] == {"type": ["string", "null"]}
    assert rewritten["enum"] == [{"type": ["a", "null"]}]
    assert rewritten["properties"]["type"] == {"anyOf": [{"type": "string"}, NULL]}
    assert node["properties"]["type"] == {"type": ["string", "null"]}  # a copy: the given schema is left alone


def test_non_null_finds_the_branch() -> None:
    assert non_null({"anyOf": [{"type": "integer"}, NULL], "default": None}) == {"type": "integer"}
    for unchanged in ({"type": "integer"}, {"anyOf": [{"type": "integer"}, {"type": "string"}]}, None):
        assert non_null(unchanged) == unchanged


def test_cli_arguments_read_the_type_of_a_nullable_property() -> None:
    schema = schema_to_json_schema(schema_from_signature(hinted, name="hinted"))
    assert parse_arguments(["count=3", "name=7"], schema) == {"count": 3, "name": "7"}
    with pytest.raises(ValueError, match="not a valid integer"):
        parse_arguments(["count=three"], schema)


def test_elicitation_forms_have_one_primitive_type() -> None:
    """A form field is never null: one that may be is simply not required."""

    class Form(ma.Schema):
        nickname = fields.String(allow_none=True, load_default=None, metadata={"title": "Nickname"})
        age = fields.Integer(allow_none=True, required=True)

    properties = requested_schema(Form)["properties"]
    assert properties["nickname"] == {"type": "string", "title": "Nickname"}
    assert properties["age"] == {"type": "integer"}


def test_tools_advertise_any_of_and_accept_null(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    """Inputs and outputs over the protocol, from hints and from marshmallow, and null arguments still bind."""

    @mcp.tool
    def greet(name: str | None = None, times: int | None = 1) -> Greeting:
        return Greeting(None if name is None else name * (times or 1))

    class Reply(ma.Schema):
        note = fields.String(allow_none=True, required=True)

    @mcp.tool(input_schema=Everything, output_schema=Reply)
    def echo(**arguments: t.Any) -> dict[str, t.Any]:
        return {"note": arguments.get("text")}

    client = MCPTestClient(make_app(mcp))
    tools = {tool["name"]: tool for tool in client.list_tools()}
    for tool in tools.values():
        assert type_lists(tool["inputSchema"]) == [], tool["name"]
        assert type_lists(tool.get("outputSchema")) == [], tool["name"]
    assert tools["greet"]["inputSchema"]["properties"]["name"] == {"anyOf": [{"type": "string"}, NULL]}
    assert tools["greet"]["outputSchema"]["properties"]["text"] == {"anyOf": [{"type": "string"}, NULL]}
    assert tools["echo"]["outputSchema"]["properties"]["note"] == {"anyOf": [{"type": "string"}, NULL]}

    result = client.call_tool("greet", {"name": None, "times": None})
    assert not result.get("isError") and result["structuredContent"] == {"text": None}
    assert client.call_tool("greet", {"name": "hi", "times": 2})["structuredContent"] == {"text": "hihi"}
    result = client.call_tool("echo", {"text": None, "inner": None, "numbers": [None]})
    assert not result.get("isError") and result["structuredContent"] == {"note": None}
    assert client.call_tool("echo", {"text": 5}).get("isError") is True
