"""max_result_bytes: oversized results become errors, or resource links with spill_to_resource."""

from __future__ import annotations

import dataclasses
import json
import typing as t

import pytest

from flask_mcp import MCP
from flask_mcp.policies.tool import ConfigurationError
from flask_mcp.results.spill import SPILL_URI_PREFIX, spill_token

BIG = [{"id": n, "text": "x" * 40} for n in range(50)]


def _client(mcp: MCP, make_app: t.Any, make_client: t.Any, **config: t.Any) -> t.Any:
    client = make_client(make_app(mcp, **config))
    client.initialize()
    return client


def test_oversized_result_is_an_error_that_suggests_paging(mcp: MCP, make_app: t.Any, make_client: t.Any) -> None:
    @mcp.tool(max_result_bytes=500, error_format="json")
    def dump() -> list[dict[str, t.Any]]:
        return BIG

    @mcp.tool(max_result_bytes=500)
    def small() -> list[int]:
        return [1, 2]

    client = _client(mcp, make_app, make_client)
    result = client.call_tool("dump")
    assert result["isError"] is True
    error = json.loads(result["content"][0]["text"])["error"]
    assert error["type"] == "service_error"
    assert "over this tool's limit of 500 bytes" in error["message"] and "paging" in error["message"]
    assert error["detail"]["limit"] == 500 and error["detail"]["size"] > 500
    assert client.call_tool("small")["structuredContent"] == {"result": [1, 2]}


def test_server_wide_limit(mcp: MCP, make_app: t.Any, make_client: t.Any) -> None:
    @mcp.tool
    def dump() -> list[dict[str, t.Any]]:
        return BIG

    client = _client(mcp, make_app, make_client, MCP_MAX_RESULT_BYTES=1000)
    assert client.call_tool("dump")["content"][0]["text"].startswith("Error executing tool: the result is ")


@pytest.mark.parametrize("stateless", [False, True])
def test_spill_to_resource(mcp: MCP, make_app: t.Any, make_client: t.Any, stateless: bool) -> None:
    @mcp.tool(max_result_bytes=500, spill_to_resource=True)
    def dump() -> list[dict[str, t.Any]]:
        return BIG

    client = _client(mcp, make_app, make_client, MCP_STATELESS=stateless)
    result = client.call_tool("dump")
    assert "isError" not in result
    notice, link = result["content"]
    assert link["type"] == "resource_link" and link["uri"].startswith(SPILL_URI_PREFIX)
    assert link["mimeType"] == "application/json"
    assert "read it with resources/read" in notice["text"]
    (contents,) = client.read_resource(link["uri"])
    assert json.loads(contents["text"]) == {"result": BIG}
    assert link["size"] == len(contents["text"].encode())


def test_spilled_text_results_keep_their_type(mcp: MCP, make_app: t.Any, make_client: t.Any) -> None:
    @mcp.tool(max_result_bytes=100, spill_to_resource=True)
    def essay() -> str:
        return "word " * 100

    client = _client(mcp, make_app, make_client)
    link = client.call_tool("essay")["content"][1]
    (contents,) = client.read_resource(link["uri"])
    assert (contents["mimeType"], contents["text"]) == ("text/plain", "word " * 100)


def test_spilled_result_belongs_to_its_session(mcp: MCP, make_app: t.Any, make_client: t.Any) -> None:
    @mcp.tool(max_result_bytes=500, spill_to_resource=True)
    def dump() -> list[dict[str, t.Any]]:
        return BIG

    app = make_app(mcp)
    owner, other = make_client(app), make_client(app)
    owner.initialize()
    other.initialize()
    uri = owner.call_tool("dump")["content"][1]["uri"]
    assert other.error("resources/read", {"uri": uri})["code"] == -32002
    assert owner.error("resources/read", {"uri": SPILL_URI_PREFIX + "unknown"})["code"] == -32002


@dataclasses.dataclass
class Row:
    id: int


def test_spill_needs_no_output_schema(mcp: MCP, make_app: t.Any) -> None:
    @mcp.tool(max_result_bytes=10, spill_to_resource=True)
    def rows() -> Row:
        return Row(1)

    with pytest.raises(ConfigurationError, match="spills oversized results to a resource"):
        make_app(mcp)


def test_spill_token() -> None:
    assert spill_token(SPILL_URI_PREFIX + "abc") == "abc"
    assert spill_token(SPILL_URI_PREFIX) is None
    assert spill_token("file:///x") is None


TOKENS = {"ada-token": "ada", "bob-token": "bob"}


def test_modern_spilled_result_belongs_to_its_caller(mcp: MCP, make_app: t.Any, make_client: t.Any) -> None:
    """Without a session, the link is bound to the principal: another caller holding it reads nothing."""

    @mcp.tool(max_result_bytes=500, spill_to_resource=True, permissions=[])
    def dump() -> list[dict[str, t.Any]]:
        return BIG

    app = make_app(mcp, MCP_AUTH_TOKENS=TOKENS)
    ada = make_client(app, era="modern", token="ada-token")
    bob = make_client(app, era="modern", token="bob-token")
    uri = ada.call_tool("dump")["content"][1]["uri"]
    error = bob.error("resources/read", {"uri": uri})
    assert error["code"] == -32602 and error["data"] == {"uri": uri}  # as for a link that never existed
    (contents,) = ada.read_resource(uri)
    assert json.loads(contents["text"]) == {"result": BIG}
    # Nor can another caller of the handshake era read it, or the owner through a session of another principal.
    handshake = make_client(app, token="bob-token")
    handshake.initialize()
    assert handshake.error("resources/read", {"uri": uri})["code"] == -32002


def test_a_session_link_is_not_read_outside_its_session_by_the_same_principal(
    mcp: MCP, make_app: t.Any, make_client: t.Any
) -> None:
    @mcp.tool(max_result_bytes=500, spill_to_resource=True, permissions=[])
    def dump() -> list[dict[str, t.Any]]:
        return BIG

    app = make_app(mcp, MCP_AUTH_TOKENS=TOKENS)
    session = make_client(app, token="ada-token")
    session.initialize()
    uri = session.call_tool("dump")["content"][1]["uri"]
    assert make_client(app, era="modern", token="ada-token").error("resources/read", {"uri": uri})["code"] == -32602
    assert json.loads(session.read_resource(uri)[0]["text"]) == {"result": BIG}
