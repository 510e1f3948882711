"""The request params of every method, checked alike before any handler runs."""

from __future__ import annotations

import typing as t

import pytest
from flask import Flask

from flask_mcp import MCP
from flask_mcp.core.methods import HANDLERS, MODERN_HANDLERS
from flask_mcp.protocol import jsonrpc
from flask_mcp.protocol.params import (
    NOTIFICATION_SCHEMAS,
    PARAMS_SCHEMAS,
    ToolCallSchema,
    validate_notification_params,
    validate_params,
)
from flask_mcp.protocol.versions import LOG_LEVELS

#: One valid params object per method, the smallest the specification allows.
VALID: dict[str, dict[str, t.Any]] = {
    "initialize": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}},
    "ping": {},
    "logging/setLevel": {"level": "info"},
    "tools/list": {},
    "tools/call": {"name": "echo"},
    "resources/list": {},
    "resources/templates/list": {},
    "resources/read": {"uri": "notes://1"},
    "resources/subscribe": {"uri": "notes://1"},
    "resources/unsubscribe": {"uri": "notes://1"},
    "prompts/list": {},
    "prompts/get": {"name": "review"},
    "completion/complete": {"ref": {"type": "ref/prompt", "name": "review"}, "argument": {"name": "a", "value": ""}},
    "server/discover": {},
    "subscriptions/listen": {"notifications": {}},
    "tasks/get": {"taskId": "t1"},
    "tasks/result": {"taskId": "t1"},
    "tasks/list": {},
    "tasks/cancel": {"taskId": "t1"},
    "tasks/update": {"taskId": "t1", "inputResponses": {}},
    "skills/list": {},
    "skills/get": {"uri": "skill://a/SKILL.md"},
    "resources/directory/read": {"uri": "skill://a"},
}

#: (method, params, the fields.* path expected in the messages)
INVALID: list[tuple[str, dict[str, t.Any], tuple[str, ...]]] = [
    ("initialize", {}, ("protocolVersion",)),
    ("initialize", {"protocolVersion": 20251125}, ("protocolVersion",)),
    ("initialize", {"protocolVersion": "2025-11-25", "capabilities": []}, ("capabilities",)),
    ("initialize", {"protocolVersion": "2025-11-25", "clientInfo": {"version": "1"}}, ("clientInfo", "name")),
    (
        "initialize",
        {"protocolVersion": "2025-11-25", "clientInfo": {"name": "c", "version": 1}},
        ("clientInfo", "version"),
    ),
    ("logging/setLevel", {}, ("level",)),
    ("tasks/get", {}, ("taskId",)),
    ("tasks/cancel", {"taskId": 7}, ("taskId",)),
    ("tasks/update", {"taskId": "t1"}, ("inputResponses",)),
    ("logging/setLevel", {"level": "loud"}, ("level",)),
    ("logging/setLevel", {"level": 3}, ("level",)),
    ("tools/list", {"cursor": 7}, ("cursor",)),
    ("resources/list", {"cursor": {}}, ("cursor",)),
    ("resources/templates/list", {"cursor": True}, ("cursor",)),
    ("prompts/list", {"cursor": ["x"]}, ("cursor",)),
    ("tools/call", {}, ("name",)),
    ("tools/call", {"name": None}, ("name",)),
    ("tools/call", {"name": 5}, ("name",)),
    ("tools/call", {"name": "echo", "arguments": [1]}, ("arguments",)),
    ("tools/call", {"name": "echo", "arguments": "a=1"}, ("arguments",)),
    ("resources/read", {}, ("uri",)),
    ("resources/read", {"uri": 1}, ("uri",)),
    ("resources/subscribe", {"uri": None}, ("uri",)),
    ("resources/unsubscribe", {}, ("uri",)),
    ("prompts/get", {}, ("name",)),
    ("prompts/get", {"name": "review", "arguments": ["code"]}, ("arguments",)),
    ("completion/complete", {"argument": {"name": "a", "value": ""}}, ("ref",)),
    ("completion/complete", {**VALID["completion/complete"], "ref": {"type": "ref/tool"}}, ("ref", "type")),
    ("completion/complete", {**VALID["completion/complete"], "ref": {"type": "ref/prompt"}}, ("ref", "name")),
    ("completion/complete", {**VALID["completion/complete"], "ref": {"type": "ref/resource"}}, ("ref", "uri")),
    ("completion/complete", {**VALID["completion/complete"], "ref": "review"}, ("ref",)),
    ("completion/complete", {**VALID["completion/complete"], "argument": {"name": "a"}}, ("argument", "value")),
    ("completion/complete", {**VALID["completion/complete"], "argument": {"value": 1}}, ("argument", "name")),
    ("completion/complete", {**VALID["completion/complete"], "context": {"arguments": []}}, ("context", "arguments")),
    ("tools/call", {"name": "echo", "inputResponses": None}, ("inputResponses",)),
    ("tools/call", {"name": "echo", "inputResponses": [1]}, ("inputResponses",)),
    ("tools/call", {"name": "echo", "requestState": 1}, ("requestState",)),
    ("prompts/get", {"name": "review", "requestState": {}}, ("requestState",)),
    ("resources/read", {"uri": "notes://1", "inputResponses": "yes"}, ("inputResponses",)),
    ("subscriptions/listen", {}, ("notifications",)),
    ("subscriptions/listen", {"notifications": []}, ("notifications",)),
    ("subscriptions/listen", {"notifications": {"toolsListChanged": 1}}, ("notifications", "toolsListChanged")),
    (
        "subscriptions/listen",
        {"notifications": {"resourceSubscriptions": "a://b"}},
        ("notifications", "resourceSubscriptions"),
    ),
]


def invalid_params(method: str, params: dict[str, t.Any]) -> jsonrpc.MCPError:
    with pytest.raises(jsonrpc.MCPError) as info:
        validate_params(method, params)
    return info.value


def dig(messages: t.Any, path: tuple[str, ...]) -> t.Any:
    for key in path:
        messages = messages[key]
    return messages


# -- request params -----------------------------------------------------------------


def test_every_request_method_has_a_schema() -> None:
    assert set(HANDLERS) | set(MODERN_HANDLERS) == set(PARAMS_SCHEMAS)
    assert set(VALID) == set(PARAMS_SCHEMAS)


@pytest.mark.parametrize("method", sorted(VALID))
def test_valid_params_pass_unchanged(method: str) -> None:
    params = VALID[method]
    assert validate_params(method, params) is params


@pytest.mark.parametrize("method", sorted(VALID))
def test_meta_and_unknown_keys_are_allowed_everywhere(method: str) -> None:
    params = {**VALID[method], "_meta": {"progressToken": 3}, "x-vendor": [1, 2]}
    assert validate_params(method, params) is params


@pytest.mark.parametrize("method", sorted(VALID))
def test_meta_must_be_an_object(method: str) -> None:
    error = invalid_params(method, {**VALID[method], "_meta": "token"})
    assert error.data == {"fields": {"_meta": ["Not a valid mapping type."]}}
    assert error.message == "Invalid params: _meta: Not a valid mapping type."


@pytest.mark.parametrize(("method", "params", "path"), INVALID)
def test_invalid_params_name_every_field(method: str, params: dict[str, t.Any], path: tuple[str, ...]) -> None:
    error = invalid_params(method, params)
    assert error.code == jsonrpc.INVALID_PARAMS
    messages = dig(error.data["fields"], path)
    assert isinstance(messages, list) and messages
    # The one-line message names the dotted field path with its marshmallow message.
    assert f"{'.'.join(path)}: {messages[0]}" in error.message
    assert error.message.startswith("Invalid params: ")


def test_all_offending_fields_are_reported_together() -> None:
    error = invalid_params("tools/call", {"name": 1, "arguments": 2, "_meta": 3})
    assert set(error.data["fields"]) == {"name", "arguments", "_meta"}
    assert error.message.count(": ") == 4  # "Invalid params: " plus one per field


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/call", {"name": "echo", "arguments": {"nested": {"free": [1, None]}, "any": "key"}}),
        ("tools/call", {"name": "echo", "arguments": None, "_meta": None}),
        ("tools/list", {"cursor": None}),
        ("prompts/get", {"name": "review", "arguments": {"code": "x", "n": 1}}),
        ("initialize", {"protocolVersion": "2024-11-05", "clientInfo": {"name": "old", "title": "Old", "icons": []}}),
        (
            "completion/complete",
            {**VALID["completion/complete"], "ref": {"type": "ref/resource", "uri": "notes://{id}"}},
        ),
        ("completion/complete", {**VALID["completion/complete"], "context": {"arguments": {"code": "x"}}}),
    ],
)
def test_optional_and_free_form_members(method: str, params: dict[str, t.Any]) -> None:
    assert validate_params(method, params) is params


@pytest.mark.parametrize("level", LOG_LEVELS)
def test_every_rfc5424_level_is_accepted(level: str) -> None:
    assert validate_params("logging/setLevel", {"level": level}) == {"level": level}


def test_methods_without_schema_pass_through() -> None:
    params = {"anything": object()}
    assert validate_params("vendor/extension", params) is params


@pytest.mark.parametrize(
    "params",
    [
        {"name": "echo"},
        {"name": "echo", "arguments": {}},
        {"name": ""},
        {"name": "echo", "arguments": None, "_meta": {}},
        {"name": b"echo"},
        {"name": "echo", "arguments": {"a": 1}, "_meta": []},
        {"name": "echo", "arguments": ()},
        {"name": None},
        {"name": ["echo"]},
        {},
    ],
)
def test_tools_call_fast_path_agrees_with_its_schema(params: dict[str, t.Any]) -> None:
    """tools/call skips marshmallow when it can: the outcome and messages stay the schema's."""
    expected = ToolCallSchema().validate(params)
    if expected:
        assert invalid_params("tools/call", params).data == {"fields": expected}
    else:
        assert validate_params("tools/call", params) is params


# -- notification params ------------------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [
        {"requestId": 1},
        {"requestId": "r-1", "reason": "user pressed stop"},
        {"requestId": "x" * 256, "_meta": {"k": 1}, "later": True},
        {"requestId": -(2**53)},
        {},  # the 2025-11-25 schema leaves requestId out for tasks
    ],
)
def test_valid_cancellations_pass_unchanged(params: dict[str, t.Any]) -> None:
    assert validate_notification_params("notifications/cancelled", params) is params


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"requestId": "x" * 257}, "requestId"),
        ({"requestId": "€" * 86}, "requestId"),
        ({"requestId": 2**53 + 1}, "requestId"),
        ({"requestId": True}, "requestId"),
        ({"requestId": 1.5}, "requestId"),
        ({"requestId": None}, "requestId"),
        ({"requestId": [1]}, "requestId"),
        ({"requestId": 1, "reason": 7}, "reason"),
        ({"requestId": 1, "_meta": "x"}, "_meta"),
    ],
)
def test_invalid_cancellations_name_the_field(params: dict[str, t.Any], field: str) -> None:
    with pytest.raises(jsonrpc.MCPError) as info:
        validate_notification_params("notifications/cancelled", params)
    assert info.value.code == jsonrpc.INVALID_PARAMS
    assert field in info.value.data["fields"]


def test_other_notifications_pass_through() -> None:
    params = {"anything": [1, 2]}
    assert validate_notification_params("notifications/initialized", params) is params
    assert set(NOTIFICATION_SCHEMAS) == {"notifications/cancelled"}


def test_tool_call_schema_keeps_arbitrary_argument_keys() -> None:
    value = {"name": "file_utility.read", "arguments": {"file_path": "/tmp/x", "max_chars": 1024}}
    assert ToolCallSchema().load(value) == value


# -- through a real app ---------------------------------------------------------------


@pytest.fixture
def client(mcp: MCP, make_app: t.Callable[..., Flask], make_client: t.Callable[..., t.Any]) -> t.Any:
    @mcp.tool()
    def echo(text: str) -> str:
        return text

    @mcp.resource("notes://{note_id}")
    def note(note_id: str) -> str:
        return f"note {note_id}"

    @mcp.prompt(completions={"language": ["python", "rust"]})
    def review(code: str, language: str = "python") -> str:
        return f"Review this {language}: {code}"

    client = make_client(make_app(mcp))
    client.initialize()
    return client


@pytest.mark.parametrize(
    ("method", "params", "path"),
    [
        ("tools/call", {"name": 5, "arguments": {}}, ("name",)),
        ("resources/read", {}, ("uri",)),
        ("logging/setLevel", {"level": "loud"}, ("level",)),
        ("prompts/get", {"name": "review", "arguments": "code=x"}, ("arguments",)),
        (
            "completion/complete",
            {"ref": {"type": "ref/nothing"}, "argument": {"name": "a", "value": ""}},
            ("ref", "type"),
        ),
        (
            "completion/complete",
            {"ref": {"type": "ref/prompt"}, "argument": {"name": "a", "value": ""}},
            ("ref", "name"),
        ),
        ("resources/subscribe", {"uri": ["notes://1"]}, ("uri",)),
        ("tools/list", {"cursor": 2}, ("cursor",)),
    ],
)
def test_invalid_params_over_http(client: t.Any, method: str, params: dict[str, t.Any], path: tuple[str, ...]) -> None:
    error = client.error(method, params)
    assert error["code"] == -32602
    messages = dig(error["data"]["fields"], path)
    assert error["message"] == f"Invalid params: {'.'.join(path)}: {' '.join(messages)}"


def test_params_that_are_not_an_object_are_an_invalid_request(client: t.Any) -> None:
    response = client.post({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": ["rename"]})
    assert response.status_code == 400
    assert response.get_json()["error"]["code"] == jsonrpc.INVALID_REQUEST


def test_valid_params_still_reach_the_handlers(client: t.Any) -> None:
    extra = {"_meta": {"progressToken": "p"}, "x-client": True}
    assert client.request("resources/read", {"uri": "notes://7", **extra})["contents"][0]["text"] == "note 7"
    ref = {"type": "ref/prompt", "name": "review"}
    completion = client.request("completion/complete", {"ref": ref, "argument": {"name": "language", "value": "r"}})
    assert completion["completion"]["values"] == ["rust"]
