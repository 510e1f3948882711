"""Hooks around ``tools/call``, ``resources/read`` and ``prompts/get``, and the signals they send.

:class:`Hooks` keeps the functions an app registers with
:meth:`MCP.before_call <flask_mcp.MCP.before_call>`,
:meth:`~flask_mcp.MCP.after_call` and :meth:`~flask_mcp.MCP.on_error`;
:meth:`Hooks.run` runs a handler between them, on every surface, because
:mod:`flask_mcp.core.calls` and the method handlers call it once the caller
was admitted and the arguments validated:

1. the ``before_call`` functions, in registration order; the first that
   returns something other than ``None`` short-circuits: the handler does
   not run and that value is the result;
2. the handler, with :attr:`CallInfo.arguments` (which ``before_call`` may change);
3. on an exception from 1 or 2, the ``on_error`` functions in registration
   order; the first that returns something other than ``None`` recovers:
   that value is the result; if none does, the exception goes on;
4. the ``after_call`` functions in reverse registration order (as Flask's
   ``after_request``), each given the result and returning a replacement, or
   ``None`` to keep it.

A result is what a handler returns (a tool's return value, before it is
converted), so a replacement is converted like one. A modern handler that
asks the client for input (:class:`~flask_mcp.core.rounds.InputRequired`)
is neither a result nor an error: nothing after step 2 runs, and the
retry runs the hooks again from the start.

The blinker signals are sent after step 4 (or when the call failed), only
when a receiver is connected; with no hook and no receiver, :meth:`Hooks.run`
is not entered at all.
"""

from __future__ import annotations

import dataclasses
import time
import typing as t

from blinker import Namespace, Signal

from .input_requests import InputError

if t.TYPE_CHECKING:
    from ..policies.principal import Principal
    from .client import Call

__all__ = [
    "AfterCall",
    "BeforeCall",
    "CallInfo",
    "Hooks",
    "OnError",
    "call_audited",
    "namespace",
    "prompt_got",
    "resource_read",
    "session_ended",
    "session_started",
    "tool_called",
]

#: The namespace of flask_mcp's signals.
namespace = Namespace()
#: Sent when a ``tools/call`` finished, with its result or its error (on every surface: JSON-RPC, REST, CGI, CLI).
tool_called = namespace.signal("tool-called", doc="A tools/call finished (result or error).")
#: Sent when a ``resources/read`` of a resource or template finished (not for spilled results).
resource_read = namespace.signal("resource-read", doc="A resources/read finished (result or error).")
#: Sent when a ``prompts/get`` finished.
prompt_got = namespace.signal("prompt-got", doc="A prompts/get finished (result or error).")
#: Sent when ``initialize`` created a session (handshake era, Streamable HTTP).
session_started = namespace.signal("session-started", doc="initialize created a session.")
#: Sent when a session was deleted (``DELETE``) or found past ``MCP_SESSION_MAX_AGE``.
session_ended = namespace.signal("session-ended", doc="A session was deleted, or found past its maximum age.")
#: Sent with ``record`` (an :class:`~flask_mcp.core.audit.AuditRecord`) as the audit trail takes each
#: ended call (``MCP_AUDIT``), before it is written: for other sinks.
call_audited = namespace.signal("call-audited", doc="The audit trail took the record of an ended call.")

Kind = t.Literal["tool", "resource", "prompt"]


@dataclasses.dataclass
class CallInfo:
    """What a hook sees of the call it runs around."""

    #: ``"tools/call"``, ``"resources/read"`` or ``"prompts/get"``.
    method: str
    #: ``"tool"``, ``"resource"`` or ``"prompt"``.
    kind: Kind
    #: The tool's or prompt's name, or the URI read.
    name: str
    #: The :class:`~flask_mcp.Tool`, :class:`~flask_mcp.Resource`,
    #: :class:`~flask_mcp.ResourceTemplate` or :class:`~flask_mcp.Prompt`.
    component: t.Any
    #: The validated arguments (a template's variables) by name; ``before_call`` may change them.
    arguments: t.Any
    #: The authenticated caller, if any.
    principal: Principal | None
    #: ``"modern"`` for a 2026-07-28 request, else ``"handshake"`` (REST and the CLI too).
    era: str
    #: For a tool whose results are cached (``cache=``): ``"hit"`` (answered from the cache, the tool
    #: did not run) or ``"miss"``, once the handler ran; ``None`` otherwise.
    cache: str | None = None


#: ``before_call(info)``: ``None`` to go on, anything else is the result.
BeforeCall = t.Callable[[CallInfo], t.Any]
#: ``after_call(info, result)``: a replacement result, or ``None`` to keep it.
AfterCall = t.Callable[[CallInfo, t.Any], t.Any]
#: ``on_error(info, exc)``: a result to recover with, or ``None`` to let *exc* go on.
OnError = t.Callable[[CallInfo, Exception], t.Any]


class Hooks:
    """The hooks of one extension, shared by every app it serves.

    :param sender: returns the sender of signals (the Flask app of the
        current context), or ``None`` to send them from the server.
    """

    def __init__(self, sender: t.Callable[[], t.Any] | None = None) -> None:
        self.before: list[BeforeCall] = []
        self.after: list[AfterCall] = []
        self.error: list[OnError] = []
        self.sender = sender

    def engaged(self, signal: Signal) -> bool:
        """Whether a call must go through :meth:`run`: a hook is registered or *signal* has a receiver."""
        return bool(self.before or self.after or self.error or signal.receivers)

    def run(
        self,
        call: Call,
        kind: Kind,
        name: str,
        arguments: t.Any,
        handler: t.Callable[[t.Any], t.Any],
        signal: Signal,
    ) -> t.Any:
        """Run ``handler(arguments)`` between the hooks and send *signal*; see the module's steps."""
        info = CallInfo(
            call.method,
            kind,
            name,
            call.component,
            arguments,
            call.principal,
            "modern" if call.state.modern else "handshake",
        )
        start = time.perf_counter()
        try:
            value = self._produce(call, info, handler)
            info.cache = call.cache_outcome
            for after in reversed(self.after):
                replaced = after(info, value)
                if replaced is not None:
                    value = replaced
        except Exception as exc:
            if signal.receivers:
                self._send(call, signal, info, start, None, exc)
            raise
        if signal.receivers:
            self._send(call, signal, info, start, value, None)
        return value

    def _produce(self, call: Call, info: CallInfo, handler: t.Callable[[t.Any], t.Any]) -> t.Any:
        try:
            for before in self.before:
                value = before(info)
                if value is not None:
                    return value
            return handler(info.arguments)
        except Exception as exc:
            if isinstance(exc, InputError) and call.round is not None:
                raise  # the modern era's protocol error about the client's answers, not the handler's
            for on_error in self.error:
                value = on_error(info, exc)
                if value is not None:
                    return value
            raise

    def _send(
        self, call: Call, signal: Signal, info: CallInfo, start: float, result: t.Any, error: Exception | None
    ) -> None:
        sender = self.sender() if self.sender is not None else None
        signal.send(
            call.server if sender is None else sender,
            method=info.method,
            name=info.name,
            component=info.component,
            arguments=info.arguments,
            result=result,
            error=error,
            duration=time.perf_counter() - start,
            principal=info.principal,
            era=info.era,
            cache=info.cache,
        )
