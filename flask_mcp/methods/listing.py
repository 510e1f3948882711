"""The paged ``*/list`` methods share this helper."""

from __future__ import annotations

import typing as t

from ..jsonrpc import INVALID_PARAMS, MCPError
from ..registry import InvalidCursor, Kind

if t.TYPE_CHECKING:
    from ..server import Call


def list_page(call: Call, kind: Kind) -> dict[str, t.Any]:
    """One page of *kind*, with ``nextCursor`` when more follow."""
    cursor = call.param("cursor", str, required=False)
    try:
        return call.server.registry.list_result(kind, cursor, call.server.page_size)
    except InvalidCursor:
        raise MCPError(INVALID_PARAMS, "Invalid params: invalid cursor", {"cursor": cursor}) from None
