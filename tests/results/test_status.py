"""Tool results in status form: the schemas, the conversion, and a tool answering that way."""

from __future__ import annotations

import json
import typing as t

import marshmallow as ma
import pytest
from flask import Flask

from flask_mcp import MCP, ToolResult, status_result
from flask_mcp.results.status import ErrorDetailSchema, StatusResultSchema, status_result_to_tool_result


@pytest.mark.parametrize("details", [{"resource_id": "xyz-123"}, "see the log", None])
def test_error_detail_accepts_object_or_string_details(details: t.Any) -> None:
    value = {"error_type": "ResourceNotFound", "error_message": "gone", "error_details": details}
    assert ErrorDetailSchema().load(value) == value


@pytest.mark.parametrize(
    ("value", "fields"),
    [
        ({"error_message": "gone"}, {"error_type"}),
        ({"error_type": "X"}, {"error_message"}),
        ({"error_type": 1, "error_message": ["gone"]}, {"error_type", "error_message"}),
        ({"error_type": "X", "error_message": "gone", "error_details": 42}, {"error_details"}),
        ({"error_type": "X", "error_message": "gone", "error_details": ["a"]}, {"error_details"}),
    ],
)
def test_error_detail_rejects(value: dict[str, t.Any], fields: set[str]) -> None:
    with pytest.raises(ma.ValidationError) as info:
        ErrorDetailSchema().load(value)
    assert set(info.value.messages) == fields


@pytest.mark.parametrize(
    "value",
    [
        {"status": "success", "data": {"file_content": "Hello", "extra": {"deep": [1]}}, "explanation": "Read."},
        {"status": "no_change_needed"},
        {"status": "failure", "error": {"error_type": "FileNotFound", "error_message": "missing"}},
        {"status": "failure", "error": {"error_type": "E", "error_message": "m"}, "explanation": "why", "data": None},
    ],
)
def test_status_result_valid(value: dict[str, t.Any]) -> None:
    assert StatusResultSchema().load(value) == value


@pytest.mark.parametrize(
    ("value", "messages"),
    [
        ({"status": "failure"}, {"error": ["Required when status is a failure."]}),
        (
            {"status": "failure", "error": {"error_type": "E", "error_message": "m"}, "data": {"partial": 1}},
            {"data": ["Must be omitted when status is a failure."]},
        ),
        (
            {"status": "failure", "data": {}},
            {"error": ["Required when status is a failure."], "data": ["Must be omitted when status is a failure."]},
        ),
        ({"data": {}}, {"status": ["Missing data for required field."]}),
        ({"status": "success", "data": [1]}, {"data": ["Not a valid mapping type."]}),
        (
            {"status": "failure", "error": {"error_type": "E"}},
            {"error": {"error_message": ["Missing data for required field."]}},
        ),
    ],
)
def test_status_result_invalid(value: dict[str, t.Any], messages: dict[str, t.Any]) -> None:
    with pytest.raises(ma.ValidationError) as info:
        StatusResultSchema().load(value)
    assert info.value.messages == messages


def test_success_becomes_structured_content_and_explanation(schema_checker: t.Any) -> None:
    data = {"file_content": "Hello", "size": 5}
    result = status_result_to_tool_result({"status": "success", "data": data, "explanation": "Read the file."})
    schema_checker.check("CallToolResult", result)
    assert result["structuredContent"] == data
    assert [json.loads(result["content"][0]["text"]), result["content"][1]["text"]] == [data, "Read the file."]
    assert "isError" not in result


def test_status_without_data_is_told_as_text(schema_checker: t.Any) -> None:
    result = status_result_to_tool_result({"status": "no_change_needed"})
    schema_checker.check("CallToolResult", result)
    assert result == {"content": [{"type": "text", "text": "no_change_needed"}]}


def test_failure_becomes_an_error_result(schema_checker: t.Any) -> None:
    error = {"error_type": "FileNotFound", "error_message": "no file a.txt", "error_details": {"path": "a.txt"}}
    result = status_result_to_tool_result({"status": "failure", "error": error})
    schema_checker.check("CallToolResult", result)
    assert result == {"content": [{"type": "text", "text": "Error executing tool: no file a.txt"}], "isError": True}


def test_conversion_refuses_an_invalid_status_result() -> None:
    with pytest.raises(ma.ValidationError) as info:
        status_result_to_tool_result({"status": "failure", "data": {"x": 1}})
    assert set(info.value.messages) == {"error", "data"}


def test_status_result_is_a_tool_result() -> None:
    value = {"status": "success", "data": {"n": 1}}
    result = status_result(value)
    assert isinstance(result, ToolResult)
    assert result.to_dict() == status_result_to_tool_result(value)


@pytest.fixture
def client(mcp: MCP, make_app: t.Callable[..., Flask], make_client: t.Callable[..., t.Any]) -> t.Any:
    @mcp.tool()
    def rename(path: str) -> ToolResult:
        """Rename a file, reporting the outcome in status form."""
        if path == "missing":
            error = {"error_type": "FileNotFound", "error_message": f"no file {path}"}
            return status_result({"status": "failure", "error": error})
        return status_result({"status": "success", "data": {"path": path + ".bak"}, "explanation": "Renamed."})

    client = make_client(make_app(mcp))
    client.initialize()
    return client


def test_a_tool_can_answer_in_status_form(client: t.Any) -> None:
    done = client.call_tool("rename", {"path": "a.txt"})
    assert done["structuredContent"] == {"path": "a.txt.bak"}
    assert done["content"][1] == {"type": "text", "text": "Renamed."}
    failed = client.call_tool("rename", {"path": "missing"})
    assert failed == {"content": [{"type": "text", "text": "Error executing tool: no file missing"}], "isError": True}
