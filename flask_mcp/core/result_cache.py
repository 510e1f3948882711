"""Cached results of read-only tools (``@mcp.tool(cache=...)``), shared by every process.

A call of a tool with ``cache=`` first looks for a result kept for the
same tool, the same arguments and the same caller: its principal (unless
the tool's ``cache_scope`` is ``"public"``), what the transport hands the
tool's function of the caller's request (a route's credentials and
address), and the answers the call brought to the tool's questions. A hit
answers without running the tool, a miss runs it and keeps a success result
for ``cache`` seconds, unless the run asked the client something while it
ran (a handshake-era ``ctx.elicit``: the key cannot hold that answer). Hooks and
signals still run around a hit, and :attr:`CallInfo.cache
<flask_mcp.CallInfo.cache>` says which it was. ``mcp.invalidate(...)``
forgets results: of a tool, of a tool for some arguments, or of every tool
with a tag, for every caller at once.

Where results are kept is the Flask integration's to say (a
:class:`ResultCache`, in the shared store).
"""

from __future__ import annotations

import contextlib
import contextvars
import typing as t

from ..protocol.canonical import arguments_digest as digest_of
from ..protocol.errors import ToolError
from ..results.content import ToolResult

if t.TYPE_CHECKING:
    from ..components.model import Tool
    from .client import Call

__all__ = [
    "ResultCache",
    "arguments_digest",
    "asked_client",
    "cached_value",
    "keep_result",
    "public_refused",
    "watching_questions",
]

#: The call of a cached tool that missed and is running, in this context (a tool's worker thread copies it).
_running: contextvars.ContextVar[Call | None] = contextvars.ContextVar("flask_mcp_cached_call", default=None)


class ResultCache(t.Protocol):
    """Where the results of cached tools are kept, and forgotten."""

    def load(self, tool: str, arguments: str, caller: str) -> dict[str, t.Any] | None:
        """The kept ``CallToolResult`` of *tool* for *arguments* (a digest) and *caller*, if any."""
        ...

    def keep(
        self,
        tool: str,
        arguments: str,
        caller: str,
        result: dict[str, t.Any],
        ttl: float,
        charged_to: str | None = None,
    ) -> None:
        """Keep *result* for *ttl* seconds (or not at all: a cache may decline).

        *charged_to* is whose quota the entry spends (:attr:`Call.caller <flask_mcp.core.client.Call.caller>`),
        which *caller* (``""`` for a result every caller shares) does not say.
        """
        ...

    def invalidate(self, tool: str, arguments: str | None = None) -> None:
        """Forget every kept result of *tool*, or only those for *arguments* (a digest), for every caller."""
        ...


def arguments_digest(arguments: t.Mapping[str, t.Any]) -> str:
    """A digest of *arguments* in canonical form: the same arguments in any order are the same key."""
    return digest_of(arguments)[:40]


def public_refused(what: str) -> str:
    """Why *what*, a tool whose function is handed the caller's credentials, cannot keep results for every caller."""
    return (
        f'{what}: cache_scope="public" cannot be honoured with cache=: the route is handed each caller\'s '
        "Authorization and Cookie headers and address, so its answer may differ from one caller to the next, and "
        "one caller's would be served to another. Leave cache_scope unset: results are then kept per caller and "
        "per credentials"
    )


def _key(call: Call, tool: Tool, func: t.Callable[..., t.Any]) -> tuple[str, str] | None:
    """``(arguments digest, caller)`` of a cacheable call; ``None`` when nothing is cached for it.

    The caller part holds everything the answer may depend on that the
    caller brings besides the arguments: its principal (unless the tool is
    public), what the transport hands *func* of its request (a route's
    credentials, ``Server.caller_digest``) and the answers the call brought
    to its questions (``inputResponses``, a task's answers).

    :raises ToolError: a public tool whose function is handed the caller's request.
    """
    server = call.server
    if tool.result_ttl is None or server.result_cache is None:
        return None
    arguments = call.params.get("arguments")
    if not isinstance(arguments, dict):
        arguments = {}
    answers = call.round.answers if call.round is not None else {}
    try:
        digest = arguments_digest(arguments)
        answered = arguments_digest(answers) if answers else ""
    except (TypeError, ValueError):
        return None  # arguments JSON cannot spell: never cached
    public = tool.cache_scope == "public"
    handed = server.caller_digest(func) if server.caller_digest is not None else None
    if handed is not None and public:
        raise ToolError(public_refused(f"tool {tool.name!r}"))
    parts = ["" if public or call.principal is None else f"p:{call.principal.subject}"]
    if handed is not None:
        parts.append(f"f:{handed}")
    if answered:
        parts.append(f"a:{answered}")
    return digest, "\x00".join(parts) if len(parts) > 1 else parts[0]


def cached_value(call: Call, tool: Tool, func: t.Callable[..., t.Any] | None = None) -> ToolResult | None:
    """The kept result of this call as a value the tool could have returned, or ``None`` (a miss: run it).

    Notes the outcome in ``call.cache_outcome`` (``"hit"`` or ``"miss"``).

    :param func: what runs in the tool's place (a route), if not its own function.
    :raises ToolError: a public tool whose function is handed the caller's request.
    """
    key = _key(call, tool, func or tool.func)
    if key is None:
        return None
    found = t.cast("ResultCache", call.server.result_cache).load(tool.name, *key)
    if found is None:
        call.cache_outcome, call.cache_key = "miss", key  # kept for keep_result: digested once
        return None
    call.cache_outcome = "hit"
    return ToolResult(
        content=list(found.get("content") or []),
        structured_content=found.get("structuredContent"),
        meta=found.get("_meta"),
    )


@contextlib.contextmanager
def watching_questions(call: Call) -> t.Iterator[None]:
    """While a call that missed runs: a question it asks the client (:func:`asked_client`) keeps it from being kept."""
    token = _running.set(call)
    try:
        yield
    finally:
        _running.reset(token)


def asked_client() -> None:
    """Note that the handler running asked the client something whose answer the call's key does not hold.

    A handshake-era request to the client (``ctx.elicit``, ``ctx.sample``...)
    is answered while the call runs, so no key looked up before could hold
    the answer: such a run's result is never kept. Modern rounds and tasks
    bring their answers with the call, and key by them instead.
    """
    call = _running.get()
    if call is not None:
        call.cache_key = None


def keep_result(call: Call, tool: Tool, result: dict[str, t.Any]) -> None:
    """Keep the success *result* of a call that missed and asked the client nothing; error results are never kept."""
    key = call.cache_key
    if call.cache_outcome != "miss" or key is None or result.get("isError"):
        return
    t.cast("ResultCache", call.server.result_cache).keep(
        tool.name, *key, result, t.cast(float, tool.result_ttl), charged_to=call.caller
    )
