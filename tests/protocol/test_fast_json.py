"""orjson's fast paths answer exactly what the standard library would, or leave the answer to it."""

from __future__ import annotations

import json
import math
import random
import struct
import typing as t

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flask_mcp.protocol import fast_json, jsonrpc, strict_json

pytestmark = pytest.mark.skipif(not fast_json.AVAILABLE, reason="orjson is not installed")

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(codec=None)),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=20,
)


def standard(value: t.Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


@settings(max_examples=400, deadline=None)
@given(JSON_VALUES)
def test_encoding_is_the_standard_encoders_or_nothing(value: t.Any) -> None:
    fast = fast_json.encode(value, jsonrpc._default)
    try:
        expected = standard(value)
    except UnicodeEncodeError:  # a lone surrogate: orjson refuses it too
        assert fast is None
        return
    assert fast is None or fast == expected


@settings(max_examples=400, deadline=None)
@given(JSON_VALUES, st.sampled_from(["", " ", "\n"]), st.booleans())
def test_decoding_is_the_strict_decoders_or_nothing(value: t.Any, space: str, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only, separators=("," + space, ":" + space))
    try:
        data = text.encode()
    except UnicodeEncodeError:
        return
    fast = fast_json.decode(data, 10_000)
    if fast is not fast_json.UNDECIDED:
        expected = strict_json._decoder(10_000).decode(text)
        assert fast == expected
        assert json.dumps(fast) == json.dumps(expected)  # the same types, down to int against float


def test_floats_round_trip_as_the_standard_library_writes_them() -> None:
    rng = random.Random(28)
    for _ in range(20_000):
        number = struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0]
        if not math.isfinite(number):
            continue
        decoded = fast_json.decode(repr(number).encode(), 10)
        assert decoded is fast_json.UNDECIDED or (type(decoded) is float and decoded == number)
        encoded = fast_json.encode(number, jsonrpc._default)
        assert encoded is None or encoded == json.dumps(number).encode()


@pytest.mark.parametrize(
    "data",
    [
        b'{"a":1,"a":2}',
        b'{"a:b":1,"a:b":1}',  # colons in the keys
        b'{"a":{"b:":":"},"a":2}',  # and in the dropped value
        b'[{"x":1},{"y":2,"y":3}]',
        b'{"a":1,"a":2,"b":"\\u003a"}',  # an escaped colon standing in for the lost one
    ],
)
def test_duplicate_keys_are_left_to_the_strict_decoder(data: bytes) -> None:
    assert fast_json.decode(data, 100) is fast_json.UNDECIDED
    with pytest.raises(strict_json.InvalidJSON, match="duplicate key"):
        strict_json.decode(data)


@pytest.mark.parametrize("number", [2**64, 2**64 + 1, -(2**63) - 1, -(10**19), 10**30, 10**4000])
def test_integers_past_64_bits_stay_exact(number: int) -> None:
    data = b'{"n":%d}' % number
    assert fast_json.decode(data, 100) is fast_json.UNDECIDED
    assert strict_json.decode(data) == {"n": number}


def test_more_colons_than_the_member_limit_are_left_to_the_strict_decoder() -> None:
    data = json.dumps({str(i): i for i in range(11)}).encode()
    assert fast_json.decode(data, 10) is fast_json.UNDECIDED
    with pytest.raises(strict_json.JSONLimitExceeded):
        strict_json.decode(data, strict_json.JSONLimits(max_keys=10))


@pytest.mark.parametrize("value", [float("nan"), float("inf"), [1, float("-inf")], {"a": None}])
def test_null_in_the_output_goes_the_standard_way(value: t.Any) -> None:
    # orjson writes NaN and infinities as null: the standard encoder then refuses them (or writes the None).
    assert fast_json.encode(value, jsonrpc._default) is None


def test_non_finite_numbers_are_still_refused() -> None:
    with pytest.raises(ValueError):
        jsonrpc.dumps({"a": float("nan")})


@pytest.mark.parametrize("number", [1e-05, 5.948084951086057e-05, 1e-07, 9.6676934244873e-07])
def test_small_floats_are_written_as_python_writes_them(number: float) -> None:
    assert fast_json.encode(number, jsonrpc._default) is None
    assert jsonrpc.dumps(number) == json.dumps(number)


def test_an_ordinary_message_takes_the_fast_paths() -> None:
    data = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add","arguments":{"a":40,"b":2}}}'
    assert fast_json.decode(data, 10_000) == json.loads(data)
    result = {"content": [{"type": "text", "text": "42"}], "structuredContent": {"result": 42}}
    assert fast_json.encode(result, jsonrpc._default) == standard(result)
