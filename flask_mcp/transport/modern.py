"""Streamable HTTP in the modern era (2026-07-28): one POST, one answer, nothing remembered.

A modern request is served by whichever worker receives it: no session is
read or minted, ``Mcp-Session-Id`` and ``Last-Event-ID`` are ignored. In
order, the request's envelope must be complete (-32602), its routing
headers must agree with its body (-32020,
:mod:`~flask_mcp.transport.routing_headers`) and its revision must be one
served (-32022); then the protocol core answers it. Errors carry HTTP
statuses the revision defines: 404 for an unknown method, 400 for the
others it names, 403/429/503 as in the handshake era.

A handler that takes a :class:`~flask_mcp.Context` answers with an event
stream when it reports progress or logs (:mod:`~flask_mcp.transport.streaming`);
``subscriptions/listen`` always does (:mod:`~flask_mcp.transport.listen`).
"""

from __future__ import annotations

import typing as t

from flask import Response

from ..core.client import ClientState
from ..protocol import jsonrpc
from ..protocol.envelope import check_version_of, read_envelope
from ..protocol.jsonrpc import INVALID_REQUEST, MCPError
from . import listen, streaming
from .routing_headers import check_routing_headers
from .status import json_answer

if t.TYPE_CHECKING:
    from _typeshed.wsgi import WSGIEnvironment

    from ..binding.state import MCPState
    from ..policies.principal import Principal

__all__ = ["post"]


def post(state: MCPState, environ: WSGIEnvironment, message: jsonrpc.Message, principal: Principal | None) -> Response:
    """Serve one modern message POSTed to the endpoint."""
    if isinstance(message, jsonrpc.Response):
        # The modern era has no server-to-client requests, so nothing to answer.
        error = MCPError(INVALID_REQUEST, "Invalid Request: clients do not send responses in the 2026-07-28 revision")
        return json_answer(state, jsonrpc.failure(None, error), modern=True)
    try:
        if isinstance(message, jsonrpc.Notification):
            # No client notification means anything over HTTP in this revision
            # (closing a stream is how a request is cancelled): accepted (its
            # params were checked as it was read), and dropped.
            return Response(status=202)
        envelope = read_envelope(message.params, check_version=False)
        check_routing_headers(environ, message.method, message.params, state.server.registry, envelope.protocol_version)
        check_version_of(envelope)
    except MCPError as exc:
        return json_answer(state, jsonrpc.failure(getattr(message, "id", None), exc), modern=True)
    state.keep_in_step()
    if message.method == "subscriptions/listen":
        return listen.respond(state, message, principal)
    if state.server.needs_channel(message):
        return streaming.respond(state, message, ClientState(), principal, modern=True)
    response = t.cast(
        dict[str, t.Any], state.server.handle(message, ClientState(), principal=principal, envelope=envelope)
    )
    return json_answer(state, response, modern=True)
