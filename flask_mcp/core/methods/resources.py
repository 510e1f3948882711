"""``resources/list``, ``resources/templates/list`` and ``resources/read``."""

from __future__ import annotations

import typing as t

from ...protocol.jsonrpc import INVALID_PARAMS, MCPError
from ..calls import read_contents
from .listing import list_page

if t.TYPE_CHECKING:
    from ..client import Call


def list_resources(call: Call) -> dict[str, t.Any]:
    """One page of static resources."""
    return list_page(call, "resources")


def list_templates(call: Call) -> dict[str, t.Any]:
    """One page of resource templates."""
    return list_page(call, "templates")


def read_resource(call: Call) -> dict[str, t.Any]:
    """Read a static resource, or the first template that matches the URI.

    A handler signals a missing item by raising
    :class:`~flask_mcp.NotFoundError` (``flask.abort(404)`` does that too);
    the client gets -32002 with the URI in ``data``.
    """
    return read_contents(call, call.server.bounded_uri(call.param("uri", str)))


def subscribe(call: Call) -> dict[str, t.Any]:
    """Remember that the client wants ``notifications/resources/updated`` for a URI."""
    uri = call.server.bounded_uri(call.param("uri", str))
    limit = call.server.max_subscriptions
    if not call.state.subscriptions.add(uri, limit):
        raise MCPError(
            INVALID_PARAMS,
            f"Invalid params: this session has {limit} subscriptions, the most allowed; unsubscribe from one first",
        )
    return {}


def unsubscribe(call: Call) -> dict[str, t.Any]:
    """Stop the updates for a URI."""
    call.state.subscriptions.discard(call.server.bounded_uri(call.param("uri", str)))
    return {}
