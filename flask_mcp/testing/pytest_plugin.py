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
    An :class:`~flask_mcp.testing.MCPTestClient` for ``app`` speaking the
    current revision (2026-07-28): every request stands alone.
``mcp_principal``
    The caller ``mcp_client`` stands in for, without a credential, in an app
    in testing mode: ``None`` by default; override it (a
    :class:`~flask_mcp.Principal`, or a subject string) in a ``conftest.py``,
    a module, or with ``@pytest.mark.parametrize("mcp_principal", [...])``::

        @pytest.fixture
        def mcp_principal():
            return Principal("ada", scopes={"notes:read"})
``mcp_client_factory``
    ``mcp_client_factory(app=None, *, path=None, validator=None,
    validate=True, era="modern", capabilities=None, log_level=None,
    initialize=True, version=..., token=None, headers=None, principal=None,
    server=None)``
    builds more clients: for another app, declaring client capabilities, with
    a caller's token for an app with authentication (or, in testing mode, a
    principal to stand in for), or in the handshake era
    (``era="handshake"``: initialized in a session unless ``initialize=False``).
``mcp_sdk_client``, ``mcp_sdk_mode``
    The official SDK's own ``mcp.Client`` for ``app``, in this process (the
    ``sdk`` extra; see :mod:`flask_mcp.sdk.fixtures`), in the mode
    ``mcp_sdk_mode`` names (``"auto"`` unless overridden).

Every answer these clients get is checked against the official JSON schema of
its revision, which ships with flask_mcp (a
:class:`~flask_mcp.testing.SchemaValidator`); ``validate=False`` turns that off.
"""

from __future__ import annotations

import typing as t

import pytest

from ..globals import state_of
from ..protocol.versions import MODERN_PROTOCOL_VERSIONS
from ..sdk.fixtures import mcp_sdk_client, mcp_sdk_mode
from .client import MCPTestClient
from .schema_checks import SchemaValidator

if t.TYPE_CHECKING:
    from flask import Flask

    from ..policies.principal import Principal

__all__ = ["MCPClientFactory", "mcp_client", "mcp_client_factory", "mcp_principal", "mcp_sdk_client", "mcp_sdk_mode"]

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
        validate: bool = True,
        era: t.Literal["modern", "handshake"] = "modern",
        capabilities: dict[str, t.Any] | None = None,
        log_level: str | None = None,
        initialize: bool = True,
        version: str = DEFAULT_VERSION,
        token: str | None = None,
        headers: t.Mapping[str, str] | None = None,
        principal: Principal | str | None = None,
        server: str | None = None,
    ) -> MCPTestClient:
        """A client for *app* (default: the ``app`` fixture).

        :param validator: checks every response of the client's era; by default the
            official schema of its revision, shipped with flask_mcp.
        :param validate: ``False`` to check no response against a schema.
        :param capabilities: what the client declares (each modern request, or ``initialize``).
        :param initialize: in the handshake era, run the handshake (at *version*).
        :param token: the caller's bearer token, for an app with authentication.
        :param headers: more headers for every request.
        :param principal: the caller to stand in for without a token, in an app
            in testing mode (see :class:`~flask_mcp.testing.MCPTestClient`).
        :param server: which of the app's MCP servers (by blueprint name) when
            it has several; by default the first one set up.
        """
        if app is None:
            # Looked up only when needed, so tests that pass their own app need no `app` fixture.
            app = t.cast("Flask", self._request.getfixturevalue("app"))
        if path is None:
            # Where the server's endpoint was registered (MCP_URL_PREFIX through init_app).
            state = state_of(app, server)
            path = state.endpoint_path or state.settings.url_prefix
        if validator is None and validate:
            validator = SchemaValidator.official(MODERN_PROTOCOL_VERSIONS[0] if era == "modern" else version)
        elif not validate:
            validator = None
        if era == "modern":
            return MCPTestClient(
                app,
                path,
                modern_validator=validator,
                capabilities=capabilities,
                log_level=log_level,
                era=era,
                token=token,
                headers=headers,
                principal=principal,
            )
        client = MCPTestClient(
            app, path, validator, log_level=log_level, era=era, token=token, headers=headers, principal=principal
        )
        if initialize:
            client.initialize(version, capabilities)
        return client


@pytest.fixture
def mcp_client_factory(request: pytest.FixtureRequest) -> MCPClientFactory:
    """Build :class:`~flask_mcp.testing.MCPTestClient` objects; see the module docstring."""
    return MCPClientFactory(request)


@pytest.fixture
def mcp_principal() -> Principal | str | None:
    """The caller ``mcp_client`` stands in for: ``None`` (none: the app authenticates as it always does).

    Override it as any fixture, in a ``conftest.py``, a test module or a
    class, or with ``@pytest.mark.parametrize("mcp_principal", [...])``.
    """
    return None


@pytest.fixture
def mcp_client(mcp_client_factory: MCPClientFactory, mcp_principal: Principal | str | None) -> MCPTestClient:
    """A :class:`~flask_mcp.testing.MCPTestClient` for the ``app`` fixture, in the modern era, standing in for
    ``mcp_principal`` (an app in testing mode only; see :class:`~flask_mcp.testing.MCPTestClient`)."""
    return mcp_client_factory(principal=mcp_principal)
