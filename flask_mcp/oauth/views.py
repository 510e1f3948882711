"""The HTTP endpoints: token, registration, revocation, JWKS and the RFC 8414 metadata at its well-known URLs."""

from __future__ import annotations

import json
import logging
import typing as t

from flask import Blueprint, Flask, Response, request
from sqlalchemy.exc import OperationalError
from werkzeug.exceptions import HTTPException

from ..stores.failures import RETRY_AFTER
from .consent import authorize_view, connections_view, revoke_connection_view
from .endpoints import server_metadata
from .limits import retry_after
from .switch_account import switch_account_view
from .tokens import oauth_state

if t.TYPE_CHECKING:
    from .server import OAuthState

__all__ = ["add_well_known_routes", "make_blueprint"]

logger = logging.getLogger("flask_mcp.oauth")

#: RFC 8414 section 3 and the OpenID discovery alias clients also try.
METADATA_NAMES = ("oauth-authorization-server", "openid-configuration")


def _json(body: t.Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(json.dumps(body), status=status, headers=headers, content_type="application/json")


def _cors(response: Response) -> Response:
    # These endpoints take no cookies: browser-based clients of any origin may call them.
    response.headers["Access-Control-Allow-Origin"] = "*"
    response.headers["Access-Control-Allow-Headers"] = "Authorization, Content-Type, MCP-Protocol-Version"
    response.headers["Access-Control-Allow-Methods"] = "GET, POST, OPTIONS"
    return response


def _preflight() -> Response | None:
    return _cors(Response(status=204)) if request.method == "OPTIONS" else None


def _refused_input() -> Response:
    # Authlib refuses to echo some input in an error description by raising ValueError: still a bad request.
    body = {"error": "invalid_request", "error_description": "the request holds characters that are not allowed"}
    return _json(body, 400)


def _guarded(endpoint: str, work: t.Callable[[OAuthState], Response]) -> Response:
    """Answer *endpoint* within its rate limits, never with a 5xx for malformed input, then maybe sweep."""
    preflight = _preflight()
    if preflight is not None:
        return preflight
    state = oauth_state()
    refusal = state.limits.refusal(request, endpoint)
    if refusal is not None:
        wait, why = refusal
        body = {"error": "slow_down", "error_description": why}
        return _cors(_json(body, 429, {"Retry-After": retry_after(wait)}))
    try:
        response = work(state)
    except ValueError:
        # Authlib refuses to echo some input in an error description: still a bad request.
        response = _refused_input()
    except RecursionError:
        # A JSON body nested deeper than the parser goes.
        response = _json(
            {"error": "invalid_request", "error_description": "the request body is nested too deeply"}, 400
        )
    state.limits.count(request, endpoint, response)
    if state.prune is not None and state.prune.due():
        # After the answer is sent: the client does not wait for the sweep.
        response.call_on_close(state.prune.sweep)
    return _cors(response)


def token_view() -> Response:
    """``POST /token``: every grant (authorization code, refresh token, client credentials)."""
    return _guarded("token", lambda state: state.server.create_token_response())


def _register(state: OAuthState) -> Response:
    if not isinstance(request.get_json(silent=True), dict):
        body = {"error": "invalid_client_metadata", "error_description": "send the client metadata as a JSON object"}
        return _json(body, 400)
    return t.cast(Response, state.server.create_endpoint_response("client_registration"))


def register_view() -> Response:
    """``POST /register`` (RFC 7591), rate-limited per client address."""
    return _guarded("register", _register)


def revoke_view() -> Response:
    """``POST /revoke`` (RFC 7009)."""
    return _guarded("revoke", lambda state: state.server.create_endpoint_response("revocation"))


def jwks_view() -> Response:
    """``GET /jwks.json``: the public keys the access tokens are signed with."""
    return _cors(_json(oauth_state().keys.public_jwks(), headers={"Cache-Control": "public, max-age=300"}))


def metadata_view() -> Response:
    """The RFC 8414 document (also at the OpenID discovery URLs)."""
    return _preflight() or _cors(_json(server_metadata(oauth_state().server)))


def _json_error(error: Exception) -> Response:
    if isinstance(error, OperationalError):
        # The database is away (a restart, a failover): the same request works once it is back.
        logger.warning("OAuth database unavailable: %s: %s", type(error).__name__, error)
        body = {"error": "temporarily_unavailable", "error_description": "the authorization server's database "
                "did not answer; retry shortly"}  # fmt: skip
        return _json(body, 503, headers={"Retry-After": str(RETRY_AFTER)})
    if isinstance(error, HTTPException):
        code = error.code or 500
        return _json(
            {"error": "invalid_request" if code < 500 else "server_error", "error_description": error.description}, code
        )
    logger.exception("OAuth endpoint failed")
    return _json({"error": "server_error", "error_description": "the authorization server failed"}, 500)


def make_blueprint() -> Blueprint:
    """The blueprint of the endpoints and pages, with the templates the app may override."""
    blueprint = Blueprint("mcp_oauth", __name__, template_folder="templates")
    get_post = ["GET", "POST"]
    blueprint.add_url_rule("/authorize", "authorize", authorize_view, methods=get_post)
    blueprint.add_url_rule("/token", "token", token_view, methods=["POST", "OPTIONS"])
    blueprint.add_url_rule("/register", "register", register_view, methods=["POST", "OPTIONS"])
    blueprint.add_url_rule("/revoke", "revoke", revoke_view, methods=["POST", "OPTIONS"])
    blueprint.add_url_rule("/jwks.json", "jwks", jwks_view, methods=["GET"])
    blueprint.add_url_rule("/connections", "connections", connections_view, methods=["GET"])
    blueprint.add_url_rule("/connections/revoke", "revoke_connection", revoke_connection_view, methods=["POST"])
    blueprint.add_url_rule("/switch-account", "switch_account", switch_account_view, methods=["POST"])
    blueprint.register_error_handler(Exception, _json_error)
    return blueprint


def add_well_known_routes(app: Flask, issuer_path: str) -> None:
    """Serve the metadata where clients look for it, for an issuer whose URL has *issuer_path*.

    RFC 8414 inserts the well-known segment before the issuer's path
    (``/.well-known/oauth-authorization-server/p``); OpenID discovery
    appends it (``/p/.well-known/openid-configuration``), and clients try both.
    """
    path = issuer_path.strip("/")
    rules = [f"/.well-known/{name}" + (f"/{path}" if path else "") for name in METADATA_NAMES]
    if path:
        rules.append(f"/{path}/.well-known/openid-configuration")
    taken = {rule.rule for rule in app.url_map.iter_rules()}
    for index, rule in enumerate(rules):
        if rule not in taken:
            app.add_url_rule(rule, f"mcp_oauth_metadata_{index}", metadata_view, methods=["GET", "OPTIONS"])
