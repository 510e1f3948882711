"""One path for a call: admit, bind, run, convert.

``tools/call`` and ``resources/read`` (:mod:`flask_mcp.core.methods`), the
REST and CGI adapters and the CLI all go through these steps, so
permissions, rate limits, validation, invocation, masking and conversion
are the same on every surface:

* :func:`load_arguments` admits the caller and binds the arguments;
* :func:`run_tool` invokes the tool (in its transaction, within its time limit);
* :func:`read_contents` admits the caller and reads a resource;
* :func:`call_tool_json` and :func:`read_resource` run those steps for
  adapters that speak plain JSON rather than JSON-RPC: they build the
  :class:`~flask_mcp.core.server.Call` themselves, so no adapter fakes one.
"""

from __future__ import annotations

import logging
import typing as t

import marshmallow as ma

from ..components.model import Resource, ResourceTemplate
from ..components.signature_checks import unsupplied_message
from ..policies.execution import in_transaction, with_timeout
from ..protocol import jsonrpc
from ..protocol.errors import NotFoundError, ToolError, describe_exception, describe_validation_error, is_expected
from ..protocol.jsonrpc import INVALID_PARAMS, PERMISSION_DENIED, RATE_LIMITED, RESOURCE_NOT_FOUND, MCPError
from ..results.convert import resource_contents, tool_value
from ..results.output import OutputMismatch
from ..results.spill import spill_owner, spill_token
from .approval_pages import URL_ELICITATION_REQUIRED
from .approve import approve
from .client import Call, ClientState
from .hooks import resource_read, tool_called
from .result_cache import cached_value, watching_questions

if t.TYPE_CHECKING:
    from ..components.model import Tool
    from ..policies.principal import Principal
    from .server import Server

__all__ = [
    "DirectCallFailed",
    "Reason",
    "call_tool_json",
    "check_arguments",
    "execute_tool",
    "load_arguments",
    "not_found",
    "note_failure",
    "read_contents",
    "read_resource",
    "run_tool",
]

logger = logging.getLogger("flask_mcp")


# -- tools -------------------------------------------------------------------------------------


def load_arguments(call: Call, tool: Tool, arguments: dict[str, t.Any]) -> dict[str, t.Any]:
    """Validate *arguments* and build the tool function's keyword arguments.

    Shared by ``tools/call`` and :func:`call_tool_json`, so every surface validates and binds
    alike (policies, ``kwargs`` provider, the server's seeds). The caller's
    permissions and rate limits are checked first, on both.

    :raises MCPError: permission denied or rate limited.
    :raises marshmallow.ValidationError: naming the offending fields.
    """
    return tool.binder.bind(call, check_arguments(call, tool, arguments), arguments.keys())


def check_arguments(call: Call, tool: Tool, arguments: dict[str, t.Any]) -> t.Any:
    """Admit the caller and validate *arguments*: the tool's loaded arguments, not yet bound.

    :raises MCPError: permission denied or rate limited.
    :raises marshmallow.ValidationError: naming the offending fields.
    """
    call.server.admit(call, "tool", tool, arguments)
    tool.complete()
    if tool.refused is not None:
        return arguments  # refused when it runs (execute_tool), whatever the arguments: no validation to report
    return tool.load_arguments(arguments)


def execute_tool(call: Call, tool: Tool, loaded: t.Any, sent: t.Collection[str]) -> t.Any:
    """Bind *loaded* (from :func:`check_arguments`) and run *tool* between the hooks (:mod:`.hooks`).

    :param sent: the argument names the caller gave.
    """
    if tool.refused is not None:
        raise ToolError(tool.refused)
    hooks = call.server.hooks
    route = call.server.route_for(tool.func) if call.server.route_for is not None else None
    if route is None and tool.unsupplied:
        # Left at registration to the URL of a route whose view the function is: it is none here.
        raise ToolError(unsupplied_message(tool.name, tool.unsupplied))
    if route is not None:
        # The function is also a route's view: the route gets every validated
        # argument (path, query or body), not just the function's parameters.
        def through_route(arguments: t.Any) -> t.Any:
            return run_tool(call, tool, dict(arguments), route)

        if not hooks.engaged(tool_called):
            return through_route(loaded)
        return hooks.run(call, "tool", tool.name, loaded, through_route, tool_called)
    if not hooks.engaged(tool_called):
        return run_tool(call, tool, tool.binder.bind(call, loaded, sent))

    def handler(arguments: t.Any) -> t.Any:
        # Names a before_call hook added count as the caller's.
        given = set(sent).union(arguments) if isinstance(arguments, dict) else sent
        return run_tool(call, tool, tool.binder.bind(call, arguments, given))

    return hooks.run(call, "tool", tool.name, loaded, handler, tool_called)


def run_tool(call: Call, tool: Tool, kwargs: dict[str, t.Any], func: t.Callable[..., t.Any] | None = None) -> t.Any:
    """Invoke *tool* (or *func* in its place) through the server's invoker and return what it returned.

    An atomic tool runs inside the server's transaction hook; a tool with a
    time limit runs in a worker thread waited on for that long. An
    unexpected exception (a bug rather than a :class:`~flask_mcp.ToolError`)
    is logged here, once for every transport, then raised again.

    :raises ToolTimeout: when the tool's time limit passed.
    """
    server = call.server
    if tool.result_ttl is not None and call.cacheable:
        kept = cached_value(call, tool, func)
        if kept is not None:
            return kept  # the same arguments answered before: the tool does not run

    def run() -> t.Any:
        return server.invoke(func or tool.func, kwargs)

    if tool.policy.atomic:
        plain = run

        def run() -> t.Any:
            if server.transaction is None:
                raise RuntimeError(f"tool {tool.name!r} is atomic but the MCP extension has no transaction hook")
            return in_transaction(server.transaction, plain)

    try:
        timeout = tool.resolved.timeout
        if call.cache_outcome == "miss":
            with watching_questions(call):  # a question asked while it runs keeps the result from being kept
                return with_timeout(timeout, run) if timeout is not None else run()
        return with_timeout(timeout, run) if timeout is not None else run()
    except Exception as exc:
        note_failure(tool, exc)
        raise


def note_failure(tool: Tool, exc: Exception) -> None:
    """Log *exc*, which a run of *tool* raised, when it is a bug rather than a failure meant for the caller.

    Called while *exc* is being handled, once for every transport and path.
    """
    if not is_expected(exc):
        logger.exception("tool %r failed", tool.name)


# -- resources ---------------------------------------------------------------------------------


def not_found(uri: str, modern: bool = False) -> MCPError:
    """The error for a URI no resource answers to: -32002, or -32602 in the modern era."""
    return MCPError(INVALID_PARAMS if modern else RESOURCE_NOT_FOUND, f"Resource not found: {uri}", {"uri": uri})


def read_contents(call: Call, uri: str) -> dict[str, t.Any]:
    """The ``resources/read`` result for *uri*: a spilled tool result, a static resource or a template's.

    Shared by ``resources/read`` and the REST adapter. The caller's
    permissions are checked before the template's variables are validated.

    :raises MCPError: -32002 (-32602 in the modern era) when nothing answers to *uri* (or its handler
        raised :class:`~flask_mcp.NotFoundError`), -32602 for invalid
        template variables, a permission denial or a rate limit.
    """
    token = spill_token(uri)
    if token is not None:
        return _read_spilled(call, uri, token)
    found = call.server.registry.find_resource(uri)
    if found is None:
        raise not_found(uri, call.state.modern)
    resource, variables = found
    call.component = resource
    call.server.admit(call, "resource", resource, variables)
    kwargs: dict[str, t.Any] = {}
    if isinstance(resource, ResourceTemplate):
        try:
            kwargs = resource.load_variables(variables)
        except ma.ValidationError as exc:
            raise MCPError(INVALID_PARAMS, f"Invalid params: {describe_validation_error(exc)}", {"uri": uri}) from None
    try:
        hooks = call.server.hooks
        if hooks.engaged(resource_read):
            value = hooks.run(call, "resource", uri, kwargs, lambda args: _invoke(call, resource, args), resource_read)
        else:
            value = _invoke(call, resource, kwargs)
    except NotFoundError:
        raise not_found(uri, call.state.modern) from None
    contents = resource_contents(value, uri, resource.mime_type, resource.output_schema)
    meta = getattr(resource, "content_meta", None)
    if meta:
        contents = [{**item, "_meta": meta} for item in contents]
    return {"contents": contents}


def _invoke(call: Call, resource: Resource | ResourceTemplate, kwargs: dict[str, t.Any]) -> t.Any:
    if resource.context_param:
        kwargs = {**kwargs, resource.context_param: call.context()}
    return call.server.invoke(resource.func, kwargs)


def _read_spilled(call: Call, uri: str, token: str) -> dict[str, t.Any]:
    # A tool's oversized result, kept for the caller (and session) whose call produced it.
    store = call.server.result_store
    stored = store.get(token, spill_owner(call.principal, call.state.session_id)) if store is not None else None
    if stored is None:
        raise not_found(uri, call.state.modern)
    text, mime_type = stored
    return {"contents": [{"uri": uri, "mimeType": mime_type, "text": text}]}


def read_resource(server: Server, uri: str, principal: Principal | None = None) -> dict[str, t.Any]:
    """:func:`read_contents` for an adapter without a session: the ``resources/read`` result for *uri*.

    :raises MCPError: as :func:`read_contents`, and -32602 for a URI longer
        than the server allows.
    :raises Exception: one of ``server.unavailable`` when the store did not answer.
    """
    call = Call(server, ClientState(), "resources/read", {"uri": uri}, principal=principal)
    tracer = server.tracer
    if tracer is None:
        return read_contents(call, server.bounded_uri(uri))
    with tracer.message("resources/read", call.params, None, call.state) as trace:
        try:
            result = read_contents(call, server.bounded_uri(uri))
        except MCPError as exc:
            trace.failed(str(exc.code), exc.message, exc.code)
            raise
        trace.answered(None)
        return result


# -- tool calls without JSON-RPC ---------------------------------------------------------------


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


def call_tool_json(server: Server, name: str, arguments: dict[str, t.Any], principal: Principal | None = None) -> bytes:
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
    """
    tracer = server.tracer
    if tracer is None:
        return _call_tool_json(server, name, arguments, principal)
    with tracer.message("tools/call", {"name": name, "arguments": arguments}, None, ClientState()) as trace:
        try:
            body = _call_tool_json(server, name, arguments, principal)
        except DirectCallFailed as exc:
            trace.failed(exc.reason, exc.message, exc.policy_code)
            raise
        trace.answered(None)
        return body


def _call_tool_json(server: Server, name: str, arguments: dict[str, t.Any], principal: Principal | None) -> bytes:
    tool = server.registry.tools.get(name)
    if tool is None:
        raise DirectCallFailed("unknown_tool", name)
    call = Call(server, ClientState(), "tools/call", {"name": name, "arguments": arguments}, principal=principal)
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
