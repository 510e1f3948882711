"""``tools/list`` and ``tools/call``."""

from __future__ import annotations

import logging
import typing as t

import marshmallow as ma

from ..errors import describe_exception, describe_validation_error, is_expected
from ..jsonrpc import INVALID_PARAMS, MCPError
from ..results import error_result, tool_result
from . import request
from .listing import list_page

if t.TYPE_CHECKING:
    from ..components import Tool
    from ..server import Call

logger = logging.getLogger("flask_mcp")


def load_arguments(call: Call, tool: Tool, arguments: dict[str, t.Any]) -> dict[str, t.Any]:
    """Validate *arguments* into the tool's keyword arguments, its Context included.

    Shared by ``tools/call`` and the REST adapter, so both validate alike.

    :raises marshmallow.ValidationError: naming the offending fields.
    """
    kwargs = tool.load_arguments(arguments)
    if tool.context_param:
        kwargs[tool.context_param] = call.context()
    return kwargs


def run_tool(call: Call, tool: Tool, kwargs: dict[str, t.Any]) -> t.Any:
    """Invoke *tool* through the server's invoker and return what it returned.

    An unexpected exception (a bug rather than a :class:`~flask_mcp.ToolError`)
    is logged here, once for every transport, then raised again.
    """
    try:
        return call.server.invoke(tool.func, kwargs)
    except Exception as exc:
        if not is_expected(exc):
            logger.exception("tool %r failed", tool.name)
        raise


@request("tools/list")
def list_tools(call: Call) -> dict[str, t.Any]:
    """One page of tool descriptors."""
    return list_page(call, "tools")


@request("tools/call")
def call_tool(call: Call) -> dict[str, t.Any]:
    """Validate the arguments, run the tool and convert what it returned.

    Failures of the tool itself (bad arguments, exceptions) are results with
    ``isError`` so the model can see them and correct itself; only a call
    that names no known tool is a protocol error.
    """
    name = call.param("name", str)
    arguments = call.param("arguments", dict, required=False) or {}
    tool = call.server.registry.tools.get(name)
    if tool is None:
        raise MCPError(INVALID_PARAMS, f"Unknown tool: {name}")
    try:
        kwargs = load_arguments(call, tool, arguments)
    except ma.ValidationError as exc:
        return error_result(f"Invalid arguments: {describe_validation_error(exc)}")
    try:
        value = run_tool(call, tool, kwargs)
    except Exception as exc:
        return error_result(describe_exception(exc, expose=call.server.expose_errors))
    try:
        return tool_result(value, tool.output_schema)
    except (TypeError, ValueError) as exc:
        # The tool worked but returned something JSON cannot carry (NaN, a
        # custom object): say so, rather than a misleading "tool failed".
        logger.exception("tool %r returned a value that is not JSON", name)
        return error_result(f"the tool returned a value that cannot be sent as JSON ({exc})")
