"""The straight path of a ``tools/call`` that needs none of the optional steps.

Most calls name a tool with no permissions, rate limit, result cache, task
support, time limit, transaction, result size limit or arguments provider,
on a server with no call hooks, no server-wide limit and no tracer
recording. For such a call, admitting the caller, the hooks, the cache,
tasks and the size check are all no-ops, and the general path
(:func:`~flask_mcp.core.methods.tools.call_tool` down to
:func:`~flask_mcp.core.calls.run_tool`) spends most of its time finding so,
call after call. A :class:`PlainCall` is that finding made once per tool and
server: the arguments go through the tool's compiled validator, the function
is invoked with them, and what it returned becomes the result through the
functions the general path uses (:func:`~flask_mcp.core.methods.tools.converted`,
:func:`~flask_mcp.core.methods.tools.failed`).

A tool that takes a :class:`~flask_mcp.Context` has a straight path too
(:attr:`PlainCall.context`): the transport gives it the context, with the
channel it streams the tool's messages on, as it would on the general path.

A transport takes the straight path only for a request whose shape it has
checked, and only up to :meth:`PlainCall.load`: when the validator cannot
vouch for the arguments (a value it does not accept, a name the schema does
not declare), nothing has run yet and the request goes the general way,
which words the error. ``tests/transport/test_fast_lane.py`` sends the same
requests down both paths and compares the answers; ``tests/core/test_plain_calls.py``
checks which tools have a straight path and what :meth:`PlainCall.load` vouches for.
"""

from __future__ import annotations

import typing as t

from ..components.model import Tool
from ..results.convert import PLAIN_VALUES, plain_value_result
from .calls import note_failure
from .hooks import tool_called
from .methods import HANDLERS, MODERN_HANDLERS
from .methods.tools import call_tool, converted, failed

if t.TYPE_CHECKING:
    from ..schemas.fast_load import FastLoader
    from .server import Server

__all__ = ["PlainCall", "PlainCalls", "plain_call_of"]


class PlainCall:
    """A tool's call without the optional steps: validate, invoke, convert.

    :param tool: the tool.
    :param validate: its compiled validator: the loaded arguments, or ``None``
        when it cannot vouch for them.
    :param keep: the names the function takes (the loaded arguments of other names are left out),
        its :class:`~flask_mcp.Context` aside.
    """

    __slots__ = ("context", "declared", "direct", "func", "keep", "output_format", "structured", "tool", "validate")

    def __init__(self, tool: Tool, validate: FastLoader, keep: frozenset[str]) -> None:
        self.tool = tool
        #: The name of the function's :class:`~flask_mcp.Context` parameter, if it takes one: the
        #: transport adds it to the keyword arguments of :meth:`load`.
        self.context = tool.context_param
        self.func = tool.func
        self.declared = tool.binder.declared
        self.validate = validate
        # When the function takes every declared name, the loaded arguments are its keywords as they are.
        self.keep = None if self.declared <= keep else keep
        policy = tool.resolved
        #: Whether a plain value's result is built straight from it (plain_value_result): no output
        #: schema to dump it with or to check it against, so converted() would do the same.
        self.direct = tool.output_schema is None and tool.descriptor.get("outputSchema") is None
        self.output_format = policy.output_format
        self.structured = policy.include_structured_content

    def load(self, arguments: dict[str, t.Any]) -> dict[str, t.Any] | None:
        """The function's keyword arguments for *arguments*; ``None``: the general path must check them."""
        if not arguments.keys() <= self.declared:
            return None
        loaded = self.validate(arguments)
        if loaded is None:
            return None
        keep = self.keep
        return loaded if keep is None else {name: value for name, value in loaded.items() if name in keep}

    def run(self, server: Server, kwargs: dict[str, t.Any], *, in_round: bool = False) -> dict[str, t.Any]:
        """Invoke the tool with *kwargs* (from :meth:`load`) and return its ``CallToolResult``.

        :param in_round: the call is a modern one (see :func:`~flask_mcp.core.methods.tools.failed`).
        :raises MCPError: -32603 for a result its ``outputSchema`` refuses, as on the general path.
        """
        try:
            value = server.invoke(self.func, kwargs)
        except Exception as exc:
            note_failure(self.tool, exc)
            return failed(server, self.tool, exc, in_round=in_round)
        if self.direct and type(value) in PLAIN_VALUES:
            try:
                return plain_value_result(value, self.output_format, self.structured)
            except (TypeError, ValueError):
                pass  # a value JSON cannot hold: converted() logs it and words the error result
        return converted(self.tool, value)


def plain_call_of(server: Server, tool: Tool) -> PlainCall | None:
    """*tool*'s :class:`PlainCall` on *server*, or ``None`` when its calls need the general path.

    What is asked of the tool here only changes with :attr:`Tool.generation
    <flask_mcp.components.model.Tool.generation>`; whether its function is a
    route's view (and so whether its input schema takes the URL's variables)
    is final once the app serves requests, which is where this is asked.
    What the server may change at run time (hooks, limits, a tracer) is asked
    on each call, by :meth:`Server.plain_call <flask_mcp.core.server.Server.plain_call>`.
    """
    # A completion still pending after this means the app routes nothing to the function: the
    # schema as given is the one its calls use here, as on the general path.
    tool.complete()
    if tool.refused is not None or tool.unsupplied:
        return None
    policy = tool.resolved
    if (
        tool.permissions
        or (tool.permissions is None and server.default_permissions)
        or tool.rate_limit is not None
        or tool.task_support != "forbidden"
        or tool.ask_first
        or tool.confirmation is not None
        or tool.result_ttl is not None
        or tool.policy.atomic
        or policy.timeout is not None
        or policy.max_result_bytes is not None
    ):
        return None
    binder = tool.binder
    validate = binder.fast
    keep = binder.plain if tool.context_param is None else binder.plain_besides_context
    if validate is None or keep is None or binder.provider is not None:
        return None
    if server.route_for is not None and server.route_for(tool.func) is not None:
        return None
    return PlainCall(tool, validate, keep)


class PlainCalls:
    """The straight paths of one server's tools, each worked out once (:func:`plain_call_of`).

    The tool's part of the answer is kept by name, with the tool and the
    :attr:`~flask_mcp.components.model.Tool.generation` it was worked out
    for; the server's part (hooks or signal receivers, a server-wide rate
    limit, a tracer that records, the method tables' ``tools/call`` handler
    replaced) is asked on each call, as those may change while the app runs.

    :param server: the server whose tools these are.
    """

    __slots__ = ("_known", "_server")

    def __init__(self, server: Server) -> None:
        self._server = server
        self._known: dict[str, tuple[Tool, int, PlainCall | None]] = {}

    def find(self, name: str) -> PlainCall | None:
        """The straight path of a call of the tool *name* now; ``None``: the general path (or no such tool)."""
        server = self._server
        tracer = server.tracer
        if (
            server.rate_limit is not None
            or server.hooks.engaged(tool_called)
            or (tracer is not None and tracer.recording)
        ):
            return None
        if HANDLERS.get("tools/call") is not call_tool or MODERN_HANDLERS.get("tools/call") is not call_tool:
            return None  # the method tables' handler was replaced: every call goes to the one there
        tool = server.registry.tools.get(name)
        if tool is None:
            return None
        known = self._known.get(name)
        if known is None or known[0] is not tool or known[1] != Tool.generation:
            known = self._known[name] = (tool, Tool.generation, plain_call_of(server, tool))
        return known[2]
