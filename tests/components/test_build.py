"""Decorated functions -> components."""

from __future__ import annotations

import dataclasses
import typing as t

import marshmallow as ma
import pytest

from flask_mcp import ImageContent, ToolResult
from flask_mcp.components.build import build_prompt, build_resource, build_tool
from flask_mcp.components.model import ResourceTemplate


class Result(ma.Schema):
    total = ma.fields.Integer()
    secret = ma.fields.String(load_only=True)


@dataclasses.dataclass
class Point:
    x: int
    y: int


@pytest.mark.parametrize("name", ["a", "tool.v2", "read-file", "A_b-C.d", "x" * 128])
def test_valid_tool_names(name: str) -> None:
    """SEP-986 names; a lambda needs an explicit one (``<lambda>`` is not valid)."""
    assert build_tool(lambda: None, name=name).name == name


def test_tool_defaults_come_from_the_function() -> None:
    def lookup(key: str) -> str:
        """Find a key."""
        return key

    tool = build_tool(lookup)
    assert (tool.name, tool.description) == ("lookup", "Find a key.")
    assert tool.descriptor["inputSchema"]["required"] == ["key"]
    assert "outputSchema" not in tool.descriptor


@pytest.mark.parametrize(
    ("returns", "properties"),
    [(Result, {"total"}), (Point, {"x", "y"}), (ImageContent, None), (ToolResult, None), (dict, None), (int, None)],
)
def test_output_schema_from_the_return_annotation(returns: type, properties: set[str] | None) -> None:
    def func() -> None:
        """Returns something."""

    func.__annotations__["return"] = returns
    descriptor = build_tool(func).descriptor
    if properties is None:
        assert "outputSchema" not in descriptor
    else:
        assert set(descriptor["outputSchema"]["properties"]) == properties


def test_explicit_schemas_accept_classes_instances_and_dicts() -> None:
    as_dict = build_tool(
        lambda n: n, name="n", input_schema={"n": ma.fields.Integer(required=True)}, output_schema=Result()
    )
    assert as_dict.descriptor["inputSchema"]["properties"] == {"n": {"type": "integer"}}
    assert set(as_dict.descriptor["outputSchema"]["properties"]) == {"total"}
    with pytest.raises(TypeError, match="marshmallow Schema"):
        build_tool(lambda: None, name="bad", input_schema=42)  # type: ignore[arg-type]


def test_descriptor_members() -> None:
    tool = build_tool(
        lambda: None,
        name="t",
        title="T",
        description="D",
        annotations={"readOnlyHint": True},
        icons=["https://x/i.png", {"src": "https://x/j.svg", "mimeType": "image/svg+xml"}],
        meta={"k": 1},
    )
    assert tool.descriptor == {
        "name": "t",
        "title": "T",
        "description": "D",
        "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False},
        "annotations": {"readOnlyHint": True},
        "icons": [{"src": "https://x/i.png"}, {"src": "https://x/j.svg", "mimeType": "image/svg+xml"}],
        "_meta": {"k": 1},
    }


def test_templates_convert_variables_by_hints() -> None:
    def item(item_id: int, **extra: str) -> str:
        return str(item_id)

    template = build_resource(item, "items://{item_id}/{part}")
    assert isinstance(template, ResourceTemplate)
    assert template.load_variables({"item_id": "7", "part": "body"}) == {"item_id": 7, "part": "body"}
    with pytest.raises(ma.ValidationError):
        template.load_variables({"item_id": "seven", "part": "body"})


def test_completions_must_name_known_arguments() -> None:
    def ask(topic: str) -> str:
        return topic

    with pytest.raises(ValueError, match="unknown argument"):
        build_prompt(ask, completions={"topik": ["a"]})
    with pytest.raises(ValueError, match="no variables"):
        build_resource(lambda: "", "x://static", completions={"a": ["b"]})


def test_prompt_arguments_descriptor() -> None:
    def ask(topic: t.Annotated[str, "What to ask about"], tone: str = "plain") -> str:
        return topic

    assert build_prompt(ask).descriptor["arguments"] == [
        {"name": "topic", "description": "What to ask about", "required": True},
        {"name": "tone", "required": False},
    ]
