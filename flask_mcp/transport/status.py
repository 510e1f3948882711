"""The HTTP status of an answer carrying a JSON-RPC error, and that answer.

Both eras answer a permission denial with 403, a rate limit with 429 and a
store outage with 503 (:func:`flask_mcp.auth.gate.error_status`). The
modern era (2026-07-28) also gives protocol errors their own statuses: 404
for an unknown method, 400 for a malformed request, a header mismatch, a
missing capability or an unsupported revision. Everything else stays 200,
the error travelling in the body.
"""

from __future__ import annotations

import typing as t

from ..auth.gate import error_status
from ..protocol.jsonrpc import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_VERSION,
)
from .answer import JSONAnswer

if t.TYPE_CHECKING:
    from flask import Response

    from ..auth.gate import AuthGate
    from ..binding.state import MCPState

__all__ = ["MODERN_STATUS", "http_status", "json_answer"]

#: JSON-RPC error code -> the HTTP status of a modern answer carrying it.
MODERN_STATUS = {
    METHOD_NOT_FOUND: 404,
    INVALID_PARAMS: 400,
    INVALID_REQUEST: 400,
    PARSE_ERROR: 400,
    HEADER_MISMATCH: 400,
    MISSING_CAPABILITY: 400,
    UNSUPPORTED_VERSION: 400,
}


def http_status(response: dict[str, t.Any], gate: AuthGate | None, modern: bool) -> tuple[int, dict[str, str] | None]:
    """The status (and extra headers) of the answer carrying *response*, a response envelope."""
    error = response.get("error")
    if error is None:
        return 200, None
    mapped = error_status(error, gate)
    if mapped is not None:
        return mapped
    if modern and isinstance(error, dict):
        return MODERN_STATUS.get(error.get("code"), 200), None  # type: ignore[arg-type]
    return 200, None


def json_answer(state: MCPState, response: dict[str, t.Any], modern: bool = False) -> Response:
    """*response*, a response envelope, as a plain JSON answer with its status (:func:`http_status`)."""
    status, headers = (200, None) if "error" not in response else http_status(response, state.auth, modern)
    return JSONAnswer(state.server.serialize(response), status, headers)
