"""Return values -> tool results, resource contents and prompt messages."""

from __future__ import annotations

import base64
import dataclasses
import json
import typing as t

import pytest
from marshmallow import Schema, fields

from flask_mcp import (
    AudioContent,
    EmbeddedResource,
    ImageContent,
    PromptMessage,
    ResourceLink,
    TextContent,
    ToolResult,
)
from flask_mcp.results.convert import error_result, prompt_messages, resource_contents, tool_result


class Item(Schema):
    id = fields.Integer(required=True)
    name = fields.String(required=True)
    internal = fields.String(load_only=True)


def test_string_is_one_text_block() -> None:
    assert tool_result("hi") == {"content": [{"type": "text", "text": "hi"}]}


def test_dict_is_structured_plus_same_json_text() -> None:
    value = {"a": 1, "b": [True, None]}
    result = tool_result(value)
    assert result["structuredContent"] == value
    assert json.loads(result["content"][0]["text"]) == value
    assert "isError" not in result


@pytest.mark.parametrize("value", [3, 2.5, True, None, [1, "x"], ["a"]])
def test_other_json_values_are_wrapped_in_result(value: t.Any) -> None:
    result = tool_result(value)
    assert result["structuredContent"] == {"result": value}
    assert json.loads(result["content"][0]["text"]) == value


def test_dataclass_is_structured() -> None:
    @dataclasses.dataclass
    class Point:
        x: int
        y: int

    assert tool_result(Point(1, 2))["structuredContent"] == {"x": 1, "y": 2}


def test_output_schema_dumps_the_value() -> None:
    result = tool_result({"id": 1, "name": "n", "internal": "secret", "extra": 1}, Item())
    assert result["structuredContent"] == {"id": 1, "name": "n"}


@pytest.mark.parametrize("value", [float("nan"), {"x": float("inf")}])
def test_non_json_numbers_raise(value: t.Any) -> None:
    with pytest.raises(ValueError):
        tool_result(value)


def test_content_objects_pass_through() -> None:
    image = ImageContent(b"\x89PNG", "image/png", annotations={"audience": ["user"]})
    block = {"type": "image", "data": base64.b64encode(b"\x89PNG").decode(), "mimeType": "image/png"}
    assert tool_result(image) == {"content": [{**block, "annotations": {"audience": ["user"]}}]}
    blocks = [TextContent("a"), AudioContent("QUJD", "audio/wav"), ResourceLink("x://1", "one", mime_type="text/plain")]
    assert [b["type"] for b in tool_result(blocks)["content"]] == ["text", "audio", "resource_link"]
    assert tool_result(blocks)["content"][1]["data"] == "QUJD"


def test_tool_result_gives_full_control() -> None:
    result = ToolResult(
        content=["plain", TextContent("t", meta={"k": 1}), EmbeddedResource("x://r", blob=b"\x00")],
        structured_content={"n": 1},
        is_error=True,
        meta={"trace": "abc"},
    )
    assert tool_result(result) == {
        "content": [
            {"type": "text", "text": "plain"},
            {"type": "text", "text": "t", "_meta": {"k": 1}},
            {"type": "resource", "resource": {"uri": "x://r", "blob": "AA=="}},
        ],
        "structuredContent": {"n": 1},
        "isError": True,
        "_meta": {"trace": "abc"},
    }


def test_error_result_shape() -> None:
    assert error_result("boom") == {
        "content": [{"type": "text", "text": "Error executing tool: boom"}],
        "isError": True,
    }


@pytest.mark.parametrize(
    ("value", "mime", "expected"),
    [
        ("text", None, {"text": "text"}),
        ("text", "text/plain", {"text": "text", "mimeType": "text/plain"}),
        (b"\x00\x01", "application/octet-stream", {"blob": "AAE=", "mimeType": "application/octet-stream"}),
        ({"a": 1}, None, {"text": '{"a":1}', "mimeType": "application/json"}),
        ([1, 2], "application/x-list", {"text": "[1,2]", "mimeType": "application/x-list"}),
    ],
)
def test_resource_contents(value: t.Any, mime: str | None, expected: dict[str, t.Any]) -> None:
    assert resource_contents(value, "x://read", mime) == [{"uri": "x://read", **expected}]


def test_resource_contents_through_schema_and_embedded() -> None:
    assert json.loads(resource_contents({"id": 1, "name": "n", "internal": "s"}, "x://i", None, Item())[0]["text"]) == {
        "id": 1,
        "name": "n",
    }
    embedded = EmbeddedResource("x://other", text="t", mime_type="text/plain")
    assert resource_contents(embedded, "x://i", None) == [{"uri": "x://other", "mimeType": "text/plain", "text": "t"}]


def test_prompt_messages() -> None:
    assert prompt_messages("hello") == [{"role": "user", "content": {"type": "text", "text": "hello"}}]
    messages = prompt_messages(
        [PromptMessage("assistant", "a"), "u", {"role": "assistant", "content": "b"}, ImageContent("QQ==", "image/png")]
    )
    assert [m["role"] for m in messages] == ["assistant", "user", "assistant", "user"]
    assert messages[3]["content"]["type"] == "image"


@pytest.mark.parametrize("bad", [5, [object()], {"role": "system", "content": "x"}])
def test_prompt_messages_reject_other_values(bad: t.Any) -> None:
    with pytest.raises((TypeError, ValueError)):
        prompt_messages(bad)


def test_embedded_resource_needs_exactly_one_body() -> None:
    with pytest.raises(ValueError):
        EmbeddedResource("x://a")
    with pytest.raises(ValueError):
        EmbeddedResource("x://a", text="t", blob=b"b")
