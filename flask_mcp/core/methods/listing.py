"""The paged ``*/list`` methods share this helper."""

from __future__ import annotations

import typing as t

from ...components.registry import RESULT_KEYS, InvalidCursor, Kind, paginate
from ...protocol.jsonrpc import INVALID_PARAMS, MCPError

if t.TYPE_CHECKING:
    from ...policies.permissions import ComponentKind
    from ..client import Call


def list_page(call: Call, kind: Kind) -> dict[str, t.Any]:
    """One page of *kind*, with ``nextCursor`` when more follow."""
    cursor = call.param("cursor", str, required=False)
    server = call.server
    try:
        if server.filter_listings and server.registry.guarded(kind, bool(server.default_permissions)):
            return _filtered_page(call, kind, cursor)
        return server.registry.list_result(kind, cursor, server.page_size)
    except InvalidCursor:
        raise MCPError(INVALID_PARAMS, "Invalid params: invalid cursor", {"cursor": cursor}) from None


def paged(call: Call, key: str, listing: list[dict[str, t.Any]], size: int | None) -> dict[str, t.Any]:
    """The page of *listing* the request's ``cursor`` points at, under *key*, with ``nextCursor`` when more follow.

    For listings other than the registry's (tasks, skills).

    :raises MCPError: -32602 for a cursor this server did not issue.
    """
    cursor = call.param("cursor", str, required=False)
    try:
        page = paginate(listing, cursor, size)
    except InvalidCursor:
        raise MCPError(INVALID_PARAMS, "Invalid params: invalid cursor", {"cursor": cursor}) from None
    result: dict[str, t.Any] = {key: page.items}
    if page.next_cursor is not None:
        result["nextCursor"] = page.next_cursor
    return result


_PERMISSION_KIND: dict[Kind, ComponentKind] = {
    "tools": "tool",
    "resources": "resource",
    "templates": "resource",
    "prompts": "prompt",
}


def _filtered_page(call: Call, kind: Kind, cursor: str | None) -> dict[str, t.Any]:
    # The caller's whole listing is filtered first and then paged, so a
    # cursor is an offset into the same filtered list on every page: nothing
    # skipped or repeated, whatever the permissions hide.
    server = call.server
    component_kind = _PERMISSION_KIND[kind]
    table: dict[str, t.Any] = getattr(server.registry, kind)
    listing = [c.descriptor for c in table.values() if server.visible(call.principal, component_kind, c)]
    page = paginate(listing, cursor, server.page_size)
    result: dict[str, t.Any] = {RESULT_KEYS[kind]: page.items}
    if page.next_cursor is not None:
        result["nextCursor"] = page.next_cursor
    return result
