"""Envelope parsing and strict JSON encoding."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import json
import typing as t
import uuid

import pytest

from flask_mcp.protocol import jsonrpc
from flask_mcp.protocol.jsonrpc import MCPError, Notification, Request, Response
from flask_mcp.protocol.strict_json import JSONLimits

from .codecs import codec

# Every test runs with orjson's fast paths and without them: both must answer alike.
pytestmark = pytest.mark.usefixtures("codec")
__all__ = ["codec"]


@pytest.mark.parametrize("text", ["{", "", "nul", '{"a": NaN}', '{"a": Infinity}', b"\xff\xfe"])
def test_loads_rejects_invalid_json(text: str | bytes) -> None:
    with pytest.raises(MCPError) as info:
        jsonrpc.loads(text)
    assert (info.value.code, info.value.message) == (jsonrpc.PARSE_ERROR, "Parse error")


@pytest.mark.parametrize(
    ("data", "detail"),
    [
        ('{"jsonrpc":"2.0","id":1,"method":"ping"}'.encode("utf-16"), "not UTF-8"),
        ('{"jsonrpc":"2.0","id":1,"method":"ping"}'.encode("utf-32-le"), "Expecting"),
        (b'{"jsonrpc":"2.0","id":"\xed\xa0\x80","method":"ping"}', "not UTF-8"),
        (b'{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}', "duplicate key 'id'"),
        (b'{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/list"}', "duplicate key 'method'"),
        (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{"x":1e999}}}', "must be finite"),
        (b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"n":' + b"9" * 5000 + b"}}", "4300 digits"),
    ],
    ids=["utf-16", "utf-32", "surrogate", "duplicate-id", "duplicate-method", "overflow", "huge-integer"],
)
def test_loads_refuses_what_json_loads_lets_through(data: bytes, detail: str) -> None:
    with pytest.raises(MCPError) as info:
        jsonrpc.loads(data)
    assert (info.value.code, info.value.message) == (jsonrpc.PARSE_ERROR, "Parse error")
    assert detail in info.value.data["detail"]


@pytest.mark.parametrize(
    ("data", "limits"),
    [
        (b'{"a":' * 65 + b"1" + b"}" * 65, JSONLimits()),
        (b'{"params":{"a":1,"b":2,"c":3}}', JSONLimits(max_keys=2)),
        (b'{"params":{"text":"abcdef"}}', JSONLimits(max_string=5)),
    ],
    ids=["depth", "keys", "string"],
)
def test_loads_answers_limits_with_invalid_request(data: bytes, limits: JSONLimits) -> None:
    with pytest.raises(MCPError) as info:
        jsonrpc.loads(data, limits)
    assert info.value.code == jsonrpc.INVALID_REQUEST
    assert info.value.message.startswith("Invalid Request: ")
    assert "the limit of" in info.value.data["detail"]


LONGEST_ID = "x" * jsonrpc.MAX_ID_BYTES
#: 86 characters, 258 bytes: too long in UTF-8 though short in characters.
WIDE_ID = "€" * 86


@pytest.mark.parametrize(
    ("inside", "outside"),
    [
        (LONGEST_ID, LONGEST_ID + "x"),
        ("€" * 85, WIDE_ID),
        (jsonrpc.MAX_ID_INTEGER, jsonrpc.MAX_ID_INTEGER + 1),
        (-jsonrpc.MAX_ID_INTEGER, -jsonrpc.MAX_ID_INTEGER - 1),
    ],
    ids=["bytes", "utf-8-bytes", "integer", "negative-integer"],
)
def test_id_bounds_are_inclusive(inside: jsonrpc.RequestId, outside: jsonrpc.RequestId) -> None:
    assert jsonrpc.parse_message({"jsonrpc": "2.0", "id": inside, "method": "ping"}) == Request(inside, "ping", {})
    assert jsonrpc.parse_message({"jsonrpc": "2.0", "id": inside, "result": {}}) == Response(inside, {}, None)
    assert jsonrpc.request_id_of({"id": inside}) == inside
    with pytest.raises(MCPError):
        jsonrpc.parse_message({"jsonrpc": "2.0", "id": outside, "method": "ping"})


OVERSIZE_IDS = [
    LONGEST_ID + "x",
    WIDE_ID,
    "\ud800" * 86,  # lone surrogates count 3 bytes each
    "x" * 3 * 1024 * 1024,
    jsonrpc.MAX_ID_INTEGER + 1,
    -jsonrpc.MAX_ID_INTEGER - 1,
    10**400,
]


@pytest.mark.parametrize(
    "msg_id", OVERSIZE_IDS, ids=["257", "wide", "surrogates", "3MiB", "2**53+1", "-2**53-1", "huge"]
)
@pytest.mark.parametrize("kind", ["request", "result", "error"])
def test_ids_out_of_bounds_are_invalid_requests(msg_id: jsonrpc.RequestId, kind: str) -> None:
    payload: dict[str, t.Any] = {"jsonrpc": "2.0", "id": msg_id}
    payload.update(
        {"request": {"method": "ping"}, "result": {"result": {}}, "error": {"error": {"code": 1, "message": "m"}}}[kind]
    )
    with pytest.raises(MCPError) as info:
        jsonrpc.parse_message(payload)
    assert info.value.code == jsonrpc.INVALID_REQUEST
    assert '"id" must be a string of at most 256 bytes' in info.value.message
    # Nor is it echoed in the error answer.
    assert jsonrpc.request_id_of(payload) is None


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ({"jsonrpc": "2.0", "id": 7, "method": "ping"}, Request(7, "ping", {})),
        ({"jsonrpc": "2.0", "id": "x", "method": "m", "params": {"a": 1}}, Request("x", "m", {"a": 1})),
        ({"jsonrpc": "2.0", "id": 1, "method": "m", "params": None}, Request(1, "m", {})),
        ({"jsonrpc": "2.0", "method": "notifications/initialized"}, Notification("notifications/initialized", {})),
        ({"jsonrpc": "2.0", "id": 3, "result": {}}, Response(3, {}, None)),
        (
            {"jsonrpc": "2.0", "id": None, "error": {"code": 1, "message": "m"}},
            Response(None, None, {"code": 1, "message": "m"}),
        ),
    ],
)
def test_parse_message(payload: dict, expected: object) -> None:
    assert jsonrpc.parse_message(payload) == expected


@pytest.mark.parametrize(
    "payload",
    [
        [],
        [{"jsonrpc": "2.0", "id": 1, "method": "ping"}],
        "ping",
        {"id": 1, "method": "ping"},
        {"jsonrpc": "1.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1, "method": 5},
        {"jsonrpc": "2.0", "id": 1, "method": "m", "params": [1]},
        {"jsonrpc": "2.0", "id": True, "method": "m"},
        {"jsonrpc": "2.0", "id": 1.5, "method": "m"},
        {"jsonrpc": "2.0", "id": None, "method": "m"},
        {"jsonrpc": "2.0", "id": 1},
        {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {}},
        {"jsonrpc": "2.0", "id": 1, "error": "bad"},
    ],
)
def test_parse_message_rejects_malformed_envelopes(payload: object) -> None:
    with pytest.raises(MCPError) as info:
        jsonrpc.parse_message(payload)
    assert info.value.code == jsonrpc.INVALID_REQUEST


@pytest.mark.parametrize(
    ("payload", "expected"), [({"id": 4}, 4), ({"id": "a"}, "a"), ({"id": True}, None), ([], None)]
)
def test_request_id_of(payload: object, expected: object) -> None:
    assert jsonrpc.request_id_of(payload) == expected


def test_envelopes_never_mix_result_and_error() -> None:
    assert jsonrpc.success(1, {"a": 1}) == {"jsonrpc": "2.0", "id": 1, "result": {"a": 1}}
    failure = jsonrpc.failure(None, MCPError(-32000, "boom", {"x": 1}))
    assert failure == {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "boom", "data": {"x": 1}}}
    assert "data" not in jsonrpc.failure(2, MCPError(-32000, "boom"))["error"]


@pytest.mark.parametrize("value", [float("nan"), float("inf"), {"a": [float("-inf")]}])
def test_dumps_refuses_non_json_numbers(value: object) -> None:
    with pytest.raises(ValueError):
        jsonrpc.dumps(value)


def test_dumps_converts_common_python_values() -> None:
    @dataclasses.dataclass
    class Item:
        name: str

    ident = uuid.uuid4()
    value = {
        "when": datetime.datetime(2026, 1, 2, 3, 4, 5),
        "id": ident,
        "price": decimal.Decimal("1.10"),
        "item": Item("n"),
        "pair": (1, 2),
        "text": "héllo",
    }
    decoded = json.loads(jsonrpc.dumps(value))
    assert decoded == {
        "when": "2026-01-02T03:04:05",
        "id": str(ident),
        "price": 1.1,
        "item": {"name": "n"},
        "pair": [1, 2],
        "text": "héllo",
    }
    with pytest.raises(TypeError):
        jsonrpc.dumps(object())


def test_encode_is_utf8_and_escapes_lone_surrogates() -> None:
    assert jsonrpc.encode({"text": "héllo"}) == '{"text":"héllo"}'.encode()
    encoded = jsonrpc.encode({"text": "a\ud800b"})
    assert encoded == b'{"text":"a\\ud800b"}'
    assert json.loads(encoded) == {"text": "a\ud800b"}


def test_encode_splices_pre_encoded_results() -> None:
    result = jsonrpc.Encoded({"tools": [{"name": "é"}]}, '{"tools":[{"name":"é"}]}')
    encoded = jsonrpc.encode(jsonrpc.success("req-1", result))
    assert json.loads(encoded) == {"jsonrpc": "2.0", "id": "req-1", "result": {"tools": [{"name": "é"}]}}
