"""The floor: bare Flask parsing a JSON-RPC ``tools/call`` and answering an MCP-shaped result.

No validation, no sessions, no protocol: what any Flask endpoint costs.
The load sends ``app`` the same request a session's call is, its
``Mcp-Session-Id`` included (which it ignores).
``app`` answers as the handshake era does; ``modern_app`` reads the same
view's request with the 2026-07-28 envelope and headers (ignoring them) and
adds what every modern result carries (``resultType``, the server's info).
``signed_in()`` first verifies the bearer token with PyJWT as any resource
server would (signature, ``exp``, ``aud``, ``iss``); ``static_token_app``
compares it with a static token (``hmac.compare_digest``), and
``jwt_verifying_app`` verifies a JWT with any given key; ``streaming_app``
answers a call as an event stream of three progress notifications and the result.
Each of these has its modern twin, doing the same work and adding what a
modern result carries: ``modern_signed_in()``, ``modern_static_token_app``,
``jwt_verifying_app(..., modern=True)`` and ``modern_streaming_app``.
"""

from __future__ import annotations

import json

from flask import Flask, Response, abort, request

app = Flask(__name__)
modern_app = Flask(__name__)

SERVER_INFO = {"io.modelcontextprotocol/serverInfo": {"name": "floor", "version": "1.0.0"}}


def _sum() -> tuple[dict[str, object], dict[str, object]]:
    message = json.loads(request.get_data())
    arguments = message["params"]["arguments"]
    value = arguments["a"] + arguments["b"]
    return message, {"content": [{"type": "text", "text": str(value)}], "structuredContent": {"result": value}}


def _answer(modern: bool) -> Response:
    """The signed-in floors' answer once the token is checked: the sum, the 2026-07-28 way if *modern*."""
    message, result = _sum()
    if modern:
        result = {**result, "resultType": "complete", "_meta": SERVER_INFO}
    return Response(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), mimetype="application/json")


@app.post("/mcp")
def mcp() -> Response:
    message, result = _sum()
    return Response(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), mimetype="application/json")


@modern_app.post("/mcp")
def modern_mcp() -> Response:
    message, result = _sum()
    result = {**result, "resultType": "complete", "_meta": SERVER_INFO}
    return Response(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), mimetype="application/json")


def jwt_verifying_app(public_pem: str, issuer: str, audience: str, modern: bool = False) -> Flask:
    """A bare view verifying a bearer JWT with PyJWT and *public_pem*, *issuer* and *audience*, then answering.

    :param modern: answer as the 2026-07-28 era does (what ``modern_app`` adds to the result).
    """
    import jwt

    verifying = Flask(__name__)

    @verifying.post("/mcp")
    def verified_mcp() -> Response:
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        try:
            jwt.decode(token, public_pem, algorithms=["RS256"], audience=audience, issuer=issuer)
        except jwt.PyJWTError:
            abort(401)
        return _answer(modern)

    return verifying


def signed_in() -> Flask:
    """``floor-jwt``: :func:`jwt_verifying_app` with the signed-in scenarios' issuer (``floor_app:signed_in()``)."""
    from .signing import AUDIENCE, ISSUER, PUBLIC_PEM

    return jwt_verifying_app(PUBLIC_PEM, ISSUER, AUDIENCE)


def modern_signed_in() -> Flask:
    """``floor-jwt-modern``: :func:`signed_in`'s view answering as the 2026-07-28 era does."""
    from .signing import AUDIENCE, ISSUER, PUBLIC_PEM

    return jwt_verifying_app(PUBLIC_PEM, ISSUER, AUDIENCE, modern=True)


def static_token_checking_app(modern: bool = False) -> Flask:
    """A bare view comparing the bearer token with the static one, then answering (the 2026-07-28 way if *modern*)."""
    checking = Flask(__name__)

    @checking.post("/mcp")
    def static_token_mcp() -> Response:
        import hmac

        from .signing import STATIC_TOKEN

        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        if not hmac.compare_digest(token.encode(), STATIC_TOKEN.encode()):
            abort(401)
        return _answer(modern)

    return checking


def progress_streaming_app(modern: bool = False) -> Flask:
    """A bare view answering as an event stream: three progress notes, then the result (the 2026-07-28 way if *modern*).

    The modern one streams the same four events: flask_mcp's modern stream has
    no priming event and no event ids either.
    """
    streaming = Flask(__name__)

    @streaming.post("/mcp")
    def streaming_mcp() -> Response:
        message, result = _sum()
        if modern:
            result = {**result, "resultType": "complete", "_meta": SERVER_INFO}
        token = message["params"].get("_meta", {}).get("progressToken")

        def events() -> object:
            for step in (1, 2, 3):
                note = {"progressToken": token, "progress": step, "total": 3}
                yield f"data: {json.dumps({'jsonrpc': '2.0', 'method': 'notifications/progress', 'params': note})}\n\n"
            yield f"data: {json.dumps({'jsonrpc': '2.0', 'id': message['id'], 'result': result})}\n\n"

        return Response(events(), mimetype="text/event-stream", headers={"Cache-Control": "no-cache"})

    return streaming


#: ``floor-static`` and ``floor-static-modern``.
static_token_app = static_token_checking_app()
modern_static_token_app = static_token_checking_app(modern=True)
#: ``floor-stream`` and ``floor-stream-modern``.
streaming_app = progress_streaming_app()
modern_streaming_app = progress_streaming_app(modern=True)
