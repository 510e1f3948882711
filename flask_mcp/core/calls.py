"""Calling a tool without JSON-RPC, for the REST and CGI adapters.

Both adapters answer ``{"result": value}`` or an error with an HTTP status;
only the wording of their errors differs. The steps are the protocol core's
own (:func:`~flask_mcp.core.methods.tools.load_arguments`,
:func:`~flask_mcp.core.methods.tools.run_tool`, :func:`~flask_mcp.results.convert.tool_value`),
so validation, invocation, masking and conversion are the same on every
surface.
"""

from __future__ import annotations

import logging
import typing as t

import marshmallow as ma

from ..protocol import jsonrpc
from ..protocol.errors import NotFoundError, describe_exception, describe_validation_error
from ..protocol.jsonrpc import PERMISSION_DENIED, RATE_LIMITED, MCPError
from ..results.convert import tool_value
from .methods.tools import load_arguments, run_tool
from .server import Call, ClientState, Server

if t.TYPE_CHECKING:
    from ..policies.principal import Principal

__all__ = ["DirectCallFailed", "Reason", "call_tool_json"]

logger = logging.getLogger("flask_mcp")

#: Why a direct call produced no value.
Reason = t.Literal["unknown_tool", "invalid_arguments", "not_found", "tool_error", "permission_denied", "rate_limited"]

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


def call_tool_json(server: Server, name: str, arguments: dict[str, t.Any], principal: Principal | None = None) -> bytes:
    """Run tool *name* and return ``{"result": value}`` encoded as JSON.

    The call has no channel: a :class:`~flask_mcp.Context`'s notifications
    are dropped and its requests to the client refused.

    :raises DirectCallFailed: unknown tool, invalid arguments, a
        :class:`~flask_mcp.NotFoundError` from the tool, or any other failure
        (detail masked unless the server exposes errors), a permission
        denial or a rate limit.
    :raises Exception: one of ``server.unavailable`` when the store did not answer.

    :param principal: the authenticated caller, as ``tools/call`` would see it.
    """
    tool = server.registry.tools.get(name)
    if tool is None:
        raise DirectCallFailed("unknown_tool", name)
    call = Call(server, ClientState(), "tools/call", {"name": name, "arguments": arguments}, principal=principal)
    try:
        kwargs = load_arguments(call, tool, arguments)
    except ma.ValidationError as exc:
        raise DirectCallFailed("invalid_arguments", describe_validation_error(exc)) from None
    except MCPError as exc:
        if exc.code in _POLICY_REASONS:
            raise DirectCallFailed(_POLICY_REASONS[exc.code], exc.message, exc.data) from None
        raise
    try:
        value = run_tool(call, tool, kwargs)
    except MCPError as exc:
        if exc.code not in _POLICY_REASONS:
            raise DirectCallFailed("tool_error", describe_exception(exc, expose=server.expose_errors)) from None
        raise DirectCallFailed(_POLICY_REASONS[exc.code], exc.message, exc.data) from None
    except NotFoundError as exc:
        raise DirectCallFailed("not_found", str(exc)) from None
    except server.unavailable:
        raise  # the store is down: the adapter answers 503
    except Exception as exc:
        raise DirectCallFailed("tool_error", describe_exception(exc, expose=server.expose_errors)) from None
    try:
        return jsonrpc.encode({"result": tool_value(value, tool.output_schema)})
    except (TypeError, ValueError) as exc:
        # The tool worked but returned something JSON cannot carry (NaN, a custom object).
        logger.exception("tool %r returned a value that is not JSON", name)
        raise DirectCallFailed("tool_error", f"the tool returned a value that cannot be sent as JSON ({exc})") from None
