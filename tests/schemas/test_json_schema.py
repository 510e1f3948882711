"""marshmallow -> JSON Schema 2020-12 through apispec's converter."""

from __future__ import annotations

import jsonschema
import marshmallow as ma
import pytest
from marshmallow import fields, validate

from flask_mcp.schemas.json_schema import schema_to_json_schema


class Tag(ma.Schema):
    name = fields.String(required=True)


class Node(ma.Schema):
    id = fields.Integer(dump_only=True)
    secret = fields.String(load_only=True, required=True)
    label = fields.String(required=True, validate=validate.Length(min=1))
    weight = fields.Float(allow_none=True)
    tag = fields.Nested(Tag)
    children = fields.List(fields.Nested(lambda: Node()))


def _check_valid_2020_12(schema: dict) -> None:
    jsonschema.Draft202012Validator.check_schema(schema)


def test_root_is_a_closed_object_with_required_fields() -> None:
    schema = schema_to_json_schema(Tag)
    _check_valid_2020_12(schema)
    assert schema["type"] == "object"
    assert schema["properties"] == {"name": {"type": "string"}}
    assert schema["required"] == ["name"]
    assert schema["additionalProperties"] is False


@pytest.mark.parametrize("unknown", [ma.EXCLUDE, ma.INCLUDE])
def test_non_raising_schemas_stay_open(unknown: str) -> None:
    schema = schema_to_json_schema(Tag(unknown=unknown))
    assert schema.get("additionalProperties", True) is not False


def test_nested_and_recursive_schemas_move_to_defs() -> None:
    schema = schema_to_json_schema(Node)
    _check_valid_2020_12(schema)
    assert set(schema["$defs"]) == {"Node", "Tag"}
    assert schema["properties"]["tag"] == {"$ref": "#/$defs/Tag"}
    assert schema["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert "#/components" not in repr(schema)
    validator = jsonschema.Draft202012Validator(schema)
    good = {"label": "a", "secret": "s", "children": [{"label": "b", "secret": "t", "children": []}]}
    assert validator.is_valid(good)
    assert not validator.is_valid({"label": "a", "secret": "s", "children": [{"label": "b", "bogus": 1}]})


def test_input_drops_read_only_and_output_drops_write_only() -> None:
    inbound = schema_to_json_schema(Node, "input")
    outbound = schema_to_json_schema(Node, "output")
    assert "id" not in inbound["properties"] and "secret" in inbound["properties"]
    assert "secret" in inbound["required"]
    assert "id" in outbound["properties"] and "secret" not in outbound["properties"]
    assert "secret" not in outbound.get("required", [])
    # The same rule applies inside $defs.
    assert "id" not in inbound["$defs"]["Node"]["properties"]
    assert "secret" not in outbound["$defs"]["Node"]["properties"]


def test_nullable_fields_use_any_of_with_null() -> None:
    schema = schema_to_json_schema(Node)
    assert schema["properties"]["weight"] == {"anyOf": [{"type": "number"}, {"type": "null"}]}


def test_a_schema_without_fields_is_still_an_object() -> None:
    schema = schema_to_json_schema(ma.Schema.from_dict({}))
    assert schema["type"] == "object"
    assert schema["properties"] == {}


def test_conversions_do_not_share_state() -> None:
    first = schema_to_json_schema(Node)
    first["$defs"]["Tag"]["properties"]["name"]["type"] = "mutated"
    assert schema_to_json_schema(Node)["$defs"]["Tag"]["properties"]["name"]["type"] == "string"


def test_numbers_dumped_as_strings_are_strings_in_output() -> None:
    class Money(ma.Schema):
        amount = fields.Decimal(as_string=True)
        cents = fields.Integer(as_string=True, allow_none=True)
        count = fields.Integer()

    outbound = schema_to_json_schema(Money, "output")
    assert outbound["properties"] == {
        "amount": {"type": "string"},
        "cents": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "count": {"type": "integer"},
    }
    assert jsonschema.Draft202012Validator(outbound).is_valid(Money().dump({"amount": 1.5, "cents": 3, "count": 1}))
    # Loading still takes numbers, as advertised.
    assert schema_to_json_schema(Money, "input")["properties"]["amount"] == {"type": "number"}
