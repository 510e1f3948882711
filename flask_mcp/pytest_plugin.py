"""pytest fixtures for testing an app that serves MCP: ``mcp_client``, ``mcp_principal``, ``mcp_client_factory``.

This path is kept for imports; the plugin pytest loads (the ``pytest11``
entry point) is :mod:`flask_mcp.testing.pytest_plugin`.
"""

from __future__ import annotations

from .testing.pytest_plugin import MCPClientFactory, mcp_client, mcp_client_factory, mcp_principal

__all__ = ["MCPClientFactory", "mcp_client", "mcp_client_factory", "mcp_principal"]
