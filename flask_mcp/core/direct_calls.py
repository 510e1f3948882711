"""Tool calls without JSON-RPC: REST and CGI run a tool and answer its plain value.

The steps are those of ``tools/call`` (:mod:`flask_mcp.core.calls`): admit,
validate, approve, run; a failure is a :class:`DirectCallFailed` whose
reason the adapter words and maps to an HTTP status. A call is recorded in
the audit trail as it ends (:mod:`flask_mcp.core.audit_calls`).
"""

from __future__ import annotations

import logging
import time
import typing as t

import marshmallow as ma

from ..protocol import jsonrpc
from ..protocol.errors import NotFoundError, describe_exception, describe_validation_error
from ..protocol.jsonrpc import PERMISSION_DENIED, RATE_LIMITED, MCPError
from ..results.convert import tool_value
from ..results.output import OutputMismatch
from .approval_pages import URL_ELICITATION_REQUIRED
from .approve import approve
from .audit import Outcome, Surface
from .audit_calls import record_ended
from .calls import check_arguments, execute_tool
from .client import Call, ClientState

if t.TYPE_CHECKING:
    from ..components.model import Tool
    from ..policies.principal import Principal
    from .server import Server

__all__ = ["DirectCallFailed", "Reason", "call_tool_json"]

logger = logging.getLogger("flask_mcp")


#: Why a direct call produced no value.
Reason = t.Literal[
    "unknown_tool",
    "invalid_arguments",
    "not_found",
    "tool_error",
    "permission_denied",
    "rate_limited",
    "approval_required",
]

#: Protocol errors a direct call reports as themselves rather than as a tool failure.
_POLICY_REASONS: dict[int, Reason] = {PERMISSION_DENIED: "permission_denied", RATE_LIMITED: "rate_limited"}


class DirectCallFailed(Exception):
    """A direct tool call failed; the adapter words it and picks the status.

    :param reason: what went wrong.
    :param message: the detail (tool name, field messages, the tool's message).
    :param data: the error's ``data`` for ``permission_denied`` (``requiredScopes``)
        and ``rate_limited`` (``retryAfter``).
    """

    def __init__(self, reason: Reason, message: str, data: t.Any = None) -> None:
        super().__init__(message)
        self.reason: Reason = reason
        self.message = message
        self.data = data

    @property
    def policy_code(self) -> int | None:
        """The JSON-RPC code of a permission denial or rate limit, so adapters can map it like HTTP does."""
        return next((code for code, reason in _POLICY_REASONS.items() if reason == self.reason), None)


def call_tool_json(
    server: Server,
    name: str,
    arguments: dict[str, t.Any],
    principal: Principal | None = None,
    surface: Surface = "rest",
) -> bytes:
    """Run tool *name* and return ``{"result": value}`` encoded as JSON.

    The call has no channel: a :class:`~flask_mcp.Context`'s notifications
    are dropped and its requests to the client refused.

    :raises DirectCallFailed: unknown tool, invalid arguments, a
        :class:`~flask_mcp.NotFoundError` from the tool, or any other failure
        (detail masked unless the server exposes errors; a value that does
        not fit the output schema is described as ``tools/call`` describes
        it), a permission denial or a rate limit.
    :raises Exception: one of ``server.unavailable`` when the store did not answer.

    :param principal: the authenticated caller, as ``tools/call`` would see it.
    :param surface: ``"rest"`` or ``"cgi"``, as the audit trail records the call.
    """
    call = Call(server, ClientState(surface=surface), "tools/call", {"name": name, "arguments": arguments})
    call.principal = principal
    sink = server.audit
    if sink is None:
        return _traced_call(server, call, name, arguments)
    started, clock = time.time(), time.perf_counter()
    try:
        body = _traced_call(server, call, name, arguments)
    except DirectCallFailed as exc:
        outcome, code = _DIRECT_OUTCOMES.get(exc.reason, ("tool_error", None))
        if exc.policy_code is not None:
            code = str(exc.policy_code)
        elif exc.reason == "approval_required" and call.approval is not None and not call.approval.granted:
            code = "not_approved"
        record_ended(sink, call, "tool", name, arguments, started, clock, outcome, code)
        raise
    record_ended(sink, call, "tool", name, arguments, started, clock, "ok", None)
    return body


#: How a direct call that failed for each reason ended, and its code, in the audit trail.
_DIRECT_OUTCOMES: dict[Reason, tuple[Outcome, str | None]] = {
    "unknown_tool": ("refused", "unknown_tool"),
    "permission_denied": ("refused", None),
    "rate_limited": ("rate_limited", None),
    "approval_required": ("refused", "approval_required"),
}


def _traced_call(server: Server, call: Call, name: str, arguments: dict[str, t.Any]) -> bytes:
    tracer = server.tracer
    if tracer is None:
        return _call_tool_json(server, call, name, arguments)
    with tracer.message("tools/call", {"name": name, "arguments": arguments}, None, ClientState()) as trace:
        try:
            body = _call_tool_json(server, call, name, arguments)
        except DirectCallFailed as exc:
            trace.failed(exc.reason, exc.message, exc.policy_code)
            raise
        trace.answered(None)
        return body


def _call_tool_json(server: Server, call: Call, name: str, arguments: dict[str, t.Any]) -> bytes:
    tool = server.registry.tools.get(name)
    if tool is None:
        raise DirectCallFailed("unknown_tool", name)
    call.component = tool
    call.cacheable = False  # the tool runs: its plain value is the answer, not a kept CallToolResult
    try:
        loaded = check_arguments(call, tool, arguments)
    except ma.ValidationError as exc:
        raise DirectCallFailed("invalid_arguments", describe_validation_error(exc)) from None
    except MCPError as exc:
        if exc.code in _POLICY_REASONS:
            raise DirectCallFailed(_POLICY_REASONS[exc.code], exc.message, exc.data) from None
        raise
    _approved(call, tool, arguments)
    try:
        value = execute_tool(call, tool, loaded, arguments.keys())
    except MCPError as exc:
        if exc.code not in _POLICY_REASONS:
            raise DirectCallFailed("tool_error", describe_exception(exc, expose=server.expose_errors)) from None
        raise DirectCallFailed(_POLICY_REASONS[exc.code], exc.message, exc.data) from None
    except NotFoundError as exc:
        raise DirectCallFailed("not_found", str(exc)) from None
    except ma.ValidationError as exc:  # a value the tool found invalid itself (a route's URL variable)
        raise DirectCallFailed("invalid_arguments", describe_validation_error(exc)) from None
    except server.unavailable:
        raise  # the store is down: the adapter answers 503
    except Exception as exc:
        raise DirectCallFailed("tool_error", describe_exception(exc, expose=server.expose_errors)) from None
    try:
        return jsonrpc.encode({"result": tool_value(value, tool.output_schema, tool=name)})
    except OutputMismatch as exc:  # logged where it was found
        raise DirectCallFailed("tool_error", exc.message) from None
    except (TypeError, ValueError) as exc:
        # The tool worked but returned something JSON cannot carry (NaN, a custom object).
        logger.exception("tool %r returned a value that is not JSON", name)
        raise DirectCallFailed("tool_error", f"the tool returned a value that cannot be sent as JSON ({exc})") from None


def _approved(call: Call, tool: Tool, arguments: dict[str, t.Any]) -> None:
    # Nobody can be shown a form over plain JSON: only the approval page can approve a direct call.
    try:
        approval = approve(call, tool, arguments)
    except MCPError as exc:
        if exc.code == URL_ELICITATION_REQUIRED:
            raise DirectCallFailed("approval_required", exc.message, exc.data) from None
        raise DirectCallFailed(
            "approval_required",
            f"the tool {tool.name!r} runs only once the user approves it, which this endpoint cannot ask for; "
            "call it over MCP from a client that can show the question",
        ) from None
    call.approval = approval
    if not approval.granted:
        raise DirectCallFailed(
            "approval_required", f"the user {approval.outcome} the call of {tool.name!r}: nothing ran"
        )
