"""``subscriptions/listen`` (2026-07-28): which change notifications a listen stream carries.

The handler only decides what the client gets: the subset of its filter
the server can deliver, which the transport sends as
``notifications/subscriptions/acknowledged`` before it keeps the stream
open (:class:`flask_mcp.core.listen.Subscription` says what goes on it).
"""

from __future__ import annotations

import typing as t

from ...protocol.jsonrpc import INVALID_PARAMS, MCPError

if t.TYPE_CHECKING:
    from ..client import Call

#: The flags of a ``SubscriptionFilter`` and the capability each needs.
_FLAGS = {"toolsListChanged": "tools", "promptsListChanged": "prompts", "resourcesListChanged": "resources"}


def listen(call: Call) -> dict[str, t.Any]:
    """The accepted filter: ``{"notifications": {...}}``.

    A flag is accepted when the server has that capability (something of its
    kind is registered), as the acknowledgement must leave out what the
    server does not support; resource URIs are bounded in length and number
    (``MCP_MAX_SUBSCRIPTIONS``).
    """
    server = call.server
    wanted = call.params["notifications"]
    capabilities = server.capabilities()
    accepted: dict[str, t.Any] = {
        flag: True for flag, capability in _FLAGS.items() if wanted.get(flag) is True and capability in capabilities
    }
    uris = wanted.get("resourceSubscriptions") or []
    if uris and "resources" in capabilities:
        limit = server.max_subscriptions
        if limit is not None and len(uris) > limit:
            raise MCPError(INVALID_PARAMS, f"Invalid params: at most {limit} resourceSubscriptions per listen request")
        accepted["resourceSubscriptions"] = list(dict.fromkeys(server.bounded_uri(uri) for uri in uris))
    return {"notifications": accepted}
