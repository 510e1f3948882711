"""Type hints -> marshmallow schemas -> JSON Schema."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import typing as t
import uuid

import marshmallow as ma
import pytest

from flask_mcp.schemas.hints import field_for_hint, schema_from_dataclass, schema_from_signature
from flask_mcp.schemas.json_schema import schema_to_json_schema


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Point(ma.Schema):
    x = ma.fields.Integer(required=True)


@dataclasses.dataclass
class Address:
    street: str
    number: int = 1


def everything(
    text: str,
    count: int,
    ratio: float,
    flag: bool,
    tags: list[str],
    scores: dict[str, float],
    maybe: int | None,
    mode: t.Literal["fast", "slow"],
    color: Color,
    when: datetime.datetime,
    day: datetime.date,
    ident: uuid.UUID,
    point: Point,
    address: Address,
    anything: t.Any,
    described: t.Annotated[str, "What it is"],
    optional: str = "x",
    nothing: str | None = None,
    *args: t.Any,
    **kwargs: t.Any,
) -> None:
    """Uses every supported hint."""


def properties() -> dict[str, t.Any]:
    return schema_to_json_schema(schema_from_signature(everything, name="everything"))["properties"]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("text", {"type": "string"}),
        ("count", {"type": "integer"}),
        ("ratio", {"type": "number"}),
        ("flag", {"type": "boolean"}),
        ("tags", {"type": "array", "items": {"type": "string"}}),
        ("scores", {"type": "object", "additionalProperties": {"type": "number"}}),
        ("maybe", {"anyOf": [{"type": "integer"}, {"type": "null"}]}),
        ("mode", {"type": "string", "enum": ["fast", "slow"]}),
        ("color", {"type": "string", "enum": ["red", "blue"]}),
        ("when", {"type": "string", "format": "date-time"}),
        ("day", {"type": "string", "format": "date"}),
        ("ident", {"type": "string", "format": "uuid"}),
        ("point", {"$ref": "#/$defs/Point"}),
        ("address", {"$ref": "#/$defs/Address"}),
        ("described", {"type": "string", "description": "What it is"}),
        ("optional", {"type": "string", "default": "x"}),
    ],
)
def test_hint_to_json_schema(name: str, expected: dict[str, t.Any]) -> None:
    assert properties()[name] == expected


def test_required_are_parameters_without_defaults() -> None:
    schema = schema_to_json_schema(schema_from_signature(everything, name="everything"))
    assert "optional" not in schema["required"] and "nothing" not in schema["required"]
    assert {"text", "count", "maybe", "address"} <= set(schema["required"])
    assert "args" not in schema["properties"] and "kwargs" not in schema["properties"]


def test_loading_converts_values() -> None:
    schema = schema_from_signature(everything, name="everything")()
    loaded = schema.load(
        {
            "text": "t",
            "count": 3,
            "ratio": 1,
            "flag": True,
            "tags": ["a"],
            "scores": {"a": 1.5},
            "maybe": None,
            "mode": "fast",
            "color": "blue",
            "when": "2026-01-02T03:04:05",
            "day": "2026-01-02",
            "ident": "12345678-1234-5678-1234-567812345678",
            "point": {"x": 1},
            "address": {"street": "Main"},
            "anything": [1, {"a": None}],
            "described": "d",
        }
    )
    assert loaded["color"] is Color.BLUE
    assert loaded["when"] == datetime.datetime(2026, 1, 2, 3, 4, 5)
    assert loaded["address"] == Address("Main", 1)
    assert loaded["optional"] == "x"
    assert isinstance(loaded["ident"], uuid.UUID)


def test_strict_integers_reject_numeric_strings_unless_lenient() -> None:
    with pytest.raises(ma.ValidationError):
        field_for_hint(int).deserialize("5")
    assert field_for_hint(int, strict=False).deserialize("5") == 5


class Level(enum.Enum):
    LOW = 1
    HIGH = 2


#: (hint, values JSON has for it, values of other JSON types that must not pass as it).
STRICT_TYPES = [
    (bool, [True, False], ["on", "off", "yes", "no", "true", "false", "True", "1", "0", 1, 0, 1.0, 0.0, "", None]),
    (int, [0, 1, -7, 2**60], ["1", "01", 1.0, 1.5, True, False, "", None]),
    (float, [0, 1, 1.5, -2.25, 10**20], ["1.5", "1", "nan", True, False, "", None]),
    (t.Literal[1, "a"], [1, "a"], [True, 1.0, "1"]),
    (t.Literal[True], [True], [1, 1.0, "true"]),
    (t.Literal[0, 2], [0, 2], [False, 0.0, "0"]),
    (Level, [1, 2], ["1", 1.0, True]),
    (list[bool], [[True, False]], [[1], ["yes"]]),
    (dict[str, bool], [{"a": True}], [{"a": "on"}, {"a": 1}]),
    (bool | None, [True, None], ["on", 1]),
]


@pytest.mark.parametrize(("hint", "good", "bad"), STRICT_TYPES)
def test_values_must_have_the_json_type_of_their_hint(hint: t.Any, good: list[t.Any], bad: list[t.Any]) -> None:
    field = field_for_hint(hint)
    for value in good:
        loaded = field.deserialize(value)
        assert loaded == value or loaded == hint(value)
    for value in bad:
        with pytest.raises(ma.ValidationError):
            field.deserialize(value)
            pytest.fail(f"{value!r} passed as {hint}")


@pytest.mark.parametrize(
    ("hint", "text", "value"), [(bool, "true", True), (bool, "false", False), (float, "1.5", 1.5), (int, "3", 3)]
)
def test_only_lenient_fields_read_text(hint: type, text: str, value: t.Any) -> None:
    """URI template variables and prompt arguments always arrive as strings; tool arguments do not."""
    assert field_for_hint(hint, strict=False).deserialize(text) == value
    with pytest.raises(ma.ValidationError):
        field_for_hint(hint).deserialize(text)


def test_strict_booleans_in_a_tool_schema() -> None:
    def toggle(on: bool, ratio: float = 0.5) -> None: ...

    schema = schema_from_signature(toggle, name="toggle")()
    assert schema.load({"on": False, "ratio": 1}) == {"on": False, "ratio": 1.0}
    errors = schema.validate({"on": "yes", "ratio": "0.5"})
    assert errors == {"on": ["Not a valid boolean."], "ratio": ["Not a valid number."]}


@pytest.mark.parametrize("bad", [{"mode": "medium"}, {"color": "green"}])
def test_choices_are_validated(bad: dict[str, str]) -> None:
    def func(mode: t.Literal["fast", "slow"] = "fast", color: Color = Color.RED) -> None:
        """Choices."""

    with pytest.raises(ma.ValidationError) as info:
        schema_from_signature(func, name="f")().load(bad)
    assert set(info.value.messages) == set(bad)


def test_only_keeps_named_parameters() -> None:
    def func(a: int, b: int, c: int = 0) -> None:
        """Three."""

    schema = schema_from_signature(func, name="f", only=["a", "c"])()
    assert set(schema.fields) == {"a", "c"}


def test_dataclass_schema_is_built_once() -> None:
    assert schema_from_dataclass(Address) is schema_from_dataclass(Address)
