"""Cached results of read-only tools (``@mcp.tool(cache=...)``), shared by every process.

A call of a tool with ``cache=`` first looks for a result kept for the
same tool, the same arguments and (unless the tool's ``cache_scope`` is
``"public"``) the same caller; a hit answers without running the tool, a
miss runs it and keeps a success result for ``cache`` seconds. Hooks and
signals still run around a hit, and :attr:`CallInfo.cache
<flask_mcp.CallInfo.cache>` says which it was. ``mcp.invalidate(...)``
forgets results: of a tool, of a tool for some arguments, or of every tool
with a tag, for every caller at once.

Where results are kept is the Flask integration's to say (a
:class:`ResultCache`, in the shared store).
"""

from __future__ import annotations

import hashlib
import typing as t

from ..protocol import jsonrpc
from ..results.content import ToolResult

if t.TYPE_CHECKING:
    from ..components.model import Tool
    from .client import Call

__all__ = ["ResultCache", "arguments_digest", "cached_value", "keep_result"]


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
    text = jsonrpc.dumps(_canonical(dict(arguments)))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:40]


def _canonical(value: t.Any) -> t.Any:
    if isinstance(value, dict):
        return {str(key): _canonical(value[key]) for key in sorted(value, key=str)}
    if isinstance(value, list):
        return [_canonical(item) for item in value]
    return value


def _key(call: Call, tool: Tool) -> tuple[str, str] | None:
    """``(arguments digest, caller)`` of a cacheable call; ``None`` when nothing is cached for it."""
    if tool.result_ttl is None or call.server.result_cache is None:
        return None
    arguments = call.params.get("arguments")
    if not isinstance(arguments, dict):
        arguments = {}
    try:
        digest = arguments_digest(arguments)
    except (TypeError, ValueError):
        return None  # arguments JSON cannot spell: never cached
    public = tool.cache_scope == "public"
    caller = "" if public or call.principal is None else f"p:{call.principal.subject}"
    return digest, caller


def cached_value(call: Call, tool: Tool) -> ToolResult | None:
    """The kept result of this call as a value the tool could have returned, or ``None`` (a miss: run it).

    Notes the outcome in ``call.cache_outcome`` (``"hit"`` or ``"miss"``).
    """
    key = _key(call, tool)
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


def keep_result(call: Call, tool: Tool, result: dict[str, t.Any]) -> None:
    """Keep the success *result* of a call that missed; error results are never kept."""
    key = call.cache_key
    if call.cache_outcome != "miss" or key is None or result.get("isError"):
        return
    t.cast("ResultCache", call.server.result_cache).keep(
        tool.name, *key, result, t.cast(float, tool.result_ttl), charged_to=call.caller
    )
