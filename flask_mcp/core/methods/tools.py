"""``tools/list`` and ``tools/call``."""

from __future__ import annotations

import logging
import typing as t

import marshmallow as ma

from ...policies.execution import ToolTimeout
from ...protocol import jsonrpc
from ...protocol.errors import NotFoundError, StoreRefused, describe_exception, describe_validation_error
from ...protocol.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, MCPError
from ...results.convert import tool_result
from ...results.formats import ErrorType, error_result
from ...results.spill import spill_owner, spill_uri
from ..approval import Approval
from ..approve import approve
from ..calls import check_arguments, execute_tool
from ..input_requests import InputError
from ..result_cache import keep_result
from ..task_start import start_task
from .listing import list_page

if t.TYPE_CHECKING:
    from ...components.model import Tool
    from ..client import Call
    from ..server import Server

logger = logging.getLogger("flask_mcp")


def _describe_arguments_error(exc: ma.ValidationError) -> str:
    # Unknown names first, sorted, in one clause: the model sees at once what to drop.
    listed: list[str] = getattr(exc, "unknown_arguments", [])
    if not listed:
        return describe_validation_error(exc)
    unknown = set(listed)
    rest = {k: v for k, v in exc.messages.items() if k not in unknown} if isinstance(exc.messages, dict) else {}
    clause = f"unknown argument(s): {', '.join(listed)}"
    more = getattr(exc, "unknown_count", len(listed)) - len(listed)
    if more > 0:
        clause += f" and {more} more"
    return f"{clause}; {describe_validation_error(ma.ValidationError(rest))}" if rest else clause


def list_tools(call: Call) -> dict[str, t.Any]:
    """One page of tool descriptors."""
    return list_page(call, "tools")


def _failure(exc: Exception, server: Server, tool: Tool) -> tuple[ErrorType, str, t.Any]:
    if isinstance(exc, ToolTimeout):
        return "timeout", str(exc), {"timeout": exc.seconds}
    if isinstance(exc, NotFoundError):
        return "not_found", str(exc), None
    if isinstance(exc, ma.ValidationError):
        return "validation_error", describe_validation_error(exc), exc.messages
    return "service_error", describe_exception(exc, expose=server.expose_errors), None


def call_tool(call: Call) -> dict[str, t.Any]:
    """Validate the arguments, run the tool and convert what it returned.

    Failures of the tool itself (bad arguments, exceptions, time-outs) are
    results with ``isError`` so the model can see them and correct itself,
    worded by the tool's error format; only a call that names no known tool
    is a protocol error, and a result that breaks the tool's own
    ``outputSchema`` is a server error. A tool that runs as a task
    (:mod:`flask_mcp.core.tasks`) answers with the task instead, once the
    caller is admitted and the arguments are valid.
    """
    name = call.param("name", str)
    arguments = call.param("arguments", dict, required=False) or {}
    tool = call.server.registry.tools.get(name)
    if tool is None:
        raise MCPError(INVALID_PARAMS, f"Unknown tool: {name}")
    call.component = tool
    try:
        loaded = check_arguments(call, tool, arguments)
    except ma.ValidationError as exc:
        return _invalid_arguments(tool, arguments, exc)
    approval = call.approval = approve(call, tool, arguments)  # before a task is created, too
    if not approval.granted:
        return not_approved(tool, approval)
    if tool.task_support != "forbidden" or call.params.get("task") is not None:
        created = start_task(call, tool, arguments)
        if created is not None:
            return created
    return complete_call(call, tool, loaded, arguments)


def _invalid_arguments(tool: Tool, arguments: dict[str, t.Any], exc: ma.ValidationError) -> dict[str, t.Any]:
    policy = tool.resolved
    return error_result(
        f"Invalid arguments: {_describe_arguments_error(exc)}",
        error_type="validation_error",
        detail=exc.messages,
        value=arguments,
        include_value=policy.include_validation_value,
        error_format=policy.error_format,
    )


def not_approved(tool: Tool, approval: Approval) -> dict[str, t.Any]:
    """The result of a call the human did not approve: it says so, and that nothing ran."""
    how = {"declined": "declined", "cancelled": "cancelled", "expired": "did not answer in time for"}[approval.outcome]
    return error_result(
        f"The user {how} the approval of {tool.name!r}: the tool did not run and nothing was changed",
        error_type="not_approved",
        detail={"approval": approval.outcome},
        error_format=tool.resolved.error_format,
    )


def run_in_task(call: Call, tool: Tool, arguments: dict[str, t.Any]) -> dict[str, t.Any]:
    """Run an admitted call of *tool* as its task does: validated again, not admitted again.

    :raises MCPError: one the tool raised: it fails the task with that error.
    """
    try:
        loaded = tool.load_arguments(arguments)
    except ma.ValidationError as exc:
        return _invalid_arguments(tool, arguments, exc)
    return complete_call(call, tool, loaded, arguments, protocol_errors=True)


def complete_call(
    call: Call, tool: Tool, loaded: t.Any, arguments: dict[str, t.Any], *, protocol_errors: bool = False
) -> dict[str, t.Any]:
    """Run *tool* with its validated arguments and convert what it returned into the ``CallToolResult``.

    :param protocol_errors: let an :class:`~flask_mcp.MCPError` the tool raised through (a task's
        run, which it fails), instead of making it an error result.
    """
    try:
        value = execute_tool(call, tool, loaded, arguments.keys())
    except Exception as exc:
        if protocol_errors and isinstance(exc, MCPError) and not isinstance(exc, InputError):
            raise
        return failed(call.server, tool, exc, in_round=call.round is not None)
    result = converted(tool, value)
    if call.cache_outcome == "miss":
        keep_result(call, tool, result)  # whole: a hit is limited (or spilled) afresh, like a run
    if tool.resolved.max_result_bytes is not None:
        return _limit_size(call, tool, result)
    return result


def failed(server: Server, tool: Tool, exc: Exception, *, in_round: bool = False) -> dict[str, t.Any]:
    """The error result of a run of *tool* that raised *exc*, worded by the tool's error format.

    :param in_round: the call is a modern one that may answer ``input_required``.
    :raises Exception: *exc* itself when it is the request's failure, not the tool's: in a round,
        an :class:`~flask_mcp.core.input_requests.InputError` (the modern era's protocol error,
        -32021 or -32602); anywhere, the store's refusal of the caller (a 429 for the request).
    """
    if (in_round and isinstance(exc, InputError)) or isinstance(exc, StoreRefused):
        raise exc
    error_type, message, detail = _failure(exc, server, tool)
    return error_result(message, error_type=error_type, detail=detail, error_format=tool.resolved.error_format)


def converted(tool: Tool, value: t.Any) -> dict[str, t.Any]:
    """The ``CallToolResult`` of *value*, what a run of *tool* returned.

    A value JSON cannot carry (``NaN``, a custom object) is an error result saying so,
    rather than a misleading "tool failed".

    :raises MCPError: -32603 when the tool advertises an ``outputSchema`` and the result has no
        ``structuredContent`` (:func:`_check_structured`).
    """
    policy = tool.resolved
    try:
        result = tool_result(
            value,
            tool.output_schema,
            output_format=policy.output_format,
            structured=policy.include_structured_content,
            tool=tool.name,
        )
    except (TypeError, ValueError) as exc:
        logger.exception("tool %r returned a value that is not JSON", tool.name)
        return error_result(
            f"the tool returned a value that cannot be sent as JSON ({exc})", error_format=policy.error_format
        )
    _check_structured(tool, result)
    return result


def _check_structured(tool: Tool, result: dict[str, t.Any]) -> None:
    """Refuse a success without ``structuredContent`` from a tool that advertises an ``outputSchema``.

    Whether the content fits the schema was checked when the result was
    built (:func:`~flask_mcp.results.convert.tool_result`); a result with none
    at all (a :class:`~flask_mcp.ToolResult` that left it out) is the one
    case left, and clients would reject it as well.
    """
    if (
        result.get("isError")
        or result.get("structuredContent") is not None
        or tool.descriptor.get("outputSchema") is None
    ):
        return
    raise MCPError(INTERNAL_ERROR, f"Tool {tool.name!r} advertises an outputSchema but sent no structuredContent")


def _limit_size(call: Call, tool: Tool, result: dict[str, t.Any]) -> dict[str, t.Any]:
    """Enforce ``max_result_bytes``: an error result, or a link to the spilled result."""
    policy = tool.resolved
    limit = t.cast(int, policy.max_result_bytes)
    encoded = jsonrpc.dumps(result)
    size = len(encoded.encode("utf-8"))
    if size <= limit:
        return result
    store = call.server.result_store
    if not policy.spill_to_resource or store is None:
        return error_result(
            f"the result is {size} bytes, over this tool's limit of {limit} bytes; "
            "ask for less at a time (use the tool's paging or filter arguments)",
            detail={"size": size, "limit": limit},
            error_format=policy.error_format,
        )
    structured = result.get("structuredContent")
    first = result["content"][0] if result.get("content") else {}
    if structured is not None:
        text, mime_type = jsonrpc.dumps(structured), "application/json"
    elif first.get("type") == "text" and len(result["content"]) == 1:
        text, mime_type = first["text"], "text/plain"
    else:  # content blocks of other kinds: the whole result, as JSON
        text, mime_type = encoded, "application/json"
    owner = spill_owner(call.principal, call.state.session_id)
    token = store.put(text, mime_type, policy.spill_ttl, owner, caller=call.caller)
    uri = spill_uri(token)
    notice = (
        f"The result is {size} bytes, over this tool's limit of {limit} bytes. It is stored as {uri} "
        f"for {policy.spill_ttl} seconds: read it with resources/read."
    )
    link = {
        "type": "resource_link",
        "uri": uri,
        "name": f"{tool.name} result",
        "mimeType": mime_type,
        "size": len(text.encode("utf-8")),
    }
    return {"content": [{"type": "text", "text": notice}, link]}
