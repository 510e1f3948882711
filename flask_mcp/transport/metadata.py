"""RFC 9728 Protected Resource Metadata, served over HTTP next to the endpoint.

The auth gate (:mod:`flask_mcp.auth.gate`) says what the document holds;
this module serves it at the well-known URL and at its variant for the
endpoint's path, behind the endpoint's Host guard.
"""

from __future__ import annotations

import typing as t

from flask import Flask, Response, request

from ..auth.gate import METADATA_PATH, AuthGate, current_gate
from ..protocol import jsonrpc
from .guard import rejection
from .rules import add_rule

if t.TYPE_CHECKING:
    from ..binding.state import MCPState

__all__ = ["metadata_view", "register_metadata_routes"]


def metadata_view() -> Response:
    """``GET /.well-known/oauth-protected-resource[/<endpoint path>]``."""
    if request.method not in ("GET", "HEAD", "OPTIONS"):
        body = jsonrpc.encode({"error": f"Method Not Allowed: {request.method}"})
        return Response(body, status=405, headers={"Allow": "GET, HEAD, OPTIONS"}, content_type="application/json")
    settings = current_gate().settings
    # The same Host guard as the endpoint (the document names this server);
    # origins are not checked: the document is public by design, and read by
    # browser-based clients from other origins.
    reason = rejection(request.environ, settings.allowed_hosts, ("*",))
    if reason is not None:
        body = jsonrpc.encode({"error": reason})
        return Response(body, status=403, content_type="application/json")
    headers = {"Access-Control-Allow-Origin": "*"}
    if request.method == "OPTIONS":
        return Response(status=204, headers={**headers, "Allow": "GET, HEAD, OPTIONS"})
    return Response(jsonrpc.encode(current_gate().metadata()), headers=headers, content_type="application/json")


def register_metadata_routes(app: Flask, state: MCPState, endpoint_prefix: str, mcp_path: str) -> None:
    """Serve *state*'s metadata at the well-known URL (unless a server has it) and at its variant for *mcp_path*."""
    gate = t.cast(AuthGate, state.auth)
    gate.mcp_path = mcp_path
    paths = {METADATA_PATH: "oauth_protected_resource"}
    if mcp_path.strip("/"):
        paths[METADATA_PATH + "/" + mcp_path.strip("/")] = "oauth_protected_resource_path"
    taken = {rule.rule for rule in app.url_map.iter_rules()}
    for path, name in paths.items():
        if path in taken:
            continue  # the app serves its own document there
        add_rule(app, path, f"{endpoint_prefix}.{name}", metadata_view, ("GET", "HEAD", "OPTIONS"))
