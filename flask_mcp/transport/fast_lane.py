"""The fast lane: a POSTed ``tools/call`` of a plain tool, in either era, without the general dispatch.

Most messages a server sees are calls of tools that need none of the
optional steps (:mod:`flask_mcp.core.plain_calls`). For those the general
path (:func:`jsonrpc.parse_message <flask_mcp.protocol.jsonrpc.parse_message>`,
the era's dispatch, :meth:`Server.handle <flask_mcp.core.server.Server.handle>`
and the method table) costs more than the work itself. The lane is two steps:

1. :func:`recognise`, which has no effect: the message's shape, the tool's
   straight path and its arguments, and in the 2026-07-28 era the envelope,
   the routing headers and the revision. Anything it does not vouch for
   (an error to word, a notification, a task, an input round, a tool with
   permissions or hooks, a tracer recording) answers ``None``, and the
   request takes the general path, which answers it as it always did.
2. :func:`answer`: the session (handshake era), the run, the answer, through
   the same functions the general path uses, so both answer alike
   (``tests/transport/test_fast_lane.py`` sends the same requests down both).
   The session's read brings the registry in step with other processes'
   changes (:mod:`flask_mcp.stores.shared_registry`), after :func:`recognise`
   found the tool: when that changed the tool's straight path (the tool was
   disabled, removed or replaced), :func:`answer` declines too, nothing run,
   and the general path answers with the registry as it now is.

A tool that takes a :class:`~flask_mcp.Context` takes the lane too, in a
handshake session or a modern request: its call runs beside its response as
on the general path (:func:`~flask_mcp.transport.streaming.respond_with`),
its context built straight from the call.
"""

from __future__ import annotations

import time
import typing as t

from ..core.audit_calls import SeenClient, error_outcome, record_call, result_outcome
from ..core.client import Call, ClientState
from ..core.context import notifications_asked
from ..core.modern import completed, finish
from ..core.rounds import InputRequired, Round
from ..protocol import jsonrpc
from ..protocol.envelope import (
    CLIENT_CAPABILITIES,
    CLIENT_INFO,
    LOG_LEVEL,
    PROTOCOL_VERSION,
    check_version_of,
    read_envelope,
    served_revision,
)
from ..protocol.jsonrpc import MAX_ID_INTEGER, MCPError
from ..protocol.versions import MODERN_PROTOCOL_VERSIONS, SUPPORTED_PROTOCOL_VERSIONS
from .routing_headers import check_routing_headers, plain_tool_call_headers
from .session_lookup import SESSION_KEY, check_session, session_of
from .status import json_answer
from .streaming import respond_with

if t.TYPE_CHECKING:
    from _typeshed.wsgi import WSGIEnvironment
    from flask import Response

    from ..binding.state import MCPState
    from ..core.audit import AuditSink
    from ..core.context import Channel
    from ..core.plain_calls import PlainCall
    from ..core.rounds import Sealer
    from ..core.server import Server
    from ..policies.principal import Principal

__all__ = ["LaneCall", "answer", "recognise"]

_VERSION_KEY = "HTTP_MCP_PROTOCOL_VERSION"


class LaneCall(t.NamedTuple):
    """A ``tools/call`` the lane answers."""

    request_id: jsonrpc.RequestId
    #: The tool's name, as the call gives it.
    name: str
    #: The registry's table of tools the tool was found in (replaced whole on any change).
    tools: dict[str, t.Any]
    plain: PlainCall
    #: The tool function's keyword arguments.
    kwargs: dict[str, t.Any]
    modern: bool
    #: The call's params, as sent (what the audit trail records).
    params: dict[str, t.Any]


def recognise(state: MCPState, environ: WSGIEnvironment, payload: t.Any) -> LaneCall | None:
    """The call *payload* (a decoded message) is, when the lane may answer it; ``None`` otherwise.

    It has no effect: ``None`` leaves the request to the general path as it came.
    """
    if type(payload) is not dict or payload.get("method") != "tools/call" or payload.get("jsonrpc") != "2.0":
        return None
    request_id: t.Any = payload.get("id")  # a RequestId once checked below
    params = payload.get("params")
    # An integer id, the common one, is checked here: the call costs more than the comparison.
    if type(request_id) is int:
        if not -MAX_ID_INTEGER <= request_id <= MAX_ID_INTEGER:
            return None
    elif not jsonrpc.is_request_id(request_id):
        return None
    if type(params) is not dict:
        return None
    name, arguments, meta = params.get("name"), params.get("arguments"), params.get("_meta")
    if arguments is None:
        arguments = {}
    if type(name) is not str or type(arguments) is not dict or (meta is not None and type(meta) is not dict):
        return None
    if "task" in params or "inputResponses" in params or "requestState" in params:
        return None  # a task, or an input round's answers: more than a plain call
    server = state.server
    version = environ.get(_VERSION_KEY)
    named = meta is not None and PROTOCOL_VERSION in meta
    modern = server.modern_era and (version in MODERN_PROTOCOL_VERSIONS or named)
    if modern:
        if server.sealer is None:
            return None
    elif version is not None and version not in SUPPORTED_PROTOCOL_VERSIONS:
        return None
    tools = server.registry.tools
    plain = server.plain_call(name)
    if plain is None:
        return None
    if plain.context is not None and ((not modern and state.mailbox is None) or server.audit is not None):
        return None  # a tool that talks back: the lane has it in a session or a modern request, unaudited
    if modern and not _modern_checks_pass(state, environ, params, meta, plain):
        return None
    kwargs = plain.load(arguments)
    if kwargs is None:
        return None
    return LaneCall(request_id, name, tools, plain, kwargs, modern, params)


def _modern_checks_pass(
    state: MCPState, environ: WSGIEnvironment, params: dict[str, t.Any], meta: t.Any, plain: PlainCall
) -> bool:
    # What the general path checks of every modern request before it is handled: the common
    # envelope and headers told in one pass, anything else by the general checks, in their order.
    version = served_revision(meta)
    if version is not None and plain_tool_call_headers(environ, plain.tool, params["name"], version):
        return True
    try:
        envelope = read_envelope(params, check_version=False)
        check_routing_headers(environ, "tools/call", params, state.server.registry, envelope.protocol_version)
        check_version_of(envelope)
    except MCPError:
        return False
    return True


def answer(state: MCPState, environ: WSGIEnvironment, call: LaneCall, principal: Principal | None) -> Response | None:
    """Answer *call*, recognised in this request; ``None``: the general path must, as the tool changed since.

    :raises Reject: the handshake session is missing or unknown (as on the general path).
    """
    server = state.server
    if call.plain.context is not None:
        return _streamed(state, environ, call, principal)
    described = None
    if call.modern or state.settings.stateless:
        state.keep_in_step()
    else:
        described = check_session(state, environ, call.request_id, principal)  # a plain tool reads nothing else
    plain, kwargs, modern = call.plain, call.kwargs, call.modern
    if server.registry.tools is not call.tools and server.plain_call(call.name) is not plain:
        return None  # another process's change, just applied, took the tool away or replaced it
    if server.audit is not None:
        response = _audited(server, environ, call, principal, described)
    elif modern:
        response = server.respond(call.request_id, "tools/call", _modern_result, server, plain, kwargs)
    else:
        response = server.respond(call.request_id, "tools/call", plain.run, server, kwargs)
    return json_answer(state, response, modern)


def _streamed(
    state: MCPState, environ: WSGIEnvironment, call: LaneCall, principal: Principal | None
) -> Response | None:
    server, plain = state.server, call.plain
    session = None
    if call.modern:
        state.keep_in_step()
        client = _envelope_client(call)  # the request's envelope is its client
    else:
        # The context reads the session's client state (its capabilities, its log level), as on the general path.
        session = session_of(state, environ, call.request_id, principal)
        client = session.state
        client.session_id = session.id
    if server.registry.tools is not call.tools and server.plain_call(call.name) is not plain:
        return None  # as in answer()

    def handle(channel: Channel) -> dict[str, t.Any]:
        if call.modern:
            return server.respond(call.request_id, "tools/call", _modern_run, server, call, client, channel, principal)
        context = Call(server, client, "tools/call", call.params, call.request_id, channel, principal).context()
        kwargs = {**call.kwargs, t.cast(str, plain.context): context}
        return server.respond(call.request_id, "tools/call", plain.run, server, kwargs)

    quiet = call.modern and not notifications_asked(call.params)
    return respond_with(state, call.request_id, handle, client, session, call.modern, principal, quiet)


def _envelope_client(call: LaneCall) -> ClientState:
    # As modern_request (core.dispatch) makes the client of a request: from its envelope, read
    # straight from _meta, which recognise found well-formed (no Envelope made a second time).
    meta = call.params["_meta"]
    return ClientState(
        protocol_version=meta[PROTOCOL_VERSION],
        client_info=meta.get(CLIENT_INFO),
        capabilities=meta[CLIENT_CAPABILITIES],
        log_level=meta.get(LOG_LEVEL),
    )


def _modern_run(
    server: Server, call: LaneCall, client: ClientState, channel: Channel, principal: Principal | None
) -> dict[str, t.Any]:
    # As modern_request (core.dispatch) runs a call: a question to the client ends the request
    # with an input_required round.
    run = Call(server, client, "tools/call", call.params, call.request_id, channel, principal)
    run.round = Round(run, t.cast("Sealer", server.sealer), server.max_request_state)
    kwargs = {**call.kwargs, t.cast(str, call.plain.context): run.context()}
    try:
        try:
            result = call.plain.run(server, kwargs, in_round=True)
        except InputRequired as pending:
            result = run.round.result(pending)
        return finish(run, result)
    finally:
        run.round = None  # as modern_request does: no cycle of a round and its call left to the collector


def _audited(
    server: Server,
    environ: WSGIEnvironment,
    call: LaneCall,
    principal: Principal | None,
    described: tuple[str | None, str] | None,
) -> dict[str, t.Any]:
    # The client is named by the modern request's envelope, or by the handshake session it declared itself in.
    started, clock = time.time(), time.perf_counter()
    if call.modern:
        response = server.respond(call.request_id, "tools/call", _modern_result, server, call.plain, call.kwargs)
        meta = call.params.get("_meta") or {}  # checked by recognise: a dict with a valid envelope
        client = SeenClient(meta.get(CLIENT_INFO), None, served_revision(meta) or environ.get(_VERSION_KEY) or "")
    else:
        response = server.respond(call.request_id, "tools/call", call.plain.run, server, call.kwargs)
        name, version = described if described is not None else (None, environ.get(_VERSION_KEY) or "")
        client = SeenClient({"name": name} if name is not None else None, environ.get(SESSION_KEY), version)
    error = response.get("error")
    outcome, code = error_outcome(error["code"]) if error is not None else result_outcome(response["result"], None)
    arguments = call.params.get("arguments") or {}
    record_call(
        t.cast("AuditSink", server.audit),
        kind="tool",
        name=call.name,
        arguments=arguments,
        started=started,
        duration=time.perf_counter() - clock,
        outcome=outcome,
        surface="mcp",
        principal=principal,
        state=client,
        tool=call.plain.tool,
        error_code=code,
    )
    return response


def _modern_result(server: Server, plain: PlainCall, kwargs: dict[str, t.Any]) -> dict[str, t.Any]:
    return completed(server, plain.run(server, kwargs, in_round=True))
