"""pydantic models and constrained types as tool schemas (the optional ``pydantic`` extra).

Only imported once a pydantic type has been seen (:mod:`flask_mcp.schemas.hints`
asks ``sys.modules`` first), so an app without pydantic never loads it. The
rest of flask_mcp keeps speaking marshmallow: each pydantic type gets a
marshmallow face that validates and dumps through pydantic.

* :class:`PydanticField`: a parameter (or dataclass field) hinted with a
  pydantic model, a pydantic dataclass, a pydantic type (``EmailStr``) or a
  constrained hint (``Annotated[int, Field(ge=1)]``, ``PositiveInt``); its
  value is validated by a :class:`~pydantic.TypeAdapter`.
* :class:`PydanticModelSchema`: a model describing the whole arguments
  object (``input_schema=Model``, or ``data: Model`` with
  ``argument_binding="bundle"``) or a result (``output_schema=Model``, a
  ``-> Model`` annotation).

Both supply their JSON Schema from pydantic (``json_schema_for``, which
:func:`~flask_mcp.schemas.json_schema.schema_to_json_schema` asks for), and
word failures as marshmallow does: ``{"item": {"qty": ["Input should be
greater than or equal to 1"]}}``, list positions as integer keys, and
model-wide failures under ``_schema``.
"""

from __future__ import annotations

import json
import typing as t

import marshmallow as ma
import pydantic
from marshmallow import fields
from pydantic.dataclasses import is_pydantic_dataclass

from .messages import store_message

__all__ = [
    "PydanticField",
    "PydanticModelSchema",
    "is_pydantic_hint",
    "is_pydantic_model",
    "messages_of",
    "model_schema",
]

Direction = t.Literal["input", "output"]

#: Packages whose objects in ``Annotated[...]`` mean pydantic validates the value.
_METADATA_PACKAGES = frozenset({"pydantic", "pydantic_core", "annotated_types"})
#: pydantic's ``extra`` setting -> marshmallow's ``unknown``.
_UNKNOWN = {"forbid": ma.RAISE, "allow": ma.INCLUDE}
_DEFS_PREFIX = "#/$defs/"


def is_pydantic_model(cls: t.Any) -> bool:
    """Whether *cls* is a pydantic model class or a pydantic dataclass."""
    return isinstance(cls, type) and (issubclass(cls, pydantic.BaseModel) or is_pydantic_dataclass(cls))


def _package(obj: t.Any) -> str:
    module = obj.__module__ if isinstance(obj, type) else type(obj).__module__
    return str(module).partition(".")[0]


def is_pydantic_hint(hint: t.Any) -> bool:
    """Whether pydantic must validate values of *hint*.

    True for models, pydantic dataclasses and pydantic's own types
    (``EmailStr``, ``SecretStr``, ``AnyUrl``...), for ``Annotated`` hints
    carrying pydantic or ``annotated_types`` metadata (``Field(ge=1)``,
    ``PositiveInt``, ``AfterValidator``...), and for any hint containing one
    (``list[Item]``, ``Item | None``).
    """
    if is_pydantic_model(hint) or (isinstance(hint, type) and _package(hint) == "pydantic"):
        return True
    args = t.get_args(hint)
    if t.get_origin(hint) is t.Annotated:
        return any(_package(extra) in _METADATA_PACKAGES for extra in args[1:]) or is_pydantic_hint(args[0])
    return any(is_pydantic_hint(arg) for arg in args if arg is not Ellipsis)


def _validate(adapter: pydantic.TypeAdapter[t.Any], value: t.Any) -> t.Any:
    """Validate a value that came as JSON by pydantic's JSON rules.

    In JSON mode a strict model still takes ISO dates and UUIDs as strings,
    which it refuses as Python values.
    """
    try:
        encoded = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):  # a Python value handed over directly (a test, another schema)
        return adapter.validate_python(value)
    return adapter.validate_json(encoded)


def messages_of(error: pydantic.ValidationError, *, field: bool = False) -> t.Any:
    """pydantic's errors as marshmallow's messages: ``{"qty": ["Input should be ..."]}``.

    :param field: the errors of one field's value: failures of the value as
        a whole are a list rather than ``{"_schema": [...]}``.
    """
    messages: dict[t.Any, t.Any] = {}
    for problem in error.errors(include_url=False):
        store_message(messages, tuple(problem["loc"]), problem["msg"])
    if field and set(messages) == {"_schema"}:
        return messages["_schema"]
    return messages


def _resolve(node: t.Any, defs: dict[str, t.Any], seen: frozenset[str] = frozenset()) -> t.Any:
    """*node* with its ``$ref`` to *defs* written out; a recursive one becomes ``{}`` (any value)."""
    if isinstance(node, list):
        return [_resolve(item, defs, seen) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(_DEFS_PREFIX):
        name = ref[len(_DEFS_PREFIX) :]
        rest = {key: value for key, value in node.items() if key != "$ref"}
        if name in seen or name not in defs:
            return _resolve(rest, defs, seen)
        return {**_resolve(defs[name], defs, seen | {name}), **_resolve(rest, defs, seen)}
    return {key: _resolve(value, defs, seen) for key, value in node.items() if key != "$defs"}


def _openapi_metadata(schema: dict[str, t.Any]) -> dict[str, t.Any]:
    # apispec (the OpenAPI document) copies a field's metadata as its property: written
    # out, since it knows nothing of the $defs. MCP listings use json_schema_for instead.
    return t.cast(dict[str, t.Any], _resolve(schema, schema.get("$defs", {})))


class PydanticField(fields.Field):  # type: ignore[type-arg]
    """A value validated and dumped by pydantic, for a hint :func:`is_pydantic_hint` accepts."""

    def __init__(self, hint: t.Any, **kwargs: t.Any) -> None:
        self.hint = hint
        self.adapter: pydantic.TypeAdapter[t.Any] = pydantic.TypeAdapter(hint)
        try:
            self.adapter.validate_python(None)
            self._takes_none = True
        except pydantic.ValidationError:
            self._takes_none = False
        metadata = {**_openapi_metadata(self.adapter.json_schema()), **kwargs.pop("metadata", {})}
        # None is refused before validation unless allowed: pydantic decides (``Item | None``).
        kwargs.setdefault("allow_none", self._takes_none)
        super().__init__(metadata=metadata, **kwargs)

    def _deserialize(self, value: t.Any, attr: str | None, data: t.Any, **kwargs: t.Any) -> t.Any:
        try:
            return _validate(self.adapter, value)
        except pydantic.ValidationError as exc:
            raise ma.ValidationError(messages_of(exc, field=True)) from None

    def _serialize(self, value: t.Any, attr: str | None, obj: t.Any, **kwargs: t.Any) -> t.Any:
        if value is None:
            return None
        # A value of the wrong type goes out as it is; the output check names it.
        return self.adapter.dump_python(value, mode="json", by_alias=True, warnings=False)

    def json_schema_for(self, direction: Direction) -> dict[str, t.Any]:
        """This value's JSON Schema from pydantic, with its ``$defs`` (merged by the caller)."""
        schema = self.adapter.json_schema(mode="validation" if direction == "input" else "serialization")
        description = self.metadata.get("description")
        if description and "description" not in schema:
            schema["description"] = description
        if direction == "input" and self.load_default is not ma.missing and not callable(self.load_default):
            schema["default"] = self.adapter.dump_python(self.load_default, mode="json", warnings=False)
        if self.allow_none and not self._takes_none:  # a None default the hint does not allow
            defs = schema.pop("$defs", None)
            schema = {"anyOf": [schema, {"type": "null"}]}
            if defs:
                schema["$defs"] = defs
        return schema


class PydanticModelSchema(ma.Schema):
    """A pydantic model's marshmallow face: it loads and dumps through the model.

    One field per model field (by alias) says which arguments it declares;
    validation is the model's own, model validators included.

    :param bundle: load returns the model instance (``data=`` of a bundled
        tool) rather than its fields by name (a spread tool's keyword arguments).
    """

    #: Set on each model's subclass.
    model: t.ClassVar[type[t.Any]]
    adapter: t.ClassVar[pydantic.TypeAdapter[t.Any]]

    def __init__(self, *, bundle: bool = False, **kwargs: t.Any) -> None:
        config = getattr(self.model, "model_config", None) or getattr(self.model, "__pydantic_config__", {})
        kwargs.setdefault("unknown", _UNKNOWN.get(config.get("extra") or "", ma.EXCLUDE))
        super().__init__(**kwargs)
        self.bundle = bundle
        self._keys = frozenset(field.data_key or name for name, field in self.load_fields.items())

    def load(  # type: ignore[override]
        self,
        data: t.Mapping[str, t.Any],
        *,
        many: bool | None = None,
        partial: bool | t.Sequence[str] | t.AbstractSet[str] | None = None,
        unknown: str | None = None,
    ) -> t.Any:
        """Validate *data* by the model; names it does not declare go by *unknown* (``EXCLUDE`` drops them).

        :raises marshmallow.ValidationError: pydantic's errors, worded as marshmallow's.
        """
        if not isinstance(data, t.Mapping):
            raise ma.ValidationError({"_schema": ["Invalid input type."]})
        if (unknown or self.unknown) == ma.EXCLUDE:
            data = {key: value for key, value in data.items() if key in self._keys}
        try:
            instance = _validate(self.adapter, dict(data))
        except pydantic.ValidationError as exc:
            raise ma.ValidationError(messages_of(exc)) from None
        if self.bundle:
            return instance
        return {name: getattr(instance, name) for name in self.load_fields}

    def dump(self, obj: t.Any, *, many: bool | None = None) -> t.Any:
        """The JSON form of *obj*: a model instance, or anything the model validates (a dict, an object).

        :raises marshmallow.ValidationError: *obj* does not fit the model.
        """
        if not isinstance(obj, self.model):
            try:
                obj = self.adapter.validate_python(obj, from_attributes=True)
            except pydantic.ValidationError as exc:
                raise ma.ValidationError(messages_of(exc)) from None
        return self.adapter.dump_python(obj, mode="json", by_alias=True, warnings=False)

    def json_schema_for(self, direction: Direction) -> dict[str, t.Any]:
        """The model's JSON Schema, an object at the root (a recursive model's ``$ref`` written out)."""
        schema = self.adapter.json_schema(mode="validation" if direction == "input" else "serialization")
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith(_DEFS_PREFIX) and "type" not in schema:
            # Tool schemas must have "type": "object" at the root; $defs stays for the recursion.
            defs = schema["$defs"]
            schema = {**defs[ref[len(_DEFS_PREFIX) :]], "$defs": defs}
        schema.setdefault("properties", {})
        return schema


_model_schemas: dict[type[t.Any], type[PydanticModelSchema]] = {}


def model_schema(model: type[t.Any]) -> type[PydanticModelSchema]:
    """Build (once) the marshmallow face of pydantic model *model*.

    :raises TypeError: the model does not describe a JSON object (a ``RootModel`` of a list, say).
    """
    if model not in _model_schemas:
        adapter: pydantic.TypeAdapter[t.Any] = pydantic.TypeAdapter(model)
        schema = adapter.json_schema()
        defs = schema.get("$defs", {})
        root = _resolve(schema, defs)
        if root.get("type") != "object":
            raise TypeError(
                f"pydantic model {model.__name__} does not describe a JSON object, so it cannot be a schema"
            )
        properties = root.get("properties", {})
        required = set(root.get("required", ()))
        declared: dict[str, t.Any] = {"model": model, "adapter": adapter}
        model_fields = model.model_fields if issubclass(model, pydantic.BaseModel) else model.__pydantic_fields__
        for name, info in t.cast(dict[str, t.Any], model_fields).items():
            key = info.validation_alias if isinstance(info.validation_alias, str) else info.alias or name
            # The model validates; the fields only name the arguments (and describe them to apispec).
            declared[name] = fields.Raw(
                data_key=None if key == name else key, required=key in required, metadata=properties.get(key, {})
            )
        _model_schemas[model] = type(model.__name__, (PydanticModelSchema,), declared)
    return _model_schemas[model]
