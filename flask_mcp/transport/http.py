"""Streamable HTTP transport as a Flask view, for both eras on one endpoint.

One endpoint: ``POST`` carries one JSON-RPC message, ``GET`` opens or
resumes a session's event stream (see :mod:`flask_mcp.transport.streaming`),
``DELETE`` ends a session. Every error, including the HTTP-level ones, is a
JSON body with a JSON-RPC error object, never an HTML page, so MCP clients
can read it.

A message whose ``_meta`` names a protocol revision, or that comes with a
modern ``MCP-Protocol-Version`` header, is served statelessly in the modern
era (:mod:`flask_mcp.transport.modern`); anything else in the handshake era,
where ``initialize`` starts a session. ``GET`` and ``DELETE`` only exist for
handshake sessions: without one they answer 405.
"""

from __future__ import annotations

import logging
import time
import typing as t

from flask import Response, current_app, request

from ..auth.gate import Unauthorized
from ..core.client import ClientState
from ..core.hooks import session_ended, session_started
from ..globals import current_state
from ..policies.ratelimit import caller_key
from ..protocol import jsonrpc
from ..protocol.envelope import is_modern
from ..protocol.jsonrpc import MCPError
from ..protocol.params import validate_notification_params
from ..protocol.versions import DEFAULT_NEGOTIATED_VERSION, MODERN_PROTOCOL_VERSIONS, SUPPORTED_PROTOCOL_VERSIONS
from ..stores.events import parse_event_id
from ..stores.failures import unavailable
from . import fast_lane, landing, modern, refusals, streaming
from .answer import JSON_CONTENT_TYPE, JSONAnswer
from .body import BodyRejected, read_request_body
from .errors import Reject, error_response, json_response
from .guard import is_json_request
from .session_lookup import SESSION_HEADER, SESSION_KEY, SESSION_NOT_FOUND, owner_of, session_not_found, session_of
from .status import json_answer

if t.TYPE_CHECKING:
    from _typeshed.wsgi import WSGIEnvironment

    from ..binding.state import MCPState
    from ..policies.principal import Principal

__all__ = [
    "SESSION_HEADER",
    "SESSION_NOT_FOUND",
    "VERSION_HEADER",
    "endpoint",
    "endpoint_of",
    "error_response",
    "json_answer",
    "serve",
]

logger = logging.getLogger("flask_mcp")

VERSION_HEADER = "MCP-Protocol-Version"
# The same header as a WSGI environ key.
_VERSION_KEY = "HTTP_MCP_PROTOCOL_VERSION"


def endpoint() -> Response:
    """The view function behind the MCP URL of the current server (:func:`~flask_mcp.globals.current_state`)."""
    return serve(current_state())


def endpoint_of(state: MCPState) -> t.Callable[[], Response]:
    """The view function behind the MCP URL of *state*'s server, which it is bound to."""

    def endpoint() -> Response:
        return serve(state)

    return endpoint


def serve(state: MCPState) -> Response:
    """Answer the current request to *state*'s MCP endpoint."""
    tracer = state.server.tracer
    if tracer is None or not tracer.recording:
        return _answer(state)
    started = time.time_ns()
    answer = _answer(state)
    # The one place every answer passes: an error the core never saw is traced here.
    refusals.report(tracer, request.environ, answer, started)
    return answer


def _answer(state: MCPState) -> Response:
    if state.settings_read is not None:  # this process's first request: a setup that cannot work?
        state.check_first_request(current_app.config, request.environ)
    # Headers are read straight from the WSGI environ: on the hot path this
    # is measurably cheaper than going through ``request`` for each one.
    environ = request.environ
    method = environ["REQUEST_METHOD"]
    try:
        refused = state.request_guard.rejection(environ)
        if refused is not None:
            return error_response(403, refused)
        if method == "OPTIONS":
            # A CORS preflight never carries credentials.
            return Response(status=204, headers={"Allow": _allowed(state)})
        if method == "GET" and not environ.get(SESSION_KEY) and landing.wants_html(environ):
            # A person opened the URL: say what this is (it tells nothing a client could not discover).
            return landing.page(state)
        principal = None
        if state.auth is not None:
            # Before any session lookup: without a credential nobody learns
            # whether a session id is valid.
            try:
                principal = state.auth.authenticate(request)
            except Unauthorized as exc:
                return error_response(401, exc.message, headers={"WWW-Authenticate": exc.challenge})
        if method == "POST":
            return _post(state, environ, principal)
        if method in ("GET", "DELETE") and _has_session(state, environ):
            return _delete(state, environ, principal) if method == "DELETE" else _get(state, environ, principal)
    except Reject as reject:
        return reject.response
    except state.store_errors as exc:
        return json_answer(state, jsonrpc.failure(None, unavailable(exc)))
    return _method_not_allowed(state)


def _has_session(state: MCPState, environ: WSGIEnvironment) -> bool:
    # A GET or DELETE belongs to a handshake session; a modern client has none.
    return (
        not state.settings.stateless
        and bool(environ.get(SESSION_KEY))
        and environ.get(_VERSION_KEY) not in MODERN_PROTOCOL_VERSIONS
    )


def _allowed(state: MCPState) -> str:
    return "POST, OPTIONS" if state.settings.stateless else "GET, POST, DELETE, OPTIONS"


def _method_not_allowed(state: MCPState) -> Response:
    allow = _allowed(state) if request.method not in ("GET", "DELETE") else "POST, OPTIONS"
    return error_response(405, f"Method Not Allowed: {request.method} (allowed: {allow})", headers={"Allow": allow})


def _read_body(state: MCPState, environ: WSGIEnvironment) -> bytes:
    accept = environ.get("HTTP_ACCEPT")
    # The common values are decided by a substring test; anything with
    # quality parameters gets werkzeug's full parse.
    if (
        accept
        and (
            ";" in accept
            or ("application/json" not in accept and "*/*" not in accept and "application/*" not in accept)
        )
        and request.accept_mimetypes.quality("application/json") <= 0
    ):
        raise Reject(error_response(406, "Not Acceptable: the client must accept application/json"))
    if environ.get("CONTENT_TYPE") != JSON_CONTENT_TYPE and not is_json_request(environ):
        raise Reject(error_response(415, "Unsupported Media Type: Content-Type must be application/json"))
    try:
        return read_request_body(environ, state.settings)
    except BodyRejected as exc:
        raise Reject(error_response(exc.status, exc.message, headers=exc.headers)) from None


def _post(state: MCPState, environ: WSGIEnvironment, principal: Principal | None) -> Response:
    body = _read_body(state, environ)
    payload: t.Any = None
    message: jsonrpc.Message | None = None
    try:
        payload = jsonrpc.loads(body, state.server.json_limits)
        environ[refusals.MESSAGE_KEY] = payload  # what a refusal's trace can tell of it
        lane = fast_lane.recognise(state, environ, payload)
        if lane is None:
            message = jsonrpc.parse_message(payload)
            if isinstance(message, jsonrpc.Notification):
                # Before any store sees its params (a cancellation's requestId is a cache key).
                validate_notification_params(message.method, message.params)
    except MCPError as exc:
        return json_response(jsonrpc.failure(jsonrpc.request_id_of(payload), exc), 400)
    if lane is not None:
        msg_id: jsonrpc.RequestId | None = lane.request_id
    else:
        msg_id = message.id if not isinstance(message, jsonrpc.Notification) else None  # type: ignore[union-attr]
    try:
        if lane is not None:
            answered = fast_lane.answer(state, environ, lane, principal)
            if answered is not None:
                return answered
            message = jsonrpc.parse_message(payload)  # recognised by the lane: a well-formed request
        message = t.cast(jsonrpc.Message, message)
        if state.server.modern_era and (
            environ.get(_VERSION_KEY) in MODERN_PROTOCOL_VERSIONS or is_modern(getattr(message, "params", None))
        ):
            return modern.post(state, environ, message, principal)
        return _dispatch(state, environ, message, msg_id, principal)
    except Reject:
        raise
    except state.store_errors as exc:
        return json_answer(state, jsonrpc.failure(msg_id, unavailable(exc)))
    except Exception as exc:
        # Answer with the request's own id, so the client can match the failure.
        logger.exception("MCP request failed")
        error = state.server.internal_error(exc)
        return error_response(500, error.message, error.code, msg_id, error.data)


def _dispatch(
    state: MCPState,
    environ: WSGIEnvironment,
    message: jsonrpc.Message,
    msg_id: jsonrpc.RequestId | None,
    principal: Principal | None,
) -> Response:
    version = environ.get(_VERSION_KEY)
    if version is not None and version not in SUPPORTED_PROTOCOL_VERSIONS:
        return error_response(
            400,
            f"Bad Request: unsupported protocol version {version!r}",
            msg_id=msg_id,
            data={"requested": version, "supported": list(SUPPORTED_PROTOCOL_VERSIONS)},
        )
    if isinstance(message, jsonrpc.Request) and message.method == "initialize":
        return _initialize(state, environ, message, principal)
    session = None
    if state.settings.stateless:
        state.keep_in_step()
        client = ClientState(protocol_version=version or DEFAULT_NEGOTIATED_VERSION)
    else:
        session = session_of(state, environ, msg_id, principal)
        session_id, client = session.id, session.state
        client.session_id = session_id
        if isinstance(message, jsonrpc.Response):
            # The answer to a request a handler sent: it may wait in any process.
            state.mailbox.deliver(session_id, message.id, {"result": message.result, "error": message.error})  # type: ignore[union-attr]
            return Response(status=202)
        if isinstance(message, jsonrpc.Notification) and message.method == "notifications/cancelled":
            request_id = message.params.get("requestId")  # bounded: validated in _post
            if request_id is not None:
                state.mailbox.cancel(session_id, request_id)  # type: ignore[union-attr]
    if isinstance(message, jsonrpc.Request) and state.server.needs_channel(message):
        return streaming.respond(state, message, client, principal, session)
    response = state.server.handle(message, client, principal=principal)
    if client.changed and session is not None:
        state.sessions.store(session)  # type: ignore[union-attr]
    if response is None:
        return Response(status=202)
    return json_answer(state, response)


def _initialize(
    state: MCPState, environ: WSGIEnvironment, message: jsonrpc.Request, principal: Principal | None
) -> Response:
    # A session id the client sent with initialize is ignored: the server
    # always mints the id, so a session can never be fixed by the client.
    # But a live session of the caller's own means the client is confused.
    session_id = environ.get(SESSION_KEY)
    if session_id and state.sessions is not None and state.sessions.open(session_id, owner_of(principal)) is not None:
        return error_response(
            400,
            "Bad Request: this session is already initialized; send initialize without "
            f"{SESSION_HEADER} to start a new session",
            msg_id=message.id,
        )
    if state.admission is not None:
        # Before the session exists: a full store refuses newcomers rather than evict anybody.
        try:
            state.admission.admit(caller_key(principal, state.server.client_key))
        except MCPError as exc:
            return json_answer(state, jsonrpc.failure(message.id, exc))
    state.keep_in_step()
    client = ClientState()
    response = t.cast(dict[str, t.Any], state.server.handle(message, client, principal=principal))
    headers = {}
    if "result" in response and state.sessions is not None:
        headers[SESSION_HEADER] = session_id = state.sessions.create(client, owner_of(principal))
        if session_started.receivers:
            session_started.send(
                current_app._get_current_object(),  # type: ignore[attr-defined]
                session_id=session_id,
                principal=principal,
                client_info=client.client_info,
            )
    return JSONAnswer(state.server.serialize(response), 200, headers)


def _get(state: MCPState, environ: WSGIEnvironment, principal: Principal | None) -> Response:
    accept = environ.get("HTTP_ACCEPT", "")
    if accept and "text/event-stream" not in accept and "*/*" not in accept:
        return error_response(406, "Not Acceptable: the client must accept text/event-stream")
    last_event_id = environ.get("HTTP_LAST_EVENT_ID")
    if last_event_id and parse_event_id(last_event_id) is None:
        # Answered, not ignored: a fresh stream would silently lose what the client missed.
        return error_response(400, "Bad Request: Last-Event-ID is not an event id this server sent")
    session = session_of(state, environ, None, principal)
    session.state.session_id = session.id
    return streaming.resume_or_listen(state, session.state, last_event_id, session.owner)


def _delete(state: MCPState, environ: WSGIEnvironment, principal: Principal | None) -> Response:
    session_id = environ.get(SESSION_KEY)
    if not session_id:
        return error_response(400, f"Bad Request: missing {SESSION_HEADER} header")
    # The store measures the session's duration as it ends (mcp.server.session.duration), once.
    if state.sessions is None or not state.sessions.delete(session_id, owner_of(principal)):
        return session_not_found(state, session_id, None)
    if session_ended.receivers:
        session_ended.send(
            current_app._get_current_object(),  # type: ignore[attr-defined]
            session_id=session_id,
            principal=principal,
            owner=owner_of(principal),
            reason="deleted",
        )
    return Response(status=204)
