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
    from .client import Call

__all__ = ["CACHEABLE", "MODERN_REMOVED", "finish"]

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
    server = call.server
    meta = result.get("_meta")
    members: dict[str, t.Any] = {
        "resultType": result.get("resultType", "complete"),
        "_meta": {**meta, SERVER_INFO: server.server_info()} if isinstance(meta, dict) else server.meta_server_info,
    }
    if members["resultType"] == "complete" and call.method in CACHEABLE:
        ttl_ms, scope = server.cache_hints(call)
        members["ttlMs"] = ttl_ms
        members["cacheScope"] = scope
    if isinstance(result, jsonrpc.Encoded):
        return result.extended(members)
    return {**result, **members}
