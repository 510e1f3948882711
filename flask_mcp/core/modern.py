"""What every modern-era (2026-07-28) result carries besides what its handler returned.

* ``resultType``: ``"complete"``, unless the handler's run ended in an
  ``input_required`` round (:mod:`flask_mcp.core.rounds`);
* ``_meta["io.modelcontextprotocol/serverInfo"]``: the server's name and version;
* on ``server/discover``, the four listings and ``resources/read``: the
  cache hints ``ttlMs`` (how long the client may reuse the result) and
  ``cacheScope`` (``"private"`` when the answer depends on the caller).
"""

from __future__ import annotations

import typing as t

from ..protocol import jsonrpc
from ..protocol.envelope import SERVER_INFO

if t.TYPE_CHECKING:
    from ..components.model import CacheScope
    from ..components.registry import Kind
    from .client import Call
    from .server import Server

__all__ = ["CACHEABLE", "MODERN_REMOVED", "cache_hints", "completed", "finish"]

#: Methods whose complete results carry ``ttlMs`` and ``cacheScope``.
CACHEABLE = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        # The skills extension's answers carry the same hints.
        "skills/list",
        "skills/get",
    }
)
#: The modern listings and the registry kind each lists.
_LISTED: dict[str, Kind] = {
    "tools/list": "tools",
    "prompts/list": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "templates",
}
#: Handshake-era methods the modern era removed: they are unknown there (-32601, HTTP 404).
MODERN_REMOVED = frozenset(
    {
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        # The tasks extension has neither: tasks/get answers with the result, and tasks are not listed.
        "tasks/result",
        "tasks/list",
    }
)


def finish(call: Call, result: dict[str, t.Any]) -> dict[str, t.Any]:
    """*result* with the members every modern result carries (see the module docstring)."""
    complete = result.get("resultType", "complete") == "complete"
    return completed(call.server, result, cache_hints(call) if complete and call.method in CACHEABLE else None)


def completed(
    server: Server, result: dict[str, t.Any], hints: tuple[int, CacheScope] | None = None
) -> dict[str, t.Any]:
    """*result* with ``resultType`` and the server's info, and ``ttlMs``/``cacheScope`` from *hints* if given."""
    meta = result.get("_meta")
    if meta is None and hints is None and type(result) is dict and "resultType" not in result:
        # The common result (a tool's): nothing of its own to merge, the members go at its end.
        return {**result, "resultType": "complete", "_meta": server.meta_server_info}
    members: dict[str, t.Any] = {
        "resultType": result.get("resultType", "complete"),
        "_meta": {**meta, SERVER_INFO: server.server_info()} if isinstance(meta, dict) else server.meta_server_info,
    }
    if hints is not None:
        members["ttlMs"], members["cacheScope"] = hints
    if isinstance(result, jsonrpc.Encoded):
        return result.extended(members)
    return {**result, **members}


def cache_hints(call: Call) -> tuple[int, CacheScope]:
    """``ttlMs`` and ``cacheScope`` of the cacheable modern result of *call*.

    The server's (``MCP_CLIENT_CACHE_*``), unless components set their own:
    a read takes its resource's, a listing the shortest ttl of its kind's
    components (those without one count with the server's) and is private
    when any of them is.
    """
    server = call.server
    ttl, scope = server.cache_ttl_ms, server.cache_scope
    kind = _LISTED.get(call.method)
    if kind is not None:
        shortest, all_set, private = server.registry.cache_hints(kind)
        if shortest is not None:
            ttl = shortest if all_set else min(shortest, ttl)
        return ttl, "private" if private else scope
    component = call.component
    if component is not None:
        own_ttl = getattr(component, "cache_ttl_ms", None)
        private = getattr(component, "cache_scope", None) == "private"
        return (ttl if own_ttl is None else own_ttl), "private" if private else scope
    return ttl, scope
