"""The official SDK's client approving (or not) a tool marked ``confirm``, in both eras."""

from __future__ import annotations

import typing as t

import mcp_types as types
import pytest
from flask import Flask
from mcp.client import ClientRequestContext
from mcp.shared.exceptions import MCPError

from flask_mcp.core.approval import APPROVAL_META
from flask_mcp.core.audit import arguments_digest
from flask_mcp.sdk import connect
from tests.approval_app import delete_note_server

from .conftest import ERAS

pytestmark = [pytest.mark.anyio]
both_eras = pytest.mark.parametrize("mode", ERAS)


@pytest.fixture
def deleted() -> list[int]:
    return []


@pytest.fixture
def app(make_app: t.Callable[..., Flask], deleted: list[int]) -> t.Iterator[Flask]:
    app = make_app(delete_note_server(deleted), MCP_SSE_KEEPALIVE=0.05)
    yield app
    app.extensions["mcp"].server.tasks.runner.shutdown(wait=False)


def answering(action: str, shown: list[types.ElicitRequestParams]) -> t.Any:
    async def elicitation(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        shown.append(params)
        return types.ElicitResult(action=action)  # type: ignore[arg-type]

    return elicitation


@both_eras
async def test_accepting_runs_the_tool_with_the_arguments_shown(app: Flask, mode: str, deleted: list[int]) -> None:
    shown: list[types.ElicitRequestParams] = []
    async with connect(app, mode=mode, elicitation_callback=answering("accept", shown)) as client:
        result = await client.call_tool("delete_note", {"note_id": 7})
    assert result.is_error is False and result.content[0].text == "deleted 7"  # type: ignore[union-attr]
    assert deleted == [7]
    (params,) = shown
    assert params.message.startswith("Delete note 7?") and '"note_id":7' in params.message
    meta = (params.meta or {})[APPROVAL_META]
    assert meta == {"tool": "delete_note", "argumentsDigest": arguments_digest({"note_id": 7})}


@both_eras
async def test_declining_runs_nothing(app: Flask, mode: str, deleted: list[int]) -> None:
    async with connect(app, mode=mode, elicitation_callback=answering("decline", [])) as client:
        result = await client.call_tool("delete_note", {"note_id": 7})
    assert result.is_error is True and "declined" in result.content[0].text  # type: ignore[union-attr]
    assert deleted == []


@both_eras
async def test_a_client_without_elicitation_is_refused(app: Flask, mode: str, deleted: list[int]) -> None:
    async with connect(app, mode=mode) as client:
        with pytest.raises(MCPError) as refused:
            await client.call_tool("delete_note", {"note_id": 7})
    assert "elicitation" in str(refused.value)
    assert deleted == []


@pytest.mark.parametrize("mode", ["2026-07-28"])
async def test_a_replayed_tampered_or_retargeted_request_state_asks_again(
    app: Flask, mode: str, deleted: list[int]
) -> None:
    from flask_mcp.core.approval import APPROVAL_KEY

    accept = {APPROVAL_KEY: types.ElicitResult(action="accept")}
    async with connect(app, mode=mode, elicitation_callback=answering("accept", [])) as client:
        session = client.session
        first = await session.call_tool("delete_note", {"note_id": 7}, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult) and APPROVAL_KEY in (first.input_requests or {})
        state = first.request_state
        # The state answered for other arguments: nothing runs, and these arguments are asked about.
        other = await session.call_tool(
            "delete_note", {"note_id": 8}, input_responses=accept, request_state=state, allow_input_required=True
        )
        assert isinstance(other, types.InputRequiredResult) and deleted == []
        # A state the client altered: asked again.
        tampered = await session.call_tool(
            "delete_note", {"note_id": 7}, input_responses=accept, request_state=(state or "") + "x",
            allow_input_required=True,
        )  # fmt: skip
        assert isinstance(tampered, types.InputRequiredResult) and deleted == []
        done = await session.call_tool(
            "delete_note", {"note_id": 7}, input_responses=accept, request_state=state, allow_input_required=True
        )
        assert isinstance(done, types.CallToolResult) and deleted == [7]
        # The same approval replayed: asked again, nothing runs a second time.
        replayed = await session.call_tool(
            "delete_note", {"note_id": 7}, input_responses=accept, request_state=state, allow_input_required=True
        )
        assert isinstance(replayed, types.InputRequiredResult) and deleted == [7]
