"""pytest fixtures for testing an app that serves MCP.

Installed with flask_mcp and loaded by pytest on its own (a ``pytest11``
entry point), so a project's tests only define the ``app`` fixture, as with
pytest-flask, and ask for a client::

    import pytest

    from myproject import create_app


    @pytest.fixture
    def app():
        return create_app({"TESTING": True})


    def test_add(mcp_client):
        assert mcp_client.call_tool("add", {"a": 1, "b": 2})["structuredContent"] == {"result": 3}

``mcp_client``
    An :class:`~flask_mcp.testing.MCPTestClient` for ``app``, already through
    the ``initialize`` handshake.
``mcp_client_factory``
    ``mcp_client_factory(app=None, *, path=None, validator=None,
    initialize=True, version=..., capabilities=None)`` builds more clients:
    for another app, with a :class:`~flask_mcp.testing.SchemaValidator`,
    declaring client capabilities, or one that has not initialized yet.
"""

from __future__ import annotations

import typing as t

import pytest

from .testing import MCPTestClient, SchemaValidator

if t.TYPE_CHECKING:
    from flask import Flask

__all__ = ["MCPClientFactory", "mcp_client", "mcp_client_factory"]

#: The protocol version :class:`MCPTestClient` asks for unless told otherwise.
DEFAULT_VERSION = "2025-11-25"


class MCPClientFactory:
    """The ``mcp_client_factory`` fixture: builds :class:`~flask_mcp.testing.MCPTestClient` objects.

    :param request: the requesting test, to look up its ``app`` fixture when needed.
    """

    def __init__(self, request: pytest.FixtureRequest) -> None:
        self._request = request

    def __call__(
        self,
        app: Flask | None = None,
        *,
        path: str | None = None,
        validator: SchemaValidator | None = None,
        initialize: bool = True,
        version: str = DEFAULT_VERSION,
        capabilities: dict[str, t.Any] | None = None,
    ) -> MCPTestClient:
        """A client for *app* (default: the ``app`` fixture), initialized unless told otherwise."""
        if app is None:
            # Looked up only when needed, so tests that pass their own app need no `app` fixture.
            app = t.cast("Flask", self._request.getfixturevalue("app"))
        if path is None:
            # init_app registers the endpoint at MCP_URL_PREFIX; it is set once the extension is set up.
            path = app.config.get("MCP_URL_PREFIX") or "/mcp"
        client = MCPTestClient(app, path, validator)
        if initialize:
            client.initialize(version, capabilities)
        return client


@pytest.fixture
def mcp_client_factory(request: pytest.FixtureRequest) -> MCPClientFactory:
    """Build :class:`~flask_mcp.testing.MCPTestClient` objects; see the module docstring."""
    return MCPClientFactory(request)


@pytest.fixture
def mcp_client(mcp_client_factory: MCPClientFactory) -> MCPTestClient:
    """An initialized :class:`~flask_mcp.testing.MCPTestClient` for the ``app`` fixture."""
    return mcp_client_factory()
