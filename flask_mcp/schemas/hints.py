"""Python type hints to marshmallow schemas.

When a tool, prompt or resource template is registered without an explicit
schema, its signature is turned into a marshmallow schema here; the JSON
Schema then comes from :mod:`flask_mcp.schemas.json_schema` like any other schema, so
hinted and hand-written schemas behave identically.

pydantic types are handed to :mod:`flask_mcp.schemas.pydantic_models`, and
only once the app has imported pydantic: an app without it never loads it.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import inspect
import sys
import types
import typing as t
import uuid

import marshmallow as ma
from marshmallow import fields, validate

__all__ = [
    "InjectedParameter",
    "JSONBoolean",
    "JSONNumber",
    "JSONOneOf",
    "context_parameter",
    "field_for_hint",
    "pydantic_schema",
    "schema_from_dataclass",
    "schema_from_signature",
]


class InjectedParameter:
    """Base of the parameter types the server fills in itself, never from the client's arguments.

    :class:`flask_mcp.Context` derives from it. Schemas only need to recognise
    such a parameter, to leave it out of a tool's input; what it does is the
    protocol core's business, which this layer does not import.
    """


def _injected(hint: t.Any) -> bool:
    return isinstance(hint, type) and issubclass(hint, InjectedParameter)


def context_parameter(func: t.Callable[..., t.Any]) -> str | None:
    """The name of *func*'s parameter annotated with :class:`~flask_mcp.Context`, if any."""
    try:
        hints = t.get_type_hints(func)
    except Exception:  # unresolvable forward references: no context, like no hint
        return None
    return next((name for name, hint in hints.items() if _injected(hint) and name != "return"), None)


_JSON_DEFAULTS = (str, int, float, bool, type(None))


def _pydantic() -> types.ModuleType | None:
    """The pydantic adapter, once the app has imported pydantic (a pydantic hint cannot exist before)."""
    if sys.modules.get("pydantic") is None:
        return None
    from . import pydantic_models

    return pydantic_models


def pydantic_schema(cls: t.Any, *, bundle: bool = False) -> ma.Schema | None:
    """A schema validating and dumping by pydantic model *cls*; ``None`` when *cls* is not a pydantic model.

    :param bundle: loading gives the model instance (a bundled tool's
        ``data``), not its fields by name (a spread tool's keyword arguments).
    """
    adapter = _pydantic()
    if adapter is None or not adapter.is_pydantic_model(cls):
        return None
    return t.cast(ma.Schema, adapter.model_schema(cls)(bundle=bundle))


class JSONBoolean(fields.Boolean):
    """``true`` and ``false``, nothing else.

    marshmallow's :class:`~marshmallow.fields.Boolean` also takes ``1``,
    ``"on"``, ``"yes"``, ``"true"``..., and ``truthy={True}`` would still
    take ``1`` and ``1.0``, which equal ``True`` in Python.
    """

    def _deserialize(self, value: t.Any, attr: str | None, data: t.Any, **kwargs: t.Any) -> bool:
        if not isinstance(value, bool):
            raise self.make_error("invalid")
        return value


class JSONNumber(fields.Float):
    """A JSON number: an integer or a float, not the strings and booleans :class:`~marshmallow.fields.Float` takes."""

    def _deserialize(self, value: t.Any, attr: str | None, data: t.Any, **kwargs: t.Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.make_error("invalid")
        return super()._deserialize(value, attr, data, **kwargs)


class JSONOneOf(validate.OneOf):
    """:class:`~marshmallow.validate.OneOf` telling ``true`` from ``1`` and ``1`` from ``1.0``, as JSON does."""

    def __call__(self, value: t.Any) -> t.Any:
        if not any(type(value) is type(choice) and value == choice for choice in self.choices):
            raise ma.ValidationError(self._format_error(value))
        return value


_SIMPLE: dict[t.Any, t.Callable[[bool], fields.Field[t.Any]]] = {
    str: lambda strict: fields.String(),
    int: lambda strict: fields.Integer(strict=strict),
    # Lenient values always arrive as strings: there "true" and "1.5" are how they are spelled.
    float: lambda strict: JSONNumber(allow_nan=False) if strict else fields.Float(allow_nan=False),
    bool: lambda strict: JSONBoolean() if strict else fields.Boolean(),
    datetime.datetime: lambda strict: fields.DateTime(),
    datetime.date: lambda strict: fields.Date(),
    datetime.time: lambda strict: fields.Time(),
    uuid.UUID: lambda strict: fields.UUID(),
    decimal.Decimal: lambda strict: fields.Decimal(allow_nan=False),
    dict: lambda strict: fields.Dict(),
    list: lambda strict: fields.List(fields.Raw()),
    t.Any: lambda strict: fields.Raw(allow_none=True),
}


class _DataclassSchema(ma.Schema):
    """Loads into the dataclass named by ``Meta.dataclass``."""

    @ma.post_load
    def _make(self, data: dict[str, t.Any], **kwargs: t.Any) -> t.Any:
        return self.Meta.dataclass(**data)  # type: ignore[attr-defined]


_dataclass_schemas: dict[type, type[ma.Schema]] = {}


def schema_from_dataclass(cls: type) -> type[ma.Schema]:
    """Build (once) a schema that validates and loads into dataclass *cls*."""
    if cls not in _dataclass_schemas:
        hints = t.get_type_hints(cls, include_extras=True)
        declared: dict[str, fields.Field[t.Any]] = {}
        for field in dataclasses.fields(cls):
            has_default = field.default is not dataclasses.MISSING or field.default_factory is not dataclasses.MISSING
            default = field.default if field.default is not dataclasses.MISSING else inspect.Parameter.empty
            declared[field.name] = _field(hints.get(field.name, t.Any), default, has_default, strict=True)
        meta = type("Meta", (), {"dataclass": cls})
        _dataclass_schemas[cls] = type(cls.__name__, (_DataclassSchema,), {**declared, "Meta": meta})
    return _dataclass_schemas[cls]


def field_for_hint(hint: t.Any, *, strict: bool = True) -> fields.Field[t.Any]:
    """Return a marshmallow field for a type hint.

    Supported: ``str``, ``int``, ``float``, ``bool``, ``list[...]``,
    ``tuple[X, ...]``, ``set[...]``, ``dict[str, ...]``, ``Optional``/``X | None``,
    ``Literal``, :class:`~enum.Enum`, ``datetime``/``date``/``time``, ``UUID``,
    ``Decimal``, marshmallow :class:`~marshmallow.Schema` subclasses, dataclasses,
    ``Annotated[X, "description"]`` and ``Any``; pydantic models and
    constrained types (``Annotated[int, Field(ge=1)]``), alone or inside
    another hint, are validated by pydantic
    (:class:`~flask_mcp.schemas.pydantic_models.PydanticField`). Anything
    else becomes a :class:`~marshmallow.fields.Raw` field accepting any JSON value.

    :param strict: values must have the JSON type of their hint: an ``int``
        is a JSON integer (not ``"1"``, ``1.0`` or ``true``), a ``float`` a
        JSON number (not ``"1.5"`` or ``true``), a ``bool`` only ``true`` or
        ``false`` (not ``1``, ``"on"`` or ``"true"``). Off for values that
        always arrive as strings (URI template variables, prompt arguments),
        which are converted from their text.
    """
    description = None
    origin = t.get_origin(hint)
    if origin is t.Annotated:
        description = next((x for x in t.get_args(hint)[1:] if isinstance(x, str)), None)
    adapter = _pydantic()
    if adapter is not None and adapter.is_pydantic_hint(hint):
        return t.cast(
            fields.Field[t.Any],
            adapter.PydanticField(hint, metadata={"description": description} if description else {}),
        )
    if origin is t.Annotated:
        hint = t.get_args(hint)[0]
        origin = t.get_origin(hint)
    allow_none = False
    if origin in (t.Union, types.UnionType):
        args = [arg for arg in t.get_args(hint) if arg is not type(None)]
        allow_none = len(args) < len(t.get_args(hint))
        hint = args[0] if len(args) == 1 else t.Any
        origin = t.get_origin(hint)
    field = _build(hint, origin, strict)
    if allow_none:
        field.allow_none = True
    if description:
        field.metadata = {**field.metadata, "description": description}
    return field


def _build(hint: t.Any, origin: t.Any, strict: bool) -> fields.Field[t.Any]:
    if hint in _SIMPLE:
        return _SIMPLE[hint](strict)
    args = t.get_args(hint)
    if origin is t.Literal:
        choices = validate.OneOf(list(args))
        kinds = {type(arg) for arg in args}
        if kinds == {str}:
            return fields.String(validate=choices)
        if kinds == {int}:
            return fields.Integer(strict=strict, validate=choices)
        return fields.Raw(validate=JSONOneOf(list(args)) if strict else choices)
    if origin in (list, set, frozenset, tuple) or (isinstance(origin, type) and issubclass(origin, t.Sequence)):
        item = args[0] if args and args[0] is not Ellipsis else t.Any
        return fields.List(field_for_hint(item, strict=strict))
    if origin is dict or hint is dict:
        values = args[1] if len(args) == 2 else t.Any
        return fields.Dict(keys=fields.String(), values=field_for_hint(values, strict=strict))
    if isinstance(hint, type):
        if issubclass(hint, enum.Enum):
            # Naming the value field lets apispec advertise its JSON type too.
            kinds = {type(member.value) for member in hint}
            by_value: bool | fields.Field[t.Any] = True
            if kinds == {str}:
                by_value = fields.String()
            elif kinds == {int}:
                by_value = fields.Integer(strict=strict)
            return fields.Enum(hint, by_value=by_value)
        if issubclass(hint, ma.Schema):
            return fields.Nested(hint)
        if dataclasses.is_dataclass(hint):
            return fields.Nested(schema_from_dataclass(hint))
    return fields.Raw(allow_none=True)


def _field(hint: t.Any, default: t.Any, has_default: bool, *, strict: bool) -> fields.Field[t.Any]:
    field = field_for_hint(hint, strict=strict)
    if not has_default:
        field.required = True
    elif default is None:
        field.allow_none = True
    elif isinstance(default, (*_JSON_DEFAULTS, enum.Enum)):
        # Advertised as "default" in the JSON Schema and filled in on load.
        field.load_default = default
    return field


def schema_from_signature(
    func: t.Callable[..., t.Any],
    *,
    name: str,
    only: t.Collection[str] | None = None,
    exclude: t.Collection[str] = (),
    strict: bool = True,
) -> type[ma.Schema]:
    """Build a schema with one field per parameter of *func*.

    Parameters with a default are optional; ``*args``/``**kwargs`` are left
    out, and so is every parameter not in *only* when that is given, and
    every one in *exclude*.

    :param name: the schema class name (shown in ``$defs`` if it is nested).
    """
    hints = t.get_type_hints(func, include_extras=True)
    declared: dict[str, fields.Field[t.Any]] = {}
    for param in inspect.signature(func).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or (only is not None and param.name not in only):
            continue
        if param.name in exclude:
            continue
        if _injected(hints.get(param.name)):
            continue  # injected by the server, not an argument
        has_default = param.default is not param.empty
        declared[param.name] = _field(hints.get(param.name, t.Any), param.default, has_default, strict=strict)
    return ma.Schema.from_dict(declared, name=name)
