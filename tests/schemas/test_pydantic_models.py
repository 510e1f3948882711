"""pydantic models and constrained types as marshmallow schemas and fields, and their JSON Schema."""

from __future__ import annotations

import dataclasses
import datetime
import subprocess
import sys
import textwrap
import typing as t

import annotated_types
import jsonschema
import marshmallow as ma
import pydantic
import pytest
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, PositiveInt, RootModel, SecretStr, model_validator

from flask_mcp.schemas.fast_load import fast_loader
from flask_mcp.schemas.hints import field_for_hint, pydantic_schema, schema_from_signature
from flask_mcp.schemas.json_schema import schema_to_json_schema
from flask_mcp.schemas.pydantic_models import PydanticField, is_pydantic_hint, messages_of, model_schema


class Tag(BaseModel):
    label: str


class Item(BaseModel):
    name: str
    qty: t.Annotated[int, Field(ge=1)]
    tags: list[Tag] = []


class Node(BaseModel):
    value: int
    children: list[Node] = []


class Window(BaseModel):
    start: int
    end: int

    @model_validator(mode="after")
    def _ordered(self) -> Window:
        if self.end < self.start:
            raise ValueError("end is before start")
        return self


#: Models named like others: their definitions must not overwrite each other.
OtherTag = pydantic.create_model("Tag", colour=(str, ...))
OtherItem = pydantic.create_model("Item", tag=(OtherTag, ...))


class Event(BaseModel):
    model_config = ConfigDict(strict=True)
    at: datetime.date


@pydantic.dataclasses.dataclass
class Size:
    width: t.Annotated[int, Field(gt=0)]


@dataclasses.dataclass
class Plain:
    width: int


class Marsh(ma.Schema):
    x = ma.fields.Integer()


def _valid_2020_12(schema: dict[str, t.Any]) -> dict[str, t.Any]:
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


@pytest.mark.parametrize(
    "hint",
    [
        Item,
        Size,
        SecretStr,
        PositiveInt,
        t.Annotated[int, Field(ge=1)],
        t.Annotated[int, annotated_types.Gt(0)],
        t.Annotated[str, pydantic.AfterValidator(str.strip)],
        list[Item],
        Item | None,
        dict[str, t.Annotated[int, Field(le=3)]],
        t.Annotated[Item, "an item"],
    ],
)
def test_pydantic_hints_are_recognised(hint: t.Any) -> None:
    assert is_pydantic_hint(hint)


@pytest.mark.parametrize(
    "hint",
    [
        int,
        str,
        t.Any,
        t.Annotated[int, "a description"],
        Plain,
        Marsh,
        t.Literal["a", 1],
        dict[str, int],
        tuple[int, ...],
    ],
)
def test_other_hints_are_left_to_marshmallow(hint: t.Any) -> None:
    assert not is_pydantic_hint(hint)
    assert not isinstance(field_for_hint(hint), PydanticField)


def _errors(model: t.Any, value: t.Any) -> pydantic.ValidationError:
    with pytest.raises(pydantic.ValidationError) as info:
        pydantic.TypeAdapter(model).validate_python(value)
    return info.value


def test_messages_nest_like_marshmallow() -> None:
    error = _errors(Item, {"name": 3, "qty": 0, "tags": [{"label": "a"}, {"label": None}]})
    assert messages_of(error) == {
        "name": ["Input should be a valid string"],
        "qty": ["Input should be greater than or equal to 1"],
        "tags": {1: {"label": ["Input should be a valid string"]}},
    }


def test_model_wide_failures_go_under_schema() -> None:
    assert messages_of(_errors(Window, {"start": 2, "end": 1})) == {"_schema": ["Value error, end is before start"]}
    # One field's value failing as a whole is a plain list, as a marshmallow field's is.
    assert messages_of(_errors(t.Annotated[int, Field(ge=1)], 0), field=True) == [
        "Input should be greater than or equal to 1"
    ]


def test_a_location_with_nested_and_own_failures_keeps_both() -> None:
    class Outer(BaseModel):
        window: Window
        other: int

    error = _errors(Outer, {"window": {"start": 2, "end": 1}, "other": "x"})
    assert messages_of(error) == {
        "window": ["Value error, end is before start"],
        "other": ["Input should be a valid integer, unable to parse string as an integer"],
    }
    error = _errors(list[Window], [{"start": 2, "end": 1}, {"start": "x", "end": 1}])
    assert messages_of(error, field=True) == {
        0: ["Value error, end is before start"],
        1: {"start": ["Input should be a valid integer, unable to parse string as an integer"]},
    }


def test_a_constrained_parameter_is_validated_and_advertised() -> None:
    def order(qty: t.Annotated[int, Field(ge=1, description="How many")], note: str = "") -> None: ...

    schema = schema_from_signature(order, name="order")()
    assert fast_loader(schema) is None  # pydantic validates, not the shortcut
    assert schema.load({"qty": 2}) == {"qty": 2, "note": ""}
    with pytest.raises(ma.ValidationError) as info:
        schema.load({"qty": 0, "note": 1})
    assert info.value.messages == {
        "qty": ["Input should be greater than or equal to 1"],
        "note": ["Not a valid string."],
    }
    json_schema = _valid_2020_12(schema_to_json_schema(schema))
    assert json_schema["properties"]["qty"] == {"type": "integer", "minimum": 1, "description": "How many"}
    assert json_schema["required"] == ["qty"]


def test_a_model_parameter_is_one_nested_argument() -> None:
    def create(item: Item, count: PositiveInt = 1) -> None: ...

    schema = schema_from_signature(create, name="create")()
    loaded = schema.load({"item": {"name": "a", "qty": 2, "tags": [{"label": "x"}]}})
    assert loaded == {"item": Item(name="a", qty=2, tags=[Tag(label="x")]), "count": 1}
    with pytest.raises(ma.ValidationError) as info:
        schema.load({"item": {"name": "a", "qty": 0, "tags": [{}]}, "count": 0})
    assert info.value.messages == {
        "item": {"qty": ["Input should be greater than or equal to 1"], "tags": {0: {"label": ["Field required"]}}},
        "count": ["Input should be greater than 0"],
    }
    json_schema = _valid_2020_12(schema_to_json_schema(schema))
    assert json_schema["properties"]["item"]["properties"]["tags"]["items"] == {"$ref": "#/$defs/Tag"}
    assert json_schema["$defs"]["Tag"]["required"] == ["label"]
    assert json_schema["properties"]["count"] == {"type": "integer", "exclusiveMinimum": 0, "default": 1}


def test_descriptions_defaults_and_none() -> None:
    def find(
        item: t.Annotated[Item, "What to find"],
        near: Item | None = None,
        bad: Tag = None,  # type: ignore[assignment]
    ) -> None: ...

    properties = _valid_2020_12(schema_to_json_schema(schema_from_signature(find, name="find")))["properties"]
    assert properties["item"]["description"] == "What to find"
    assert {"type": "null"} in properties["near"]["anyOf"]
    # The hint does not allow None but the default is None: the schema says so.
    assert properties["bad"]["anyOf"][1] == {"type": "null"}
    assert (
        schema_from_signature(find, name="find")().load({"item": {"name": "a", "qty": 1}, "near": None})["near"] is None
    )


def test_clashing_definition_names_are_renamed() -> None:
    def both(first: list[Tag], second: list[OtherTag]) -> None:  # type: ignore[valid-type]
        ...

    def nested(first: Item, second: OtherItem) -> None:  # type: ignore[valid-type]
        ...

    schema = _valid_2020_12(schema_to_json_schema(schema_from_signature(both, name="both")))
    assert schema["properties"]["first"]["items"] == {"$ref": "#/$defs/Tag"}
    assert schema["properties"]["second"]["items"] == {"$ref": "#/$defs/Tag2"}
    assert set(schema["$defs"]["Tag2"]["properties"]) == {"colour"}
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid({"first": [{"label": "a"}], "second": [{"colour": "red"}]})
    assert not validator.is_valid({"first": [{"label": "a"}], "second": [{"label": "red"}]})
    schema = _valid_2020_12(schema_to_json_schema(schema_from_signature(nested, name="nested")))
    assert schema["properties"]["second"]["properties"]["tag"] == {"$ref": "#/$defs/Tag2"}
    assert set(schema["$defs"]) == {"Tag", "Tag2"}


def test_json_values_are_validated_by_json_rules() -> None:
    def plan(event: Event) -> None: ...

    # Strict Python validation refuses a string for a date; JSON validation takes ISO dates.
    loaded = schema_from_signature(plan, name="plan")().load({"event": {"at": "2024-05-01"}})
    assert loaded["event"].at == datetime.date(2024, 5, 1)


def test_the_model_schema_spreads_or_bundles() -> None:
    spread = pydantic_schema(Item)
    bundle = pydantic_schema(Item, bundle=True)
    assert spread is not None and bundle is not None
    arguments = {"name": "a", "qty": 2, "tags": [{"label": "x"}]}
    assert spread.load(arguments) == {"name": "a", "qty": 2, "tags": [Tag(label="x")]}
    assert bundle.load(arguments) == Item(**arguments)
    assert fast_loader(spread) is None
    with pytest.raises(ma.ValidationError) as info:
        spread.load({"qty": "x"})
    assert info.value.messages == {
        "name": ["Field required"],
        "qty": ["Input should be a valid integer, unable to parse string as an integer"],
    }
    with pytest.raises(ma.ValidationError, match="Invalid input type"):
        spread.load([1])  # type: ignore[arg-type]


def test_unknown_names_follow_the_model_config() -> None:
    class Closed(BaseModel):
        model_config = ConfigDict(extra="forbid")
        a: int

    class Open(BaseModel):
        model_config = ConfigDict(extra="allow")
        a: int

    assert t.cast(ma.Schema, pydantic_schema(Item)).unknown == ma.EXCLUDE
    assert t.cast(ma.Schema, pydantic_schema(Open)).unknown == ma.INCLUDE
    closed = t.cast(ma.Schema, pydantic_schema(Closed))
    assert closed.unknown == ma.RAISE
    assert schema_to_json_schema(closed)["additionalProperties"] is False
    with pytest.raises(ma.ValidationError) as info:
        closed.load({"a": 1, "b": 2})
    assert info.value.messages == {"b": ["Extra inputs are not permitted"]}
    # The binder reports unknown names itself and asks for them to be dropped.
    assert closed.load({"a": 1, "b": 2}, unknown=ma.EXCLUDE) == {"a": 1}


def test_aliases_are_the_argument_names() -> None:
    class Aliased(BaseModel):
        item_id: int = Field(alias="itemId")
        other: int = Field(0, validation_alias=AliasChoices("o", "other"))

    schema = t.cast(ma.Schema, pydantic_schema(Aliased))
    assert {name: field.data_key for name, field in schema.load_fields.items()} == {"item_id": "itemId", "other": None}
    assert schema.load({"itemId": 3}) == {"item_id": 3, "other": 0}
    assert schema.dump(Aliased(itemId=3)) == {"itemId": 3, "other": 0}


def test_a_recursive_model_is_an_object_at_the_root() -> None:
    for direction in ("input", "output"):
        schema = _valid_2020_12(schema_to_json_schema(model_schema(Node), direction))  # type: ignore[arg-type]
        assert schema["type"] == "object"
        assert schema["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
        assert jsonschema.Draft202012Validator(schema).is_valid({"value": 1, "children": [{"value": 2}]})


def test_dumping_validates_what_is_not_a_model_instance() -> None:
    schema = model_schema(Item)()

    @dataclasses.dataclass
    class Row:
        name: str
        qty: int

    assert schema.dump(Item(name="a", qty=1)) == {"name": "a", "qty": 1, "tags": []}
    assert schema.dump(Row("b", 2)) == {"name": "b", "qty": 2, "tags": []}
    with pytest.raises(ma.ValidationError) as info:
        schema.dump({"name": "c"})
    assert info.value.messages == {"qty": ["Field required"]}


def test_a_model_that_is_not_an_object_cannot_be_a_schema() -> None:
    with pytest.raises(TypeError, match="does not describe a JSON object"):
        model_schema(RootModel[list[int]])


def test_pydantic_dataclasses_and_plain_classes() -> None:
    size = pydantic_schema(Size, bundle=True)
    assert size is not None and size.load({"width": 3}) == Size(width=3)
    assert pydantic_schema(Plain) is None and pydantic_schema(Marsh) is None and pydantic_schema(3) is None


def test_without_pydantic_nothing_changes() -> None:
    """An app that never imports pydantic (here, cannot) registers and calls hinted tools as before."""
    script = textwrap.dedent(
        """
        import json, sys, typing as t
        sys.modules["pydantic"] = None  # import pydantic now raises ImportError
        from flask_mcp.components.build import build_tool
        from flask_mcp.components.registry import Registry
        from flask_mcp.core.direct_calls import call_tool_json
        from flask_mcp.core.server import Server

        def add(a: int, b: t.Annotated[int, "second"] = 2) -> dict:
            return {"sum": a + b}

        registry = Registry()
        tool = build_tool(add)
        registry.add_tool(tool)
        properties = tool.descriptor["inputSchema"]["properties"]
        assert properties["b"] == {"type": "integer", "default": 2, "description": "second"}
        print(call_tool_json(Server(registry, name="n", version="1"), "add", {"a": 40}).decode())
        assert not any(name.startswith("flask_mcp.schemas.pydantic") for name in sys.modules)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == '{"result":{"sum":42}}'
