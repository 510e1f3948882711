"""JSON-RPC 2.0 envelopes as MCP uses them.

This module parses raw message bodies into :class:`Request`,
:class:`Notification` and :class:`Response` objects, builds success and
error envelopes, and encodes them as strict JSON (no ``NaN`` or
``Infinity``, which JSON does not have). It knows nothing about HTTP.

Decoding is strict (:mod:`flask_mcp.protocol.strict_json`): what is not strict UTF-8
JSON is -32700, a message larger than the :class:`JSONLimits` is -32600,
and so is a request id past :data:`MAX_ID_BYTES` or :data:`MAX_ID_INTEGER`.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import json
import typing as t
import uuid
from enum import Enum

from . import fast_json
from .strict_json import DEFAULT_LIMITS, InvalidJSON, JSONLimitExceeded, JSONLimits, decode

#: Invalid JSON was received.
PARSE_ERROR = -32700
#: The JSON sent is not a valid request object.
INVALID_REQUEST = -32600
#: The method does not exist or is not available.
METHOD_NOT_FOUND = -32601
#: Invalid method parameters.
INVALID_PARAMS = -32602
#: Internal JSON-RPC error.
INTERNAL_ERROR = -32603
#: MCP: the requested resource does not exist (handshake era; the modern era uses -32602).
RESOURCE_NOT_FOUND = -32002
#: MCP 2026-07-28: an HTTP routing header (``MCP-Protocol-Version``,
#: ``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``) is missing or disagrees with the body.
HEADER_MISMATCH = -32020
#: MCP 2026-07-28: the request needs a client capability it did not declare;
#: ``data.requiredCapabilities`` names it.
MISSING_CAPABILITY = -32021
#: MCP 2026-07-28: the request's protocol revision is not served;
#: ``data`` is ``{"supported": [...], "requested": ...}``.
UNSUPPORTED_VERSION = -32022
#: flask_mcp: the caller may not use this tool, resource or prompt. An
#: application code outside JSON-RPC's reserved range (-32768 to -32000);
#: ``data.requiredScopes`` lists the scopes that would allow it. The HTTP
#: transport answers it with 403 and ``error="insufficient_scope"``.
PERMISSION_DENIED = -31403
#: flask_mcp: a rate limit was exceeded; ``data.retryAfter`` is in seconds.
#: The HTTP transport answers it with 429 and ``Retry-After``.
RATE_LIMITED = -31429
#: flask_mcp: the server cannot take the request now (its session store is
#: full or unreachable); ``data.retryAfter`` is in seconds. The HTTP
#: transport answers it with 503 and ``Retry-After``.
SERVICE_UNAVAILABLE = -31503

RequestId = t.Union[str, int]

#: Longest string request id, in UTF-8 bytes. Ids are echoed in every answer
#: and kept as keys while a request runs, so they stay small.
MAX_ID_BYTES = 256
#: Largest integer request id, either sign: the integers every JSON reader
#: holds exactly (a JavaScript number's 53-bit mantissa).
MAX_ID_INTEGER = 2**53


class MCPError(Exception):
    """A protocol-level error that becomes a JSON-RPC error response.

    Raise it from anywhere in a method handler; the dispatcher turns it into
    ``{"jsonrpc": "2.0", "id": ..., "error": {"code", "message", "data"}}``.
    Tool handlers should not raise it for failures of the tool itself:
    those are reported as tool results with ``isError`` (see
    :class:`flask_mcp.ToolError`).

    :param code: the JSON-RPC error code.
    :param message: a short human-readable description.
    :param data: optional extra information, any JSON value.
    """

    def __init__(self, code: int, message: str, data: t.Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_dict(self) -> dict[str, t.Any]:
        """Return the ``error`` member of the response."""
        error: dict[str, t.Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


@dataclasses.dataclass(frozen=True)
class Request:
    """A JSON-RPC request: it has an ``id`` and expects exactly one response."""

    id: RequestId
    method: str
    params: dict[str, t.Any]


@dataclasses.dataclass(frozen=True)
class Notification:
    """A JSON-RPC notification: no ``id``, never answered."""

    method: str
    params: dict[str, t.Any]


@dataclasses.dataclass(frozen=True)
class Response:
    """A response the client sent us (to a server-to-client request)."""

    id: RequestId | None
    result: t.Any = None
    error: dict[str, t.Any] | None = None


Message = t.Union[Request, Notification, Response]


def loads(data: bytes | bytearray | str, limits: JSONLimits = DEFAULT_LIMITS) -> t.Any:
    """Decode a client's JSON strictly (:func:`flask_mcp.protocol.strict_json.decode`).

    :raises MCPError: -32700 ``Parse error`` for text that is not UTF-8
        JSON, a non-finite number, an integer of more than 4300 digits or a
        duplicate key; -32600 for JSON that exceeds *limits*. Either way
        ``data.detail`` says what is wrong.
    """
    try:
        return decode(data, limits)
    except JSONLimitExceeded as exc:
        raise MCPError(INVALID_REQUEST, f"Invalid Request: {exc}", {"detail": str(exc)}) from None
    except InvalidJSON as exc:
        raise MCPError(PARSE_ERROR, "Parse error", {"detail": str(exc)}) from None


def utf8_longer_than(text: str, limit: int) -> bool:
    """Whether *text* takes more than *limit* bytes in UTF-8 (lone surrogates count 3)."""
    if len(text) > limit:
        return True
    # At most 4 bytes a character: short text needs no encoding to tell.
    return len(text) * 4 > limit and len(text.encode("utf-8", "surrogatepass")) > limit


def _default(value: t.Any) -> t.Any:
    # The values a Python function naturally returns that JSON cannot hold.
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        # JSON Schema (and apispec) describe Decimal fields as numbers.
        return float(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_encoder = json.JSONEncoder(allow_nan=False, default=_default, separators=(",", ":"), ensure_ascii=False)
_ascii_encoder = json.JSONEncoder(allow_nan=False, default=_default, separators=(",", ":"))


class Encoded(dict):  # type: ignore[type-arg]
    """A result object whose JSON text was computed once, to be reused as is.

    It is still the plain ``dict`` for in-process callers; :func:`encode`
    splices :attr:`text` into the envelope instead of encoding it again.
    Large listings (``tools/list`` with many tools) are served this way.
    """

    def __init__(self, value: dict[str, t.Any], text: str) -> None:
        super().__init__(value)
        self.text = text

    def extended(self, members: dict[str, t.Any]) -> Encoded:
        """A copy with *members* added (or replaced), its text spliced rather than encoded again."""
        if not members:
            return self
        if any(key in self for key in members):
            merged = {**self, **members}
            return Encoded(merged, dumps(merged))
        extra = dumps(members)
        separator = "," if len(self) else ""
        return Encoded({**self, **members}, f"{self.text[:-1]}{separator}{extra[1:]}")


def dumps(value: t.Any) -> str:
    """Encode *value* as compact JSON; ``NaN`` and ``Infinity`` raise ``ValueError``."""
    fast = fast_json.encode(value, _default)
    return fast.decode() if fast is not None else _encoder.encode(value)


def encode(value: t.Any) -> bytes:
    """Encode *value* as compact UTF-8 JSON bytes, ready for the wire.

    A lone surrogate (legal in a JSON string, so a client can send one, but
    not encodable as UTF-8) is written as a ``\\uXXXX`` escape instead of
    failing.
    """
    try:
        result = value.get("result") if isinstance(value, dict) else None
        if isinstance(result, Encoded):
            head = _encoder.encode({"jsonrpc": value["jsonrpc"], "id": value["id"]})
            return f'{head[:-1]},"result":{result.text}}}'.encode()
        # orjson when its bytes are the standard encoder's (:mod:`.fast_json`), else the standard encoder.
        fast = fast_json.encode(value, _default)
        return fast if fast is not None else _encoder.encode(value).encode()
    except UnicodeEncodeError:
        return _ascii_encoder.encode(value).encode()


def parse_message(payload: t.Any) -> Message:
    """Validate a decoded JSON value as one JSON-RPC message.

    :raises MCPError: -32600 for anything that is not a single well-formed
        request, notification or response. Batches (JSON arrays) are not part
        of MCP since revision 2025-06-18 and are rejected the same way.
    """
    if isinstance(payload, list):
        raise MCPError(INVALID_REQUEST, "Invalid Request: batch requests are not supported")
    if not isinstance(payload, dict):
        raise MCPError(INVALID_REQUEST, "Invalid Request: a message must be a JSON object")
    if payload.get("jsonrpc") != "2.0":
        raise MCPError(INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be exactly "2.0"')
    has_id = "id" in payload
    msg_id = payload.get("id")
    # A null id is only legal on an error response whose request id was unreadable.
    null_response_id = msg_id is None and "method" not in payload
    if has_id and not null_response_id and not is_request_id(msg_id):
        raise MCPError(INVALID_REQUEST, _ID_MESSAGE)
    if "method" in payload:
        method = payload["method"]
        if not isinstance(method, str):
            raise MCPError(INVALID_REQUEST, 'Invalid Request: "method" must be a string')
        params = payload.get("params", {})
        if params is None:
            params = {}
        if not isinstance(params, dict):
            raise MCPError(INVALID_REQUEST, 'Invalid Request: "params" must be an object')
        if has_id:
            return Request(id=t.cast(RequestId, msg_id), method=method, params=params)
        return Notification(method=method, params=params)
    if "result" in payload or "error" in payload:
        if ("result" in payload) == ("error" in payload):
            raise MCPError(INVALID_REQUEST, 'Invalid Request: a response has exactly one of "result" and "error"')
        error = payload.get("error")
        if error is not None and not isinstance(error, dict):
            raise MCPError(INVALID_REQUEST, 'Invalid Request: "error" must be an object')
        return Response(id=msg_id, result=payload.get("result"), error=error)
    raise MCPError(INVALID_REQUEST, 'Invalid Request: missing "method"')


#: What a request id may be, for error messages.
ID_BOUNDS = f"a string of at most {MAX_ID_BYTES} bytes or an integer between -2**53 and 2**53"
_ID_MESSAGE = f'Invalid Request: "id" must be {ID_BOUNDS}'


def is_request_id(value: t.Any) -> bool:
    """Whether *value* is a request id this server accepts (see :data:`MAX_ID_BYTES`, :data:`MAX_ID_INTEGER`)."""
    if isinstance(value, str):
        return not utf8_longer_than(value, MAX_ID_BYTES)
    return isinstance(value, int) and not isinstance(value, bool) and -MAX_ID_INTEGER <= value <= MAX_ID_INTEGER


def request_id_of(payload: t.Any) -> RequestId | None:
    """Best-effort id of a message that failed validation, for the error reply.

    An id out of bounds is not echoed: the reply has ``"id": null``.
    """
    if isinstance(payload, dict) and is_request_id(payload.get("id")):
        return t.cast(RequestId, payload["id"])
    return None


def success(msg_id: RequestId, result: dict[str, t.Any]) -> dict[str, t.Any]:
    """Build a success response envelope (never with ``error``)."""
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def failure(msg_id: RequestId | None, error: MCPError) -> dict[str, t.Any]:
    """Build an error response envelope (never with ``result``).

    ``id`` is ``null`` when the request's id could not be read, as JSON-RPC
    2.0 requires.
    """
    return {"jsonrpc": "2.0", "id": msg_id, "error": error.to_dict()}
