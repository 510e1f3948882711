"""pytest fixtures: the official SDK's ``Client`` for the ``app`` fixture, in this process.

Importing this module imports neither the SDK nor pytest-anyio: the SDK is
imported when a test asks for :func:`mcp_sdk_client`, so the fixtures can
be registered where the SDK is not installed. A test awaits the client, so
it runs under an async plugin (``@pytest.mark.anyio``, installed with the
SDK)::

    import pytest


    @pytest.mark.anyio
    async def test_add(mcp_sdk_client):
        async with mcp_sdk_client as client:
            result = await client.call_tool("add", {"a": 1, "b": 2})
        assert result.structured_content == {"result": 3}

It stands in for the caller the ``mcp_principal`` fixture gives (an app in
testing mode only), and speaks the revision ``mcp_sdk_mode`` names: the
SDK's own default, ``"auto"``, unless a test overrides it, for example with
``@pytest.mark.parametrize("mcp_sdk_mode", ["legacy", "2026-07-28"])`` for
both eras.
"""

from __future__ import annotations

import typing as t

import pytest

if t.TYPE_CHECKING:
    from flask import Flask
    from mcp import Client

    from ..policies.principal import Principal

__all__ = ["mcp_sdk_client", "mcp_sdk_mode"]


@pytest.fixture
def mcp_sdk_mode() -> str:
    """The ``mode=`` of :func:`mcp_sdk_client`: ``"auto"`` (the SDK's default: 2026-07-28 with flask_mcp).

    ``"legacy"`` for the handshake era (2025-11-25), or a modern version.
    """
    return "auto"


@pytest.fixture
def mcp_sdk_client(request: pytest.FixtureRequest, mcp_sdk_mode: str, mcp_principal: Principal | str | None) -> Client:
    """The SDK's ``mcp.Client`` for the ``app`` fixture, in this process, not yet entered (``async with`` it).

    For other options (a token, callbacks, extensions, another app), call
    :func:`flask_mcp.sdk.connect` in the test.
    """
    from .in_process import connect

    app = t.cast("Flask", request.getfixturevalue("app"))
    return connect(app, principal=mcp_principal, mode=mcp_sdk_mode)
