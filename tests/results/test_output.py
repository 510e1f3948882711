"""One rule for a return value that does not fit the output schema: one error naming the fields."""

from __future__ import annotations

import dataclasses
import logging
import typing as t

import marshmallow as ma
import pytest
from flask import Flask
from pydantic import BaseModel

from flask_mcp import MCP, ToolResult
from flask_mcp.protocol.jsonrpc import INTERNAL_ERROR
from flask_mcp.results.convert import tool_result, tool_value
from flask_mcp.results.output import OutputMismatch, check_structured, dump_output
from flask_mcp.schemas.hints import pydantic_schema
from flask_mcp.testing import MCPTestClient

PREFIX = "Tool 'count' returned a value that does not match its output schema: "


class Part(ma.Schema):
    n = ma.fields.Integer(required=True)


class Counted(ma.Schema):
    count = ma.fields.Integer(required=True)
    label = ma.fields.String()
    part = ma.fields.Nested(Part)
    parts = ma.fields.List(ma.fields.Nested(Part))
    at = ma.fields.DateTime()


class CountedModel(BaseModel):
    count: int
    label: str = ""


@dataclasses.dataclass
class Row:
    count: t.Any


def _mismatch(schema: ma.Schema, value: t.Any) -> OutputMismatch:
    with pytest.raises(OutputMismatch) as info:
        tool_result(value, schema, tool="count")
    assert info.value.code == INTERNAL_ERROR
    assert info.value.data == {"tool": "count", "fields": info.value.messages}
    return info.value


@pytest.mark.parametrize(
    ("value", "messages"),
    [
        # The dump itself fails: the field is found and named.
        ({"count": "abc"}, {"count": ["Not a valid integer."]}),
        (Row("abc"), {"count": ["Not a valid integer."]}),
        ({"count": 1, "at": "yesterday"}, {"at": ["Not a valid datetime."]}),
        ({"count": 1, "part": {"n": "x"}}, {"part": {"n": ["Not a valid integer."]}}),
        ({"count": 1, "parts": [{"n": 1}, {"n": "x"}]}, {"parts": {1: {"n": ["Not a valid integer."]}}}),
        # The dump works but its result breaks the JSON Schema.
        ({"label": "x"}, {"count": ["Missing data for required field."]}),
        ({"count": None}, {"count": ["Field may not be null."]}),
        ({"count": 1, "part": {}}, {"part": {"n": ["Missing data for required field."]}}),
    ],
)
def test_every_mismatch_is_one_error(value: t.Any, messages: dict[t.Any, t.Any]) -> None:
    error = _mismatch(Counted(), value)
    assert error.messages == messages
    assert error.message.startswith(PREFIX)


def test_the_message_names_each_field() -> None:
    error = _mismatch(Counted(), {"count": "abc", "parts": [{"n": "x"}]})
    assert error.message == PREFIX + "count: Not a valid integer.; parts.0.n: Not a valid integer."
    error = _mismatch(Counted(), {"label": 3})
    assert error.message == PREFIX + "count: Missing data for required field."


def test_pydantic_output_schemas_follow_the_same_rule() -> None:
    schema = pydantic_schema(CountedModel)
    assert schema is not None
    error = _mismatch(schema, {"count": "abc"})
    assert error.messages == {"count": ["Input should be a valid integer, unable to parse string as an integer"]}
    # An instance built without validation is checked on what it dumps to.
    error = _mismatch(schema, CountedModel.model_construct(count="abc", label="x"))
    assert error.message == PREFIX + "count: Not a valid integer."
    result = tool_result(CountedModel(count=2), schema, tool="count")
    assert result["structuredContent"] == {"count": 2, "label": ""}


def test_a_tool_result_s_structured_content_is_checked_too() -> None:
    closed = ma.Schema.from_dict({"count": ma.fields.Integer(required=True)})()
    with pytest.raises(OutputMismatch) as info:
        tool_result(ToolResult(["x"], structured_content={"count": 1, "extra": 2}), closed, tool="count")
    assert info.value.messages == {"extra": ["Unknown field."]}
    # An error result carries no structured data to check.
    failed = ToolResult(["no"], structured_content={"x": 1}, is_error=True)
    assert tool_result(failed, closed)["isError"] is True
    check_structured(closed, {"count": 1})


def test_without_a_tool_name_the_message_still_names_the_fields() -> None:
    with pytest.raises(OutputMismatch) as info:
        dump_output(Counted(), {"count": "abc"})
    assert info.value.message.startswith("The tool returned a value that does not match its output schema: count:")
    assert info.value.data == {"fields": {"count": ["Not a valid integer."]}}


def test_a_fitting_value_is_dumped(caplog: pytest.LogCaptureFixture) -> None:
    assert tool_value({"count": 3, "part": {"n": 1}, "extra": 1}, Counted(), tool="count") == {
        "count": 3,
        "part": {"n": 1},
    }
    assert not caplog.records


def test_a_mismatch_is_logged_with_its_cause(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="flask_mcp"), pytest.raises(OutputMismatch):
        tool_value({"count": "abc"}, Counted(), tool="count")
    (record,) = caplog.records
    assert record.getMessage() == PREFIX + "count: Not a valid integer."
    assert record.exc_info is not None and "invalid literal" in str(record.exc_info[1])


def test_tools_call_answers_every_mismatch_with_minus_32603(
    mcp: MCP, make_app: t.Callable[..., Flask], make_client: t.Callable[..., MCPTestClient]
) -> None:
    @mcp.tool(output_schema=Counted)
    def wrong_type() -> dict[str, t.Any]:
        return {"count": "abc"}

    @mcp.tool(output_schema=Counted)
    def missing() -> dict[str, t.Any]:
        return {"label": "x"}

    @mcp.tool(output_schema=CountedModel)
    def model_wrong_type() -> dict[str, t.Any]:
        return {"count": "abc"}

    client = make_client(make_app(mcp))
    client.initialize()
    for name, described in [
        ("wrong_type", "count: Not a valid integer."),
        ("missing", "count: Missing data for required field."),
        ("model_wrong_type", "count: Input should be a valid integer, unable to parse string as an integer"),
    ]:
        error = client.error("tools/call", {"name": name, "arguments": {}})
        assert error["code"] == INTERNAL_ERROR
        assert error["message"].endswith(f"returned a value that does not match its output schema: {described}")
