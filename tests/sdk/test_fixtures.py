"""The ``mcp_sdk_client`` fixture: the SDK's ``Client`` for the ``app`` fixture, in the mode ``mcp_sdk_mode`` names."""

from __future__ import annotations

import typing as t

import pytest
from flask import Flask
from mcp import Client

from flask_mcp import Principal

from ..conftest import Gates
from .conftest import TOKENS, shop

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::flask_mcp.UnprotectedToolWarning")]


async def test_the_fixture_is_the_sdks_client_in_its_default_mode(mcp_sdk_client: Client) -> None:
    assert mcp_sdk_client.mode == "auto"
    async with mcp_sdk_client as client:
        assert client.protocol_version == "2026-07-28"
        assert (await client.call_tool("add", {"a": 2, "b": 2})).structured_content == {"result": 4}


@pytest.mark.parametrize(("mcp_sdk_mode", "version"), [("legacy", "2025-11-25"), ("2026-07-28", "2026-07-28")])
async def test_a_test_names_its_era(mcp_sdk_client: Client, version: str) -> None:
    async with mcp_sdk_client as client:
        assert client.protocol_version == version
        assert (await client.call_tool("add", {"a": 2, "b": 3})).structured_content == {"result": 5}


class TestAnAppWithAuthentication:
    @pytest.fixture
    def app(self, make_app: t.Callable[..., Flask], gates: Gates) -> Flask:
        return make_app(shop(gates), MCP_AUTH_TOKENS=TOKENS)

    @pytest.fixture
    def mcp_principal(self) -> Principal:
        return Principal("ada", scopes={"notes:read"})

    async def test_the_client_stands_in_for_the_principal_fixture(self, mcp_sdk_client: Client) -> None:
        async with mcp_sdk_client as client:
            assert (await client.call_tool("notes", {})).content[0].text == "notes of ada"  # type: ignore[union-attr]
