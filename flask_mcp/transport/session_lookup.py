"""The handshake session a request names in ``Mcp-Session-Id``, or the error that answers it.

A session is found only for the principal that opened it: another
principal's session is answered exactly like an unknown one (404), so a
session id is worth nothing without its owner's credentials.
"""

from __future__ import annotations

import typing as t

from ..protocol import jsonrpc
from .errors import Reject, error_response

if t.TYPE_CHECKING:
    from _typeshed.wsgi import WSGIEnvironment
    from flask import Response

    from ..binding.state import MCPState
    from ..policies.principal import Principal
    from ..stores.sessions import Described, Session

__all__ = [
    "SESSION_HEADER",
    "SESSION_KEY",
    "SESSION_NOT_FOUND",
    "check_session",
    "owner_of",
    "session_not_found",
    "session_of",
]

SESSION_HEADER = "Mcp-Session-Id"
#: The same header as a WSGI environ key.
SESSION_KEY = "HTTP_MCP_SESSION_ID"
#: Not a reserved JSON-RPC code: the session is unknown, expired or deleted.
SESSION_NOT_FOUND = -32001

#: Why a session can be unknown to one process while another has it.
_ELSEWHERE = (
    "Session not found: it was created by another server process, and with the default SimpleCache "
    "sessions live in one process's memory. Use a shared store (MCP_CACHE_TYPE = 'RedisCache'), "
    "or clients of the 2026-07-28 revision, which need no session"
)


def owner_of(principal: Principal | None) -> str | None:
    """Whose sessions *principal* may use: its subject; ``None`` for an anonymous caller."""
    return principal.subject if principal is not None else None


def session_of(
    state: MCPState, environ: WSGIEnvironment, msg_id: jsonrpc.RequestId | None, principal: Principal | None
) -> Session:
    """The live session the request names, brought in step with other processes' registry changes.

    :raises Reject: 400 without ``Mcp-Session-Id``, 404 for a session unknown, expired, deleted
        or another principal's.
    """
    session_id = _named(environ, msg_id)
    session = state.sessions.open(session_id, owner_of(principal)) if state.sessions is not None else None
    if session is None:
        raise Reject(session_not_found(state, session_id, msg_id))
    state.keep_in_step(session)
    return session


def check_session(
    state: MCPState, environ: WSGIEnvironment, msg_id: jsonrpc.RequestId | None, principal: Principal | None
) -> Described | None:
    """:func:`session_of` for a request that uses nothing of the session but its being there.

    :returns: the client's declared name and revision, as the session keeps them.
    :raises Reject: as :func:`session_of`.
    """
    # _named and owner_of, spelled out: this runs on every call of a handshake session.
    session_id: str | None = environ.get(SESSION_KEY)
    if not session_id:
        session_id = _named(environ, msg_id)  # raises
    sessions = state.sessions
    owner = principal.subject if principal is not None else None
    live, along, client = sessions.check(session_id, owner) if sessions is not None else (False, None, None)
    if not live:
        raise Reject(session_not_found(state, session_id, msg_id))
    state.keep_in_step_along(along)
    return client


def _named(environ: WSGIEnvironment, msg_id: jsonrpc.RequestId | None) -> str:
    session_id: str | None = environ.get(SESSION_KEY)
    if not session_id:
        raise Reject(error_response(400, f"Bad Request: missing {SESSION_HEADER} header", msg_id=msg_id))
    return session_id


def session_not_found(state: MCPState, session_id: str, msg_id: jsonrpc.RequestId | None) -> Response:
    """The 404 answer for *session_id*, saying so when it was minted by another process of a local store."""
    if state.sessions is not None and state.sessions.minted_elsewhere(session_id):
        data = {"reason": "another_process", "store": "process-local (SimpleCache)"}
        return error_response(404, _ELSEWHERE, SESSION_NOT_FOUND, msg_id=msg_id, data=data)
    return error_response(404, "Session not found", SESSION_NOT_FOUND, msg_id=msg_id)
