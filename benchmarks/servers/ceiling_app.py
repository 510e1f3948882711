"""The ceiling: a bare WSGI callable that answers every request with one prepared ``tools/call`` result.

No Flask, no JSON parsing, no work: what the WSGI server itself (gunicorn,
the same settings as flask_mcp's and the floor's) and the load generator
cost per request. No WSGI app can answer faster under that server, so its
rate bounds every ratio a WSGI framework can reach against a peer.
"""

from __future__ import annotations

import json
import typing as t

if t.TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIEnvironment

_RESULT = {"content": [{"type": "text", "text": "42"}], "structuredContent": {"result": 42}, "resultType": "complete"}
BODY = json.dumps({"jsonrpc": "2.0", "id": 1, "result": _RESULT}).encode()
HEADERS = [("Content-Type", "application/json"), ("Content-Length", str(len(BODY)))]


def app(environ: WSGIEnvironment, start_response: StartResponse) -> t.Iterable[bytes]:
    """Read the body (a server must), answer the prepared result."""
    length = int(environ.get("CONTENT_LENGTH") or 0)
    if length:
        environ["wsgi.input"].read(length)
    start_response("200 OK", HEADERS)
    return [BODY]
