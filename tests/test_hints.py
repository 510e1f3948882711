"""Type hints -> marshmallow schemas -> JSON Schema."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import typing as t
import uuid

import marshmallow as ma
import pytest

from flask_mcp.hints import field_for_hint, schema_from_dataclass, schema_from_signature
from flask_mcp.json_schema import schema_to_json_schema


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
        ("maybe", {"type": ["integer", "null"]}),
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
