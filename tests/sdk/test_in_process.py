"""The official SDK's ``Client`` against a Flask app in this process (``flask_mcp.sdk.connect``), in both eras."""

from __future__ import annotations

import typing as t

import anyio
import mcp_types as types
import pytest
from flask import Flask
from mcp import Client
from mcp.client import ClientRequestContext
from mcp.shared.exceptions import MCPError

from flask_mcp import Principal
from flask_mcp.sdk import FlaskTransport, connect

from ..conftest import Gates
from .conftest import ERAS, TOKENS, shop

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.parametrize("mode", ERAS),
    pytest.mark.filterwarnings("ignore::flask_mcp.UnprotectedToolWarning"),
]


async def accept(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"ok": True})


async def test_a_tool_is_called_and_listed_with_the_sdks_own_types(app: Flask, mode: str) -> None:
    async with connect(app, mode=mode) as client:
        assert client.protocol_version == ("2025-11-25" if mode == "legacy" else mode)
        if mode == "legacy":  # a pinned modern version skips server/discover, where the server names itself
            assert client.server_info is not None and client.server_info.name == "shop"
        tools = await client.list_tools()
        assert isinstance(tools, types.ListToolsResult)
        assert {"add", "pack", "order"} <= {tool.name for tool in tools.tools}
        result = await client.call_tool("add", {"a": 2, "b": 3})
    assert isinstance(result, types.CallToolResult)
    assert result.structured_content == {"result": 5} and result.is_error is False


async def test_progress_reaches_the_client_while_the_tool_still_runs(app: Flask, mode: str, gates: Gates) -> None:
    """The event stream comes back chunk by chunk: the progress is seen before the tool may end."""
    seen: list[tuple[float, float | None, str | None]] = []
    midway = anyio.Event()

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))
        if done == 2:
            midway.set()

    async def release_midway() -> None:
        with anyio.fail_after(10):
            await midway.wait()
        gates.release.set()  # only once the client has the progress of item 2 does the tool finish

    async with connect(app, mode=mode) as client, anyio.create_task_group() as group:
        group.start_soon(release_midway)
        result = await client.call_tool("pack", {"items": 3}, progress_callback=progress)
    assert result.content[0].text == "packed 3"  # type: ignore[union-attr]
    assert seen == [(1, 3, "item 1"), (2, 3, "item 2"), (3, 3, "item 3")]


async def test_an_elicitation_round_is_answered_by_the_sdks_callback(app: Flask, mode: str) -> None:
    asked: list[str] = []

    async def elicitation(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"ok": True})

    async with connect(app, mode=mode, elicitation_callback=elicitation) as client:
        result = await client.call_tool("order", {"item": "cake"})
    assert result.content[0].text == "ordered cake"  # type: ignore[union-attr]
    assert asked == ["Order cake?"]


async def test_a_resource_template_is_listed_and_read(app: Flask, mode: str) -> None:
    async with connect(app, mode=mode) as client:
        templates = await client.list_resource_templates()
        assert [template.uri_template for template in templates.resource_templates] == ["notes://{note_id}"]
        read = await client.read_resource("notes://42")
    assert isinstance(read, types.ReadResourceResult)
    assert read.contents[0].text == "note 42"  # type: ignore[union-attr]


async def test_a_prompt_is_listed_and_rendered(app: Flask, mode: str) -> None:
    async with connect(app, mode=mode) as client:
        prompts = await client.list_prompts()
        assert [prompt.name for prompt in prompts.prompts] == ["review"]
        prompt = await client.get_prompt("review", {"code": "x = 1"})
    assert prompt.messages[0].content.text == "Review this python:\nx = 1"  # type: ignore[union-attr]


async def test_errors_surface_as_the_sdk_surfaces_them(app: Flask, mode: str) -> None:
    async with connect(app, mode=mode) as client:
        with pytest.raises(MCPError) as unknown:
            await client.call_tool("nope", {})
        assert unknown.value.code == -32602 and "nope" in unknown.value.message
        with pytest.raises(MCPError) as denied:  # a JSON-RPC error of the server's own
            await client.call_tool("notes", {})
        assert denied.value.code == -31403
        # A tool's failure is its error result, which the SDK returns (is_error), not raises.
        refused = await client.call_tool("refuse", {})
        assert refused.is_error is True and "out of stock" in refused.content[0].text  # type: ignore[union-attr]
        bad = await client.call_tool("add", {"a": "two", "b": 3})
        assert bad.is_error is True
        # The client goes on working after each of them.
        assert (await client.call_tool("add", {"a": 1, "b": 1})).structured_content == {"result": 2}


async def test_a_token_and_a_principal_authenticate_the_client(
    make_app: t.Callable[..., Flask], gates: Gates, mode: str
) -> None:
    app = make_app(shop(gates), MCP_AUTH_TOKENS=TOKENS)
    async with connect(app, mode=mode, token="ada-token") as ada:
        assert (await ada.call_tool("notes", {})).content[0].text == "notes of ada"  # type: ignore[union-attr]
    async with connect(app, mode=mode, principal=Principal("bob", scopes={"notes:read"})) as bob:
        assert (await bob.call_tool("notes", {})).content[0].text == "notes of bob"  # type: ignore[union-attr]
    async with connect(app, mode=mode, token="eve-token") as eve:
        with pytest.raises(MCPError) as denied:
            await eve.call_tool("notes", {})
    assert denied.value.code == -31403


async def test_a_client_without_a_credential_is_refused(
    make_app: t.Callable[..., Flask], gates: Gates, mode: str
) -> None:
    app = make_app(shop(gates), MCP_AUTH_TOKENS=TOKENS)
    unauthorized = pytest.RaisesExc(MCPError, match="Unauthorized: this server requires authentication")
    # The SDK raises it from its connection's task groups.
    with pytest.RaisesGroup(unauthorized, flatten_subgroups=True):
        async with connect(app, mode=mode) as client:
            await client.call_tool("add", {"a": 1, "b": 1})


async def test_cancelling_a_call_reaches_the_tool(app: Flask, mode: str, gates: Gates) -> None:
    """The caller's cancel scope ends the call; the app sees it (a closed stream, or a cancellation)."""
    started = anyio.Event()

    async def progress(done: float, total: float | None, message: str | None) -> None:
        started.set()

    async with connect(app, mode=mode) as client:
        async with anyio.create_task_group() as group:

            async def call() -> None:
                await client.call_tool("watch", {}, progress_callback=progress)

            group.start_soon(call)
            with anyio.fail_after(10):
                await started.wait()
            group.cancel_scope.cancel()
        assert await anyio.to_thread.run_sync(gates.saw_cancel.wait, 10)
        # The connection is still good for the next call.
        assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content == {"result": 3}


async def test_the_transport_is_the_sdks_own_and_opens_once(app: Flask, mode: str) -> None:
    transport = FlaskTransport(app)
    assert transport.url == "http://localhost/mcp"
    async with Client(transport, mode=mode) as client:
        assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content == {"result": 3}
        with pytest.raises(RuntimeError, match="already open"):
            await transport.__aenter__()
    # Closed, it opens again, for another client.
    async with Client(transport, mode=mode) as again:
        assert (await again.list_tools()).tools


async def test_the_endpoint_is_found_where_the_app_serves_it(
    make_app: t.Callable[..., Flask], gates: Gates, mode: str
) -> None:
    app = make_app(shop(gates), MCP_URL_PREFIX="/api/mcp", SERVER_NAME="shop.test")
    transport = FlaskTransport(app)
    assert transport.url == "http://shop.test/api/mcp"
    async with Client(transport, mode=mode) as client:
        assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content == {"result": 3}
