"""structuredContent / outputSchema switches, their conflicts, and output validation."""

from __future__ import annotations

import dataclasses
import typing as t

import marshmallow as ma
import pytest

from flask_mcp import MCP, ToolResult
from flask_mcp.policies.tool import ConfigurationError, ToolDefaults, ToolPolicy


class PointSchema(ma.Schema):
    x = ma.fields.Integer(required=True)
    y = ma.fields.Integer(required=True)


def _register(mcp: MCP, **options: t.Any) -> None:
    @mcp.tool(output_schema=PointSchema, **options)
    def point() -> dict[str, int]:
        return {"x": 1, "y": 2}


def _listed_and_called(mcp: MCP, make_app: t.Any, make_client: t.Any, **config: t.Any) -> tuple[bool, bool]:
    client = make_client(make_app(mcp, **config))
    client.initialize()
    (tool,) = client.list_tools()
    result = client.call_tool("point")
    assert '"x":1' in result["content"][0]["text"].replace(" ", "")  # the text always carries the value
    return "outputSchema" in tool, "structuredContent" in result


@pytest.mark.parametrize(
    ("options", "config", "expected"),
    [
        ({}, {}, (True, True)),
        ({"include_output_schema": False}, {}, (False, True)),
        ({"include_output_schema": False, "include_structured_content": False}, {}, (False, False)),
        ({}, {"MCP_INCLUDE_OUTPUT_SCHEMA": False}, (False, True)),
        ({}, {"MCP_INCLUDE_OUTPUT_SCHEMA": False, "MCP_INCLUDE_STRUCTURED_CONTENT": False}, (False, False)),
        # Per-tool overrides beat the settings, both ways.
        (
            {"include_output_schema": True, "include_structured_content": True},
            {"MCP_INCLUDE_OUTPUT_SCHEMA": False, "MCP_INCLUDE_STRUCTURED_CONTENT": False},
            (True, True),
        ),
        ({"include_structured_content": False, "include_output_schema": False}, {}, (False, False)),
    ],
)
def test_tri_state_switches(
    mcp: MCP,
    make_app: t.Any,
    make_client: t.Any,
    options: dict[str, t.Any],
    config: dict[str, t.Any],
    expected: tuple[bool, bool],
) -> None:
    _register(mcp, **options)
    assert _listed_and_called(mcp, make_app, make_client, **config) == expected


def test_per_tool_conflict_is_refused_at_registration(mcp: MCP) -> None:
    with pytest.raises(ConfigurationError, match="include_output_schema=True with include_structured_content=False"):
        _register(mcp, include_output_schema=True, include_structured_content=False)


def test_setting_conflict_is_refused_at_setup(mcp: MCP, make_app: t.Any) -> None:
    with pytest.raises(ConfigurationError, match="MCP_INCLUDE_OUTPUT_SCHEMA = True with MCP_INCLUDE_STRUCTURED"):
        make_app(mcp, MCP_INCLUDE_STRUCTURED_CONTENT=False)


def test_tool_against_settings_conflict_is_refused_at_setup(mcp: MCP, make_app: t.Any) -> None:
    _register(mcp, include_structured_content=False)  # inherits MCP_INCLUDE_OUTPUT_SCHEMA = True
    with pytest.raises(ConfigurationError, match="'point' sends no structuredContent but would advertise"):
        make_app(mcp)


def test_tool_registered_after_setup_is_checked_then(mcp: MCP, make_app: t.Any) -> None:
    make_app(mcp)
    with pytest.raises(ConfigurationError, match="would advertise its outputSchema"):
        _register(mcp, include_structured_content=False)


def test_tool_without_output_schema_may_drop_structured_content(mcp: MCP, make_app: t.Any, make_client: t.Any) -> None:
    @mcp.tool(include_structured_content=False)
    def plain() -> dict[str, int]:
        return {"a": 1}

    client = make_client(make_app(mcp))
    client.initialize()
    assert "structuredContent" not in client.call_tool("plain")


def test_apps_sharing_an_extension_must_agree(mcp: MCP, make_app: t.Any) -> None:
    make_app(mcp, MCP_OUTPUT_FORMAT="json")
    with pytest.raises(RuntimeError, match="must agree on the tool settings"):
        make_app(mcp, MCP_OUTPUT_FORMAT="auto")


def test_policy_from_options_checks_values() -> None:
    with pytest.raises(ValueError, match="timeout must be a positive number"):
        ToolPolicy.from_options({"timeout": 0}, "t")
    with pytest.raises(ValueError, match="max_result_bytes must be a positive number"):
        ToolPolicy.from_options({"max_result_bytes": True}, "t")
    with pytest.raises(ConfigurationError, match="spilled to a resource carries no structuredContent"):
        ToolPolicy.from_options({"include_output_schema": True, "spill_to_resource": True}, "t")
    resolved = ToolPolicy.from_options({"timeout": 2}, "t").resolve(
        ToolDefaults(timeout=9, max_result_bytes=5), "t", False
    )
    assert (resolved.timeout, resolved.max_result_bytes) == (2, 5)


@dataclasses.dataclass
class Point:
    x: int
    y: int


def test_structured_content_mismatch_is_a_server_error(mcp: MCP, make_app: t.Any, make_client: t.Any) -> None:
    @mcp.tool(output_schema={"x": ma.fields.Integer(required=True), "label": ma.fields.String(required=True)})
    def broken() -> dict[str, t.Any]:
        return {"x": 5}

    @mcp.tool
    def fine() -> Point:
        return Point(1, 2)

    client = make_client(make_app(mcp))
    client.initialize()
    error = client.error("tools/call", {"name": "broken", "arguments": {}})
    assert error["code"] == -32603
    assert error["message"] == (
        "Tool 'broken' returned a value that does not match its output schema: label: Missing data for required field."
    )
    assert error["data"] == {"tool": "broken", "fields": {"label": ["Missing data for required field."]}}
    assert client.call_tool("fine")["structuredContent"] == {"x": 1, "y": 2}


def test_a_result_without_the_advertised_structured_content_is_a_server_error(
    mcp: MCP, make_app: t.Any, make_client: t.Any
) -> None:
    @mcp.tool(output_schema={"x": ma.fields.Integer(required=True)})
    def text_only() -> ToolResult:
        return ToolResult(content=["five"])

    @mcp.tool(output_schema={"x": ma.fields.Integer(required=True)})
    def failing() -> ToolResult:
        return ToolResult(content=["no x today"], is_error=True)

    client = make_client(make_app(mcp))
    client.initialize()
    error = client.error("tools/call", {"name": "text_only", "arguments": {}})
    assert (error["code"], error["message"]) == (
        -32603,
        "Tool 'text_only' advertises an outputSchema but sent no structuredContent",
    )
    assert client.call_tool("failing")["isError"] is True  # a failure owes no structured content
