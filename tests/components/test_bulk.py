"""Bulk registration with ToolDefinition and shared defaults."""

from __future__ import annotations

import typing as t

import marshmallow as ma
import pytest

from flask_mcp import MCP, ToolDefinition


class ItemSchema(ma.Schema):
    id = ma.fields.Integer()


def create(title: str) -> str:
    return title


def delete(id: int) -> str:
    return str(id)


def items() -> list[dict[str, int]]:
    return [{"id": 1}, {"id": 2}]


def test_definitions_with_defaults(mcp: MCP) -> None:
    mcp.register_tools(
        [
            ToolDefinition.tool(create, name="items.create"),
            ToolDefinition.tool(delete, name="items.delete", error_format="text", timeout=None),
            ToolDefinition.list(items, name="items.list"),
        ],
        defaults={"error_format": "json", "timeout": 10, "annotations": None},
        list_defaults={"item_schema": ItemSchema, "paginate": True},
    )
    tools = mcp.tools
    assert list(tools) == ["items.create", "items.delete", "items.list"]
    assert tools["items.create"].policy.error_format == "json"
    assert tools["items.delete"].policy.error_format == "text"  # the definition wins
    assert tools["items.delete"].policy.timeout == 10  # None is "no override"
    assert tools["items.create"].annotations is None
    assert set(tools["items.list"].descriptor["outputSchema"]["properties"]) == {
        "items",
        "page",
        "totalPages",
        "hasNext",
    }


def test_every_check_of_a_single_registration_applies(mcp: MCP) -> None:
    with pytest.raises(ValueError, match="registering tool 'bad name': invalid tool name"):
        mcp.register_tools([ToolDefinition.tool(create, name="bad name")])
    with pytest.raises(TypeError, match="registering tool 'create': unexpected keyword argument\\(s\\): colour"):
        mcp.register_tools([ToolDefinition.tool(create)], defaults={"colour": "red"})
    with pytest.raises(ValueError, match="already registered"):
        mcp.register_tools([ToolDefinition.tool(create), ToolDefinition.tool(create)])


def test_registered_tools_are_served(mcp: MCP, make_app: t.Any, make_client: t.Any) -> None:
    mcp.register_tools(
        [ToolDefinition.retrieve(lambda: None, name="nothing", item_schema=ItemSchema)],
        retrieve_defaults={"allow_none": True},
    )
    client = make_client(make_app(mcp))
    client.initialize()
    assert client.call_tool("nothing")["structuredContent"] == {"result": None}
