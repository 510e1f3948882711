"""The arguments' digest: canonical JSON's SHA-256, the same in every process and for any key order."""

from __future__ import annotations

import hashlib
import json
import typing as t

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flask_mcp.protocol import canonical
from flask_mcp.protocol.canonical import arguments_digest

_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
_ARGUMENTS = st.dictionaries(st.text(max_size=8), _JSON, max_size=6)


def _expected(arguments: dict[str, t.Any]) -> str:
    text = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@given(_ARGUMENTS)
def test_the_digest_is_that_of_canonical_json(arguments: dict[str, t.Any]) -> None:
    assert arguments_digest(arguments) == _expected(arguments)


@given(_ARGUMENTS)
def test_the_digest_does_not_depend_on_key_order(arguments: dict[str, t.Any]) -> None:
    assert arguments_digest(dict(reversed(list(arguments.items())))) == arguments_digest(arguments)


@given(_ARGUMENTS)
def test_the_kept_encoder_writes_what_the_standard_one_writes(arguments: dict[str, t.Any]) -> None:
    assert canonical._encode(arguments) == canonical._ENCODER.encode(arguments)


@pytest.mark.parametrize(
    "arguments",
    [{"when": {1, 2}}, {"x": float("nan")}, {"x": object()}, {"n": {1: "a", "b": 2}}],
    ids=["set", "nan", "object", "mixed-keys"],
)
def test_values_json_cannot_carry_still_have_a_digest(arguments: dict[str, t.Any]) -> None:
    digest = arguments_digest(arguments)
    assert len(digest) == 64
    assert digest == hashlib.sha256(repr(canonical.canonical(arguments)).encode()).hexdigest()


def test_the_encoder_needs_no_c_speedups(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(json.encoder, "c_make_encoder", None)
    encode = canonical._one_encoder()
    assert encode({"b": [1, "é"], "a": None}) == '{"a":null,"b":[1,"é"]}'
