"""One path for a call: admit, bind, run, convert.

``tools/call`` and ``resources/read`` (:mod:`flask_mcp.core.methods`), the
REST and CGI adapters and the CLI all go through these steps, so
permissions, rate limits, validation, invocation, masking and conversion
are the same on every surface:

* :func:`load_arguments` admits the caller and binds the arguments;
* :func:`run_tool` invokes the tool (in its transaction, within its time limit);
* :func:`read_contents` admits the caller and reads a resource;
* :func:`read_resource` runs those steps for an adapter that speaks plain
  JSON rather than JSON-RPC, as :func:`~flask_mcp.core.direct_calls.call_tool_json`
  does for a tool: they build the :class:`~flask_mcp.core.client.Call`
  themselves, so no adapter fakes one.
"""

from __future__ import annotations

import logging
import typing as t

import marshmallow as ma

from ..components.model import Resource, ResourceTemplate
from ..components.signature_checks import unsupplied_message
from ..policies.execution import in_transaction, with_timeout
from ..protocol.errors import NotFoundError, ToolError, describe_validation_error, is_expected
from ..protocol.jsonrpc import INVALID_PARAMS, RESOURCE_NOT_FOUND, MCPError
from ..results.convert import resource_contents
from ..results.spill import spill_owner, spill_token
from .audit_calls import audited
from .client import Call, ClientState
from .hooks import resource_read, tool_called
from .result_cache import cached_value, watching_questions

if t.TYPE_CHECKING:
    from ..components.model import Tool
    from ..policies.principal import Principal
    from .server import Server

__all__ = [
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
    call = Call(server, ClientState(surface="rest"), "resources/read", {"uri": uri}, principal=principal)

    def read(call: Call) -> dict[str, t.Any]:
        return read_contents(call, server.bounded_uri(uri))

    tracer = server.tracer
    if tracer is None:
        return read(call) if server.audit is None else audited(server, call, read)
    with tracer.message("resources/read", call.params, None, call.state) as trace:
        try:
            result = read(call) if server.audit is None else audited(server, call, read)
        except MCPError as exc:
            trace.failed(str(exc.code), exc.message, exc.code)
            raise
        trace.answered(None)
        return result
