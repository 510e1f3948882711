"""The floor: bare Flask parsing a JSON-RPC ``tools/call`` and answering an MCP-shaped result.

No validation, no sessions, no protocol: what any Flask endpoint costs.
The load sends ``app`` the same request a session's call is, its
``Mcp-Session-Id`` included (which it ignores).
``app`` answers as the handshake era does; ``modern_app`` reads the same
view's request with the 2026-07-28 envelope and headers (ignoring them) and
adds what every modern result carries (``resultType``, the server's info).
"""

from __future__ import annotations

import json

from flask import Flask, Response, request

app = Flask(__name__)
modern_app = Flask(__name__)

SERVER_INFO = {"io.modelcontextprotocol/serverInfo": {"name": "floor", "version": "1.0.0"}}


def _sum() -> tuple[dict[str, object], dict[str, object]]:
    message = json.loads(request.get_data())
    arguments = message["params"]["arguments"]
    value = arguments["a"] + arguments["b"]
    return message, {"content": [{"type": "text", "text": str(value)}], "structuredContent": {"result": value}}


@app.post("/mcp")
def mcp() -> Response:
    message, result = _sum()
    return Response(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), mimetype="application/json")


@modern_app.post("/mcp")
def modern_mcp() -> Response:
    message, result = _sum()
    result = {**result, "resultType": "complete", "_meta": SERVER_INFO}
    return Response(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), mimetype="application/json")
