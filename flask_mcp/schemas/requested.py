"""An elicitation form's ``requestedSchema``, from a marshmallow schema.

Elicitation forms are flat objects of primitive properties. Choices follow
SEP-1330: ``OneOf(choices)`` gives ``enum`` (a ``List`` of it, a
multi-select); ``OneOf(choices, labels=...)`` gives titled options
(``oneOf``, or ``items.anyOf`` for a list); an ``enumNames`` entry in a
field's metadata keeps the legacy titled form. Defaults become ``default``
(SEP-1034).
"""

from __future__ import annotations

import typing as t

import marshmallow as ma

from .json_schema import non_null, schema_to_json_schema

__all__ = ["requested_schema"]


def requested_schema(schema: type[ma.Schema] | ma.Schema) -> dict[str, t.Any]:
    """An elicitation ``requestedSchema`` for *schema* (see the module docstring)."""
    instance = schema() if isinstance(schema, type) else schema
    converted = schema_to_json_schema(instance, "input")
    # A form field is a single primitive type: one that may be null is one the user may leave out.
    properties = {name: _without_null(value) for name, value in converted["properties"].items()}
    for name, field in instance.fields.items():
        if name not in properties:
            continue
        target = properties[name]
        inner = field.inner if isinstance(field, ma.fields.List) else field
        if isinstance(field, ma.fields.List):
            target = target.setdefault("items", {})
        for validator in inner.validators:
            if isinstance(validator, ma.validate.OneOf) and validator.labels:
                titled = [
                    {"const": c, "title": str(label)}
                    for c, label in zip(validator.choices, validator.labels, strict=False)
                ]
                target.pop("enum", None)
                if isinstance(field, ma.fields.List):
                    target.pop("type", None)
                    target["anyOf"] = titled
                else:
                    target["oneOf"] = titled
        if "enumNames" in field.metadata:
            properties[name]["enumNames"] = list(field.metadata["enumNames"])
    requested: dict[str, t.Any] = {"type": "object", "properties": properties}
    if converted.get("required"):
        requested["required"] = converted["required"]
    return requested


def _without_null(schema: dict[str, t.Any]) -> dict[str, t.Any]:
    """A nullable property's non-null branch, with the annotations (``title``, ``default``, ...) beside it."""
    branch: dict[str, t.Any] = non_null(schema)
    if branch is schema:
        return schema
    outer = {key: value for key, value in schema.items() if key != "anyOf"}
    if outer.get("default", ...) is None:
        del outer["default"]  # no form field holds null
    return {**branch, **outer}
