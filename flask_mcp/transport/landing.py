"""What a browser sees at the MCP endpoint: a short page saying what it is and how to connect.

A person who opens the endpoint's URL gets this page instead of a protocol
error; MCP clients never ask for HTML (they accept ``text/event-stream``
or JSON), so their requests keep the protocol's answers.
"""

from __future__ import annotations

import json
import typing as t

from flask import Response, request
from markupsafe import escape

if t.TYPE_CHECKING:
    from _typeshed.wsgi import WSGIEnvironment

    from ..binding.state import MCPState

__all__ = ["page", "wants_html"]

#: The page runs nothing and loads nothing.
_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
    "X-Content-Type-Options": "nosniff",
}

_STYLE = (
    "body{font:16px/1.5 system-ui,sans-serif;max-width:44em;margin:2em auto;padding:0 1em;color:#222}"
    "pre{background:#f4f4f4;padding:.8em;overflow-x:auto}code{font-size:.95em}"
)


def wants_html(environ: WSGIEnvironment) -> bool:
    """Whether a GET comes from a browser: it asks for HTML, and not for an event stream."""
    accept = str(environ.get("HTTP_ACCEPT", ""))
    return "text/html" in accept and "text/event-stream" not in accept


def page(state: MCPState) -> Response:
    """The page: the server, its URL, client configuration to copy, and the REST docs when served."""
    server = state.server
    url = request.base_url
    name = server.name
    config = json.dumps({"mcpServers": {name: {"url": url}}}, indent=2)
    parts = [
        f"<!doctype html><html lang=en><meta charset=utf-8><title>{escape(name)}: MCP server</title>",
        f"<style>{_STYLE}</style>",
        f"<h1>{escape(name)} <small>{escape(server.version)}</small></h1>",
        "<p>This is a <a href='https://modelcontextprotocol.io'>Model Context Protocol</a> endpoint. "
        "MCP clients (Claude, Cursor, agents, the official SDKs) connect to it over Streamable HTTP at:</p>",
        f"<pre><code>{escape(url)}</code></pre>",
        "<p>A client configuration (<code>mcpServers</code>, as Cursor and others read it):</p>",
        f"<pre><code>{escape(config)}</code></pre>",
        "<p>The official Python SDK:</p>",
        f"<pre><code>async with mcp.Client({escape(json.dumps(url))}) as client:\n"
        "    print(await client.list_tools())</code></pre>",
    ]
    if state.auth is not None:
        parts.append(f"<p>This server requires authentication: {escape(state.auth.backend.credential_hint)}.</p>")
    site = state.rest_site
    if site is not None:
        docs = request.host_url.rstrip("/") + request.script_root + site.prefix.rstrip("/") + "/docs"
        parts.append(f"<p>Its tools are also REST endpoints: <a href='{escape(docs)}'>REST API documentation</a>.</p>")
    return Response("".join(parts), content_type="text/html; charset=utf-8", headers=_HEADERS)
