"""A request's era, and its method table: where :meth:`Server.handle <flask_mcp.core.server.Server.handle>`
sends a request once it knows which revision it speaks.

A 2025-11-25 request is served with the client state of its session; a
2026-07-28 one with the client its ``_meta`` envelope describes, and in an
input round when it is a call, a read or a get (:mod:`flask_mcp.core.rounds`).
Either is recorded in the audit trail as it ends (:mod:`flask_mcp.core.audit_calls`).
"""

from __future__ import annotations

import typing as t

from ..protocol import jsonrpc
from ..protocol.envelope import Envelope, read_envelope
from ..protocol.jsonrpc import MCPError
from ..protocol.params import validate_params
from . import modern
from .audit import Surface
from .audit_calls import audited
from .client import Call, ClientState
from .context import Channel
from .methods import HANDLERS, MODERN_HANDLERS
from .rounds import ROUND_METHODS, InputRequired, Round

if t.TYPE_CHECKING:
    from ..policies.principal import Principal
    from .server import Server

__all__ = ["handshake_request", "modern_request"]


def handshake_request(
    server: Server, message: jsonrpc.Request, state: ClientState, channel: Channel | None, principal: Principal | None
) -> dict[str, t.Any]:
    """The result of a 2025-11-25 request, from the handshake era's method table, with the session's *state*.

    :raises MCPError: -32601 for a method the era does not have, -32602 for invalid params, or the handler's.
    """
    handler = HANDLERS.get(message.method)
    if handler is None:
        raise MCPError(jsonrpc.METHOD_NOT_FOUND, f"Method not found: {message.method}")
    # Every method's params are checked alike before its handler reads them (-32602).
    params = validate_params(message.method, message.params)
    call = Call(server, state, message.method, params, message.id, channel, principal)
    return handler(call) if server.audit is None else audited(server, call, handler)


def modern_request(
    server: Server,
    message: jsonrpc.Request,
    channel: Channel | None,
    principal: Principal | None,
    envelope: Envelope | None,
    surface: Surface = "mcp",
) -> dict[str, t.Any]:
    """The result of a 2026-07-28 request, from the modern era's method table: the request says everything
    about its client (*envelope*, read here unless the transport did), nothing is read from a session; a
    call, read or get that asks the client something answers ``input_required``.

    :raises MCPError: -32601 for a method the era does not have, -32602 for invalid params, or the handler's.
    """
    if envelope is None:
        envelope = read_envelope(message.params)
    handler = MODERN_HANDLERS.get(message.method)
    if handler is None:
        removed = " (removed in the 2026-07-28 revision)" if message.method in modern.MODERN_REMOVED else ""
        raise MCPError(jsonrpc.METHOD_NOT_FOUND, f"Method not found: {message.method}{removed}", message.method)
    params = validate_params(message.method, message.params)
    client = ClientState(
        protocol_version=envelope.protocol_version,
        client_info=envelope.client_info,
        capabilities=envelope.capabilities,
        log_level=envelope.log_level,
        surface=surface,
    )
    call = Call(server, client, message.method, params, message.id, channel, principal)
    if message.method in ROUND_METHODS:
        if server.sealer is None:
            raise MCPError(jsonrpc.INTERNAL_ERROR, "input rounds need a requestState sealer; none was given")
        call.round = Round(call, server.sealer, server.max_request_state, lenient=_asks_approval(server, call))
    try:
        try:
            result = handler(call) if server.audit is None else audited(server, call, handler)
        except InputRequired as pending:
            result = t.cast(Round, call.round).result(pending)
        return modern.finish(call, result)
    finally:
        # A round refers to its call: without this the two (and everything the call holds) would
        # wait for the garbage collector, whose passes cost every request of a busy server.
        call.round = None


def _asks_approval(server: Server, call: Call) -> bool:
    # A call of a tool that needs approval asks again rather than fail on a state it cannot trust.
    if call.method != "tools/call":
        return False
    tool = server.registry.tools.get(call.params.get("name"))  # type: ignore[arg-type]
    return tool is not None and tool.confirmation is not None
