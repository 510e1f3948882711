"""Strict decoding of client JSON: UTF-8 only, finite numbers, unique keys, bounded structure."""

from __future__ import annotations

import contextlib
import json
import typing as t

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from flask_mcp.protocol.strict_json import InvalidJSON, JSONLimitExceeded, JSONLimits, decode

from .codecs import codec

# Every test runs with orjson's fast paths and without them: both must answer alike.
pytestmark = pytest.mark.usefixtures("codec")
__all__ = ["codec"]

MESSAGE = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"é","arguments":{"a":[1,2.5,true,null]}}}'


def nested(depth: int, kind: str = "list") -> str:
    """JSON text with *depth* containers nested in each other."""
    if kind == "list":
        return "[" * depth + "]" * depth
    return '{"a":' * (depth - 1) + "{}" + "}" * (depth - 1)


@pytest.mark.parametrize(
    "data",
    [
        MESSAGE.encode("utf-16"),  # with a byte order mark
        MESSAGE.encode("utf-16-le"),
        MESSAGE.encode("utf-16-be"),
        MESSAGE.encode("utf-32"),
        MESSAGE.encode("utf-32-le"),
        MESSAGE.encode("utf-32-be"),
        MESSAGE.encode("latin-1"),  # é as one byte
        b'"\xed\xa0\x80"',  # a surrogate, encoded as UTF-8
        b'{"a":"\xed\xb0\x80"}',
        b'"\xc0\xaf"',  # an overlong encoding
        b'"\xf4\x90\x80\x80"',  # past U+10FFFF
        b"\xef\xbb\xbf" + MESSAGE.encode(),  # a UTF-8 byte order mark
    ],
    ids=[
        "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be", "latin-1",
        "surrogate", "surrogate-low", "overlong", "past-unicode", "utf-8-bom",
    ],
)  # fmt: skip
def test_input_is_utf8_only(data: bytes) -> None:
    with pytest.raises(InvalidJSON):
        decode(data)


def test_utf8_and_escaped_surrogates_are_accepted() -> None:
    assert decode(MESSAGE.encode()) == json.loads(MESSAGE)
    # An escape is legal JSON, whatever it stands for.
    assert decode(b'"a\\ud800b"') == "a\ud800b"


@pytest.mark.parametrize("number", ["1e999", "-1e999", "1E400", "1.5e308000", "-0.1e99999"])
@pytest.mark.parametrize("where", ["{}", '{{"a":{}}}', "[1,{}]", '{{"a":{{"b":[{}]}}}}'])
def test_numbers_that_overflow_are_refused(number: str, where: str) -> None:
    with pytest.raises(InvalidJSON, match="must be finite"):
        decode(where.format(number))


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", '{"a":-Infinity}'])
def test_non_json_constants_are_refused(text: str) -> None:
    with pytest.raises(InvalidJSON, match="is not valid JSON"):
        decode(text)


@pytest.mark.parametrize("text", ["9" * 5000, "[-" + "1" * 4301 + "]", '{"a":' + "7" * 10_000 + "}"])
def test_integers_of_too_many_digits_are_refused(text: str) -> None:
    with pytest.raises(InvalidJSON, match="4300 digits"):
        decode(text)


@pytest.mark.parametrize("text", ["1e308", "-1e-999", "0.0", "9" * 4300, "1.7976931348623157e308"])
def test_finite_numbers_pass(text: str) -> None:
    assert decode(text) == json.loads(text)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('{"id":1,"id":2}', "id"),
        ('{"method":"a","jsonrpc":"2.0","method":"b"}', "method"),
        ('{"params":{"name":"x","name":"y"}}', "name"),
        ('[{"a":1},{"b":1,"b":1}]', "b"),
        ('{"a":{"b":{"c":{"d":1,"d":1}}}}', "d"),
        ('{"\\u0069d":1,"id":2}', "id"),  # the same key, spelled two ways
    ],
)
def test_duplicate_keys_are_refused_and_named(text: str, key: str) -> None:
    with pytest.raises(InvalidJSON, match=f"duplicate key '{key}'"):
        decode(text)


def test_a_duplicate_key_message_is_bounded() -> None:
    key = "k" * 100_000
    with pytest.raises(InvalidJSON) as info:
        decode(json.dumps({key: 1})[:-1] + f',"{key}":2}}')
    assert len(str(info.value)) < 100


@pytest.mark.parametrize("kind", ["list", "object"])
def test_nesting_up_to_the_limit_passes(kind: str) -> None:
    assert decode(nested(64, kind)) is not None
    assert decode(nested(5, kind), JSONLimits(max_depth=5)) is not None


@pytest.mark.parametrize("kind", ["list", "object"])
@pytest.mark.parametrize(("depth", "limits"), [(65, JSONLimits()), (6, JSONLimits(max_depth=5)), (500, JSONLimits())])
def test_nesting_past_the_limit_is_refused(kind: str, depth: int, limits: JSONLimits) -> None:
    with pytest.raises(JSONLimitExceeded, match=f"deeper than the limit of {limits.max_depth}"):
        decode(nested(depth, kind), limits)


def test_nesting_too_deep_to_decode_is_a_parse_error() -> None:
    with pytest.raises(InvalidJSON, match="too deep"):
        decode(nested(100_000))


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    text = json.dumps({"a": "[" * 1000, "b": [[["{" * 100]]]})
    assert decode(text, JSONLimits(max_depth=4)) == json.loads(text)


@pytest.mark.parametrize("where", ["{}", '{{"outer":{}}}', "[{}]", '[1,[2,{{"x":{}}}]]'])
def test_objects_with_more_members_than_the_limit_are_refused(where: str) -> None:
    many = json.dumps({f"k{i}": i for i in range(11)})
    assert decode(where.format(many), JSONLimits(max_keys=11)) is not None
    with pytest.raises(JSONLimitExceeded, match="11 members, more than the limit of 10"):
        decode(where.format(many), JSONLimits(max_keys=10))


def test_the_default_member_limit() -> None:
    assert len(decode(json.dumps({str(i): i for i in range(10_000)}))) == 10_000
    with pytest.raises(JSONLimitExceeded, match="more than the limit of 10000"):
        decode(json.dumps({str(i): i for i in range(10_001)}))


@pytest.mark.parametrize(
    "value",
    [
        "x" * 11,
        ["x" * 11],
        {"a": "x" * 11},
        {"x" * 11: 1},
        {"a": [{"b": ["ok", "x" * 11]}]},
    ],
)
def test_strings_longer_than_the_limit_are_refused(value: t.Any) -> None:
    text = json.dumps(value)
    with pytest.raises(JSONLimitExceeded, match="11 characters, more than the limit of 10"):
        decode(text, JSONLimits(max_string=10))
    assert decode(text, JSONLimits(max_string=11)) == value
    assert decode(text) == value  # no string limit by default


def depth_of(value: t.Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(depth_of, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth_of, value), default=0)
    return 0


# Strings full of what could pass for structure: brackets, quotes, backslashes.
tricky_text = st.text(alphabet='[]{}"\\\\ab:,', max_size=6)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | tricky_text,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(tricky_text, children, max_size=3),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
# Escaped quotes around brackets, that would pair up with each other if taken for delimiters.
@example(value=['"]"', [[["x"]]], '"["'], max_depth=3, ensure_ascii=False)
@example(value={"\\": [['\\"]']], "[": 1}, max_depth=2, ensure_ascii=True)
@given(value=json_values, max_depth=st.integers(min_value=0, max_value=6), ensure_ascii=st.booleans())
def test_the_depth_limit_is_exact(value: t.Any, max_depth: int, ensure_ascii: bool) -> None:
    text = json.dumps(value, ensure_ascii=ensure_ascii)
    limits = JSONLimits(max_depth=max_depth)
    if depth_of(value) > max_depth:
        with pytest.raises(JSONLimitExceeded):
            decode(text.encode(), limits)
    else:
        assert decode(text.encode(), limits) == value


@settings(max_examples=60, deadline=None)
@given(depth=st.integers(1, 3000), kind=st.sampled_from(["list", "object"]), wrapped=st.booleans())
def test_any_nesting_is_decoded_or_refused_never_a_crash(depth: int, kind: str, wrapped: bool) -> None:
    # Deeper than orjson writes (about 255) but not than it reads: the strict decoder decides.
    text = nested(depth, kind)
    if wrapped:
        text = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":' + text + "}}}"
    limits = JSONLimits(max_depth=10_000)
    try:
        value = decode(text.encode(), limits)
    except InvalidJSON as exc:
        assert "too deep" in str(exc)
    else:
        assert value == json.loads(text)
    with pytest.raises((JSONLimitExceeded, InvalidJSON)) if depth + 3 * wrapped > 64 else contextlib.nullcontext():
        decode(text.encode())
