"""The shortcut past marshmallow loads exactly what marshmallow would, or leaves the decision to it."""

from __future__ import annotations

import typing as t

import marshmallow as ma
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from marshmallow import fields, validate

from flask_mcp.schemas.fast_load import fast_loader
from flask_mcp.schemas.hints import JSONBoolean, JSONNumber, schema_from_signature


class Plain(ma.Schema):
    name = fields.String(required=True)
    count = fields.Integer(strict=True, load_default=1)
    ratio = JSONNumber(allow_nan=False, allow_none=True)
    flag = JSONBoolean(load_default=lambda: False)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner, max_size=2),
    max_leaves=4,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["name", "count", "ratio", "flag"]), JSON_VALUES))
def test_what_the_shortcut_loads_is_what_marshmallow_loads(arguments: dict[str, t.Any]) -> None:
    schema = Plain()
    loader = fast_loader(schema)
    assert loader is not None
    loaded = loader(arguments)
    try:
        expected = schema.load(arguments)
    except ma.ValidationError:
        assert loaded is None  # a failure is always marshmallow's to word
        return
    if loaded is not None:
        assert loaded == expected and {k: type(v) for k, v in loaded.items()} == {
            k: type(v) for k, v in expected.items()
        }


def test_numbers_load_as_floats_and_defaults_fill_in() -> None:
    loader = fast_loader(Plain())
    assert loader is not None
    assert loader({"name": "a", "ratio": 2}) == {"name": "a", "count": 1, "ratio": 2.0, "flag": False}
    assert loader({"name": "a", "ratio": None, "count": 3, "flag": True}) == {
        "name": "a",
        "ratio": None,
        "count": 3,
        "flag": True,
    }


@pytest.mark.parametrize(
    "arguments",
    [{}, {"name": 1}, {"name": "a", "count": True}, {"name": "a", "count": 1.0}, {"name": "a", "ratio": 10**400}],
)
def test_anything_off_is_left_to_marshmallow(arguments: dict[str, t.Any]) -> None:
    loader = fast_loader(Plain())
    assert loader is not None and loader(arguments) is None


def test_a_signature_of_primitives_takes_the_shortcut() -> None:
    def add(a: int, b: int = 2, label: str = "sum", exact: bool = True, scale: float = 1.0) -> int:
        return a + b

    loader = fast_loader(schema_from_signature(add, name="AddArguments")())
    assert loader is not None
    assert loader({"a": 1}) == {"a": 1, "b": 2, "label": "sum", "exact": True, "scale": 1.0}


class Validated(ma.Schema):
    size = fields.String(validate=validate.OneOf(["s", "m"]))


class Renamed(ma.Schema):
    size = fields.String(data_key="Size")


class Nested(ma.Schema):
    inner = fields.Nested(Plain)


class Hooked(ma.Schema):
    name = fields.String()

    @ma.post_load
    def upper(self, data: dict[str, t.Any], **kwargs: t.Any) -> dict[str, t.Any]:
        return {key: value.upper() for key, value in data.items()}


class Lenient(ma.Schema):
    count = fields.Integer()  # not strict: "3" loads as 3


@pytest.mark.parametrize("schema", [Validated, Renamed, Nested, Hooked, Lenient])
def test_schemas_that_do_more_than_check_types_keep_marshmallow(schema: type[ma.Schema]) -> None:
    assert fast_loader(schema()) is None
