"""The one-pass check of a modern ``tools/call``'s routing headers, against the full check."""

from __future__ import annotations

import typing as t

import pytest

from flask_mcp import MCP
from flask_mcp.protocol.jsonrpc import MCPError
from flask_mcp.transport import routing_headers
from flask_mcp.transport.routing_headers import check_routing_headers, plain_tool_call_headers

MODERN = "2026-07-28"
HEADERS = {"HTTP_MCP_PROTOCOL_VERSION": MODERN, "HTTP_MCP_METHOD": "tools/call", "HTTP_MCP_NAME": "add"}


@pytest.fixture
def mcp() -> MCP:
    mcp = MCP()

    @mcp.tool()
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    @mcp.tool(headers={"region": "Region"})
    def regional(region: str) -> str:
        """An argument that travels in a header too."""
        return region

    return mcp


def full_check_passes(mcp: MCP, environ: dict[str, str], name: str) -> bool:
    params = {"name": name, "arguments": {"a": 1, "b": 2} if name == "add" else {"region": "eu"}}
    try:
        check_routing_headers(environ, "tools/call", params, mcp.registry, MODERN)
    except MCPError:
        return False
    return True


@pytest.mark.parametrize(
    ("changed", "plain"),
    [
        ({}, True),
        ({"HTTP_MCP_NAME": "sub"}, False),
        ({"HTTP_MCP_NAME": None}, False),
        ({"HTTP_MCP_NAME": "=?base64?YWRk?="}, False),  # a sentinel: decoded by the full check
        ({"HTTP_MCP_NAME": " add "}, False),  # padded: stripped by the full check
        ({"HTTP_MCP_METHOD": "tools/list"}, False),
        ({"HTTP_MCP_METHOD": None}, False),
        ({"HTTP_MCP_PROTOCOL_VERSION": "2025-11-25"}, False),
        ({"HTTP_MCP_PROTOCOL_VERSION": None}, False),
    ],
)
def test_only_the_common_headers_pass_in_one_pass_and_those_pass_the_full_check(
    mcp: MCP, changed: dict[str, t.Any], plain: bool
) -> None:
    environ = {key: value for key, value in {**HEADERS, **changed}.items() if value is not None}
    assert plain_tool_call_headers(environ, mcp.registry.tools["add"], "add", MODERN) is plain
    if plain:
        assert full_check_passes(mcp, environ, "add")


def test_a_tool_taking_an_argument_in_a_header_is_left_to_the_full_check(mcp: MCP) -> None:
    environ = {**HEADERS, "HTTP_MCP_NAME": "regional", "HTTP_MCP_PARAM_REGION": "eu"}
    assert not plain_tool_call_headers(environ, mcp.registry.tools["regional"], "regional", MODERN)
    assert full_check_passes(mcp, environ, "regional")


def test_a_name_shaped_like_a_sentinel_is_left_to_the_full_check(mcp: MCP) -> None:
    environ = {**HEADERS, "HTTP_MCP_NAME": "=?odd"}
    assert not plain_tool_call_headers(environ, mcp.registry.tools["add"], "=?odd", MODERN)


def test_the_header_params_of_tools_are_found_once_each_and_kept_within_a_bound(
    mcp: MCP, monkeypatch: pytest.MonkeyPatch
) -> None:
    found: list[t.Any] = []
    monkeypatch.setattr(routing_headers, "_TOOL_HEADERS", {})
    monkeypatch.setattr(routing_headers, "_TOOLS_KEPT", 2)
    original = routing_headers.header_params
    monkeypatch.setattr(routing_headers, "header_params", lambda schema: found.append(schema) or original(schema))
    add, regional = mcp.registry.tools["add"], mcp.registry.tools["regional"]
    assert routing_headers.tool_header_params(add) == [] and routing_headers.tool_header_params(add) == []
    assert [name for _, name, _ in routing_headers.tool_header_params(regional)] == ["Region"]
    assert len(found) == 2
    others = [type("Other", (), {"descriptor": {"inputSchema": {}}})() for _ in range(5)]
    for other in others:
        routing_headers.tool_header_params(other)
        assert len(routing_headers._TOOL_HEADERS) <= 2
