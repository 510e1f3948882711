"""MCP Apps: a tool's result shown in a view rendered from a template (:class:`App`).

This path is kept for imports; the code lives in :mod:`flask_mcp.integrations.apps`.
"""

from __future__ import annotations

from .integrations.apps import EXTENSION, MIME_TYPE, App, as_app, inline_static, link_view, register_view, view_uri

__all__ = ["EXTENSION", "MIME_TYPE", "App", "as_app", "inline_static", "link_view", "register_view", "view_uri"]
