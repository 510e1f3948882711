"""The floor: bare Flask parsing a JSON-RPC ``tools/call`` and answering an MCP-shaped result.

No validation, no sessions, no protocol: what any Flask endpoint costs.
"""

from __future__ import annotations

import json

from flask import Flask, Response, request

app = Flask(__name__)


@app.post("/mcp")
def mcp() -> Response:
    message = json.loads(request.get_data())
    arguments = message["params"]["arguments"]
    value = arguments["a"] + arguments["b"]
    result = {"content": [{"type": "text", "text": str(value)}], "structuredContent": {"result": value}}
    return Response(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), mimetype="application/json")
