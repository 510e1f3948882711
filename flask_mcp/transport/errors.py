"""HTTP answers whose body is a JSON-RPC error envelope, and the exception that carries one out.

Every error the endpoint answers before or around the protocol core (a
refused host, a body that is not JSON, an unknown session) is JSON, never an
HTML page, so MCP clients can read it.
"""

from __future__ import annotations

import typing as t

from ..protocol import jsonrpc
from ..protocol.jsonrpc import INVALID_REQUEST, MCPError
from .answer import JSON_CONTENT_TYPE, JSONAnswer

if t.TYPE_CHECKING:
    from flask import Response

__all__ = ["JSON_CONTENT_TYPE", "Reject", "error_response", "json_response"]


class Reject(Exception):
    """Stops handling a request with :attr:`response`, an HTTP error response."""

    def __init__(self, response: Response) -> None:
        self.response = response


def json_response(payload: t.Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """*payload* encoded as a JSON response."""
    return JSONAnswer(jsonrpc.encode(payload), status, headers)


def error_response(
    status: int,
    message: str,
    code: int = INVALID_REQUEST,
    msg_id: jsonrpc.RequestId | None = None,
    data: t.Any = None,
    headers: dict[str, str] | None = None,
) -> Response:
    """An HTTP error whose body is a JSON-RPC error envelope."""
    return json_response(jsonrpc.failure(msg_id, MCPError(code, message, data)), status, headers)
