"""Listen streams as the core sees them: the accepted filter, what a stream wants, and how it is tagged."""

from __future__ import annotations

import typing as t

import pytest

from flask_mcp import MCP
from flask_mcp.core.client import ClientState
from flask_mcp.core.listen import ACKNOWLEDGED, Subscription
from flask_mcp.core.server import Server
from flask_mcp.protocol import jsonrpc
from flask_mcp.protocol.envelope import CLIENT_CAPABILITIES, PROTOCOL_VERSION, SUBSCRIPTION_ID

META = {PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: {}}
EVERYTHING = {
    "toolsListChanged": True,
    "promptsListChanged": True,
    "resourcesListChanged": True,
    "resourceSubscriptions": ["notes://1"],
}


def listen(mcp: MCP, notifications: dict[str, t.Any]) -> dict[str, t.Any]:
    message = jsonrpc.Request("L", "subscriptions/listen", {"notifications": notifications, "_meta": META})
    server = Server(mcp.registry, name="listen", version="1")
    return t.cast(dict[str, t.Any], server.handle(message, ClientState()))


def test_only_what_the_server_can_deliver_is_accepted() -> None:
    """A server with tools alone acknowledges the tools flag alone."""
    mcp = MCP(name="tools only")

    @mcp.tool
    def add(a: int, b: int) -> int:
        return a + b

    assert listen(mcp, EVERYTHING)["result"]["notifications"] == {"toolsListChanged": True}


def test_false_flags_and_repeated_uris_are_dropped() -> None:
    mcp = MCP(name="resources")

    @mcp.resource("notes://{note_id}")
    def note(note_id: str) -> str:
        return note_id

    accepted = listen(mcp, {"resourcesListChanged": False, "resourceSubscriptions": ["notes://1", "notes://1"]})
    assert accepted["result"]["notifications"] == {"resourceSubscriptions": ["notes://1"]}


def test_too_many_uris_are_invalid_params() -> None:
    mcp = MCP(name="resources")

    @mcp.resource("notes://{note_id}")
    def note(note_id: str) -> str:
        return note_id

    error = listen(mcp, {"resourceSubscriptions": [f"notes://{n}" for n in range(101)]})["error"]
    assert error["code"] == jsonrpc.INVALID_PARAMS and "100" in error["message"]


@pytest.mark.parametrize("request_id", ["listen-1", 7])
def test_every_message_carries_the_request_id_with_its_type(request_id: t.Any) -> None:
    subscription = Subscription(request_id, {"toolsListChanged": True, "resourceSubscriptions": ["notes://1"]})
    ack = subscription.acknowledgement()
    assert ack["method"] == ACKNOWLEDGED and ack["params"]["_meta"] == {SUBSCRIPTION_ID: request_id}
    update = {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "notes://1"}}
    assert subscription.tagged(update)["params"] == {"uri": "notes://1", "_meta": {SUBSCRIPTION_ID: request_id}}
    assert subscription.closing() == {
        "jsonrpc": "2.0",
        "id": request_id,
        "result": {"resultType": "complete", "_meta": {SUBSCRIPTION_ID: request_id}},
    }


@pytest.mark.parametrize(
    ("message", "wanted"),
    [
        ({"method": "notifications/tools/list_changed"}, True),
        ({"method": "notifications/prompts/list_changed"}, False),
        ({"method": "notifications/resources/list_changed"}, False),
        ({"method": "notifications/resources/updated", "params": {"uri": "notes://1"}}, True),
        ({"method": "notifications/resources/updated", "params": {"uri": "notes://2"}}, False),
        ({"method": "notifications/message", "params": {"level": "info"}}, False),
    ],
)
def test_a_stream_wants_what_its_filter_names(message: dict[str, t.Any], wanted: bool) -> None:
    subscription = Subscription("L", {"toolsListChanged": True, "resourceSubscriptions": ["notes://1"]})
    assert subscription.wants(message) is wanted
