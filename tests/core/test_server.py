"""The protocol core on its own: no Flask app, no HTTP, no session store."""

from __future__ import annotations

import json
import typing as t

import pytest
from marshmallow import Schema, fields

from flask_mcp import ToolError
from flask_mcp.components.build import build_prompt, build_resource, build_tool
from flask_mcp.components.registry import Registry
from flask_mcp.core.client import ClientState
from flask_mcp.core.server import Server
from flask_mcp.protocol import jsonrpc
from flask_mcp.protocol.errors import MASKED_MESSAGE
from flask_mcp.protocol.versions import SUPPORTED_PROTOCOL_VERSIONS


class Pair(Schema):
    a = fields.Integer(required=True, strict=True)
    b = fields.Integer(required=True, strict=True)


def build_server(**options: t.Any) -> Server:
    registry = Registry()

    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    def explode() -> None:
        raise RuntimeError("secret connection string")

    def refuse() -> None:
        raise ToolError("not allowed today")

    async def later(word: str) -> str:
        return word.upper()

    def doc(slug: str) -> str:
        return f"doc {slug}"

    def ask(topic: str, tone: t.Literal["formal", "casual"] = "formal") -> str:
        return f"{tone}: {topic}"

    registry.add_tool(build_tool(add, input_schema=Pair))
    registry.add_tool(build_tool(explode))
    registry.add_tool(build_tool(refuse))
    registry.add_tool(build_tool(later))
    registry.add_resource(
        build_resource(doc, "docs://{slug}", mime_type="text/markdown", completions={"slug": ["intro", "install"]})
    )
    registry.add_prompt(build_prompt(ask))
    return Server(registry, name="core", version="9.9", **options)


def request(server: Server, method: str, params: dict[str, t.Any] | None = None, state: ClientState | None = None):
    message = jsonrpc.Request(id=1, method=method, params=params or {})
    response = server.handle(message, state or ClientState())
    assert response is not None
    return response


@pytest.mark.parametrize("version", SUPPORTED_PROTOCOL_VERSIONS)
def test_initialize_echoes_supported_versions(version: str, schema_checker) -> None:
    state = ClientState()
    response = request(build_server(), "initialize", {"protocolVersion": version, "capabilities": {"roots": {}}}, state)
    schema_checker.check_envelope("initialize", response)
    assert response["result"]["protocolVersion"] == version
    assert state.protocol_version == version and state.capabilities == {"roots": {}} and state.changed


def test_initialize_offers_latest_for_unknown_versions() -> None:
    response = request(build_server(), "initialize", {"protocolVersion": "2000-01-01", "capabilities": {}})
    assert response["result"]["protocolVersion"] == SUPPORTED_PROTOCOL_VERSIONS[0]


def test_initialize_without_version_is_invalid_params() -> None:
    assert request(build_server(), "initialize", {})["error"]["code"] == jsonrpc.INVALID_PARAMS


def test_capabilities_follow_registrations() -> None:
    caps = build_server().capabilities()
    assert set(caps) == {"logging", "tools", "resources", "prompts", "completions"}
    assert set(Server(Registry(), name="n", version="1").capabilities()) == {"logging"}


def test_tool_call_runs_sync_and_async_tools(schema_checker) -> None:
    server = build_server()
    added = request(server, "tools/call", {"name": "add", "arguments": {"a": 20, "b": 22}})
    schema_checker.check_envelope("tools/call", added)
    assert added["result"]["structuredContent"] == {"result": 42}
    upper = request(server, "tools/call", {"name": "later", "arguments": {"word": "abc"}})
    assert upper["result"]["content"] == [{"type": "text", "text": "ABC"}]


def test_validation_errors_name_the_fields() -> None:
    result = request(build_server(), "tools/call", {"name": "add", "arguments": {"a": "x"}})["result"]
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert text.startswith("Error executing tool: ") and "a: " in text and "b: " in text


@pytest.mark.parametrize(("expose", "leaks"), [(False, False), (True, True)])
def test_unexpected_exceptions_are_masked_unless_exposed(expose: bool, leaks: bool) -> None:
    result = request(build_server(expose_errors=expose), "tools/call", {"name": "explode"})["result"]
    text = result["content"][0]["text"]
    assert result["isError"] is True
    assert ("secret connection string" in text) is leaks
    assert (MASKED_MESSAGE in text) is not leaks


def test_tool_errors_are_always_shown() -> None:
    result = request(build_server(), "tools/call", {"name": "refuse"})["result"]
    assert result == {"content": [{"type": "text", "text": "Error executing tool: not allowed today"}], "isError": True}


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"name": "nope"}, "Unknown tool: nope"),
        ({}, "Invalid params: name: Missing data for required field."),
        ({"name": 3}, "Invalid params: name: Not a valid string."),
        ({"name": "add", "arguments": [1]}, "Invalid params: arguments: Not a valid mapping type."),
    ],
)
def test_bad_tool_calls_are_invalid_params(params: dict[str, t.Any], message: str) -> None:
    error = request(build_server(), "tools/call", params)["error"]
    assert (error["code"], error["message"]) == (jsonrpc.INVALID_PARAMS, message)


def test_template_read_and_completion(schema_checker) -> None:
    server = build_server()
    read = request(server, "resources/read", {"uri": "docs://install"})
    schema_checker.check_envelope("resources/read", read)
    assert read["result"]["contents"] == [{"uri": "docs://install", "text": "doc install", "mimeType": "text/markdown"}]
    ref = {"type": "ref/resource", "uri": "docs://{slug}"}
    completion = request(server, "completion/complete", {"ref": ref, "argument": {"name": "slug", "value": "IN"}})
    assert completion["result"]["completion"] == {"values": ["intro", "install"], "total": 2, "hasMore": False}


def test_literal_prompt_arguments_complete_from_their_choices() -> None:
    params = {"ref": {"type": "ref/prompt", "name": "ask"}, "argument": {"name": "tone", "value": "c"}}
    completion = request(build_server(), "completion/complete", params)
    assert completion["result"]["completion"]["values"] == ["casual"]


def test_prompt_get_renders_arguments() -> None:
    result = request(build_server(), "prompts/get", {"name": "ask", "arguments": {"topic": "tea", "tone": "casual"}})[
        "result"
    ]
    assert result["messages"] == [{"role": "user", "content": {"type": "text", "text": "casual: tea"}}]
    error = request(build_server(), "prompts/get", {"name": "ask", "arguments": {}})["error"]
    assert error["code"] == jsonrpc.INVALID_PARAMS and "topic" in error["message"]


def test_set_level_updates_state_and_rejects_unknown_levels() -> None:
    state = ClientState()
    assert request(build_server(), "logging/setLevel", {"level": "warning"}, state)["result"] == {}
    assert state.log_level == "warning" and state.changed
    assert request(build_server(), "logging/setLevel", {"level": "loud"})["error"]["code"] == jsonrpc.INVALID_PARAMS


def test_notifications_and_client_responses_are_never_answered() -> None:
    server = build_server()
    for message in (
        jsonrpc.Notification("notifications/initialized", {}),
        jsonrpc.Notification("notifications/cancelled", {"requestId": 1}),
        jsonrpc.Notification("notifications/unknown", {}),
        jsonrpc.Response(5, {}),
    ):
        assert server.handle(message, ClientState()) is None


@pytest.mark.parametrize("expose", [False, True])
def test_resource_crash_is_internal_error_with_detail_only_when_exposed(expose: bool) -> None:
    server = build_server(expose_errors=expose)

    def broken() -> str:
        raise RuntimeError("disk on fire")

    server.registry.add_resource(
        build_resource(
            broken,
            "x://broken",
        )
    )
    error = request(server, "resources/read", {"uri": "x://broken"})["error"]
    assert (error["code"], error["message"]) == (jsonrpc.INTERNAL_ERROR, "Internal error")
    assert ("disk on fire" in str(error.get("data"))) is expose


def test_client_state_round_trips() -> None:
    state = ClientState("2025-06-18", {"name": "c"}, {"sampling": {}}, "error")
    assert ClientState.from_dict(state.to_dict()) == state
    assert ClientState.from_dict(ClientState().to_dict()) == ClientState()


def test_tool_returning_nan_is_an_error_result_not_a_broken_body() -> None:
    server = build_server()
    server.registry.add_tool(build_tool(lambda: float("nan"), name="nan"))
    result = request(server, "tools/call", {"name": "nan"})["result"]
    assert result["isError"] is True
    assert "cannot be sent as JSON" in result["content"][0]["text"]


def test_serialize_falls_back_to_internal_error_for_the_same_id() -> None:
    server = build_server()
    body = server.serialize(jsonrpc.success(7, {"value": float("inf")}))
    assert json.loads(body) == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": jsonrpc.INTERNAL_ERROR, "message": "Internal error"},
    }
    assert json.loads(server.serialize(jsonrpc.success(8, {"ok": True}))) == {
        "jsonrpc": "2.0",
        "id": 8,
        "result": {"ok": True},
    }


def test_initialize_refuses_oversized_client_state() -> None:
    state = ClientState()
    params = {"protocolVersion": "2025-11-25", "capabilities": {"experimental": {"blob": "x" * 20000}}}
    error = request(build_server(), "initialize", params, state)["error"]
    assert error["code"] == jsonrpc.INVALID_PARAMS and "exceed" in error["message"]
    assert not state.changed


def test_tool_errors_from_resources_keep_their_message() -> None:
    server = build_server()

    def locked() -> str:
        raise ToolError("locked until noon")

    server.registry.add_resource(build_resource(locked, "x://locked"))
    error = request(server, "resources/read", {"uri": "x://locked"})["error"]
    assert error == {"code": jsonrpc.INTERNAL_ERROR, "message": "locked until noon"}


def test_subscriptions_are_capped_by_the_server() -> None:
    """resources/subscribe past max_subscriptions is -32602; unsubscribing makes room; nothing is persisted."""
    server, state = build_server(max_subscriptions=2), ClientState()
    for uri in ("docs://a", "docs://b", "docs://a"):
        assert request(server, "resources/subscribe", {"uri": uri}, state)["result"] == {}
    error = request(server, "resources/subscribe", {"uri": "docs://c"}, state)["error"]
    assert error["code"] == jsonrpc.INVALID_PARAMS and "2 subscriptions" in error["message"]
    assert request(server, "resources/unsubscribe", {"uri": "docs://a"}, state)["result"] == {}
    assert request(server, "resources/subscribe", {"uri": "docs://c"}, state)["result"] == {}
    assert list(t.cast(t.Any, state.subscriptions)) == ["docs://b", "docs://c"]
    assert "s" not in state.to_dict() and not state.changed


#: One byte past the default MCP_MAX_URI_LENGTH (8 KiB).
LONG_URI = "docs://" + "a" * (8192 - len("docs://") + 1)


def uri_requests(uri: str) -> list[tuple[str, dict[str, t.Any], str]]:
    """Every request that names a resource URI: (method, params, the param's name)."""
    return [
        ("resources/read", {"uri": uri}, "uri"),
        ("resources/subscribe", {"uri": uri}, "uri"),
        ("resources/unsubscribe", {"uri": uri}, "uri"),
        (
            "completion/complete",
            {"ref": {"type": "ref/resource", "uri": uri}, "argument": {"name": "slug", "value": ""}},
            "ref.uri",
        ),
    ]


@pytest.mark.parametrize(
    ("method", "params", "name"), uri_requests(LONG_URI), ids=lambda v: v if isinstance(v, str) else ""
)
def test_uris_longer_than_the_limit_are_invalid_params(method: str, params: dict[str, t.Any], name: str) -> None:
    state = ClientState()
    state.subscriptions.add(LONG_URI, None)
    error = request(build_server(), method, params, state)["error"]
    assert error == {"code": -32602, "message": f"Invalid params: {name} is longer than 8192 bytes"}
    assert list(t.cast(t.Any, state.subscriptions)) == [LONG_URI] and not state.changed


@pytest.mark.parametrize(
    ("uri", "allowed"),
    [
        ("docs://" + "€" * 3, True),
        ("docs://" + "€" * 4, False),
        ("docs://" + "a" * 9, True),
        ("docs://" + "a" * 10, False),
    ],
)
def test_the_uri_limit_counts_utf8_bytes(uri: str, allowed: bool) -> None:
    server = build_server(max_uri_length=16)
    for method, params, name in uri_requests(uri):
        refused = {"code": -32602, "message": f"Invalid params: {name} is longer than 16 bytes"}
        assert (request(server, method, params).get("error") == refused) is not allowed, method


def test_a_uri_at_the_limit_is_read_and_one_byte_more_is_not() -> None:
    uri = LONG_URI[:-1]
    assert request(build_server(), "resources/read", {"uri": uri})["result"]["contents"][0]["text"] == f"doc {uri[7:]}"
    assert request(build_server(), "resources/read", {"uri": LONG_URI})["error"]["code"] == -32602


def test_a_long_uri_is_matched_against_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    server = build_server()

    def refuse(uri: str) -> t.NoReturn:
        raise AssertionError("the URI was matched against the templates")

    monkeypatch.setattr(server.registry, "find_resource", refuse)
    assert not server.needs_channel(jsonrpc.Request(id=1, method="resources/read", params={"uri": LONG_URI}))
    assert request(server, "resources/read", {"uri": LONG_URI})["error"]["code"] == -32602
