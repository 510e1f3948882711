"""A shortcut past marshmallow for the commonest arguments: a flat object of JSON primitives.

Most tools take a few strings, integers, numbers and booleans. For a schema
made only of such fields (no validators, hooks, renamed keys or nesting),
:func:`fast_loader` builds a plain function that checks each value's JSON
type and fills in defaults, returning exactly what ``schema.load`` would. It
answers ``None`` the moment anything is off (a wrong type, a missing
required value), and the caller then asks marshmallow, which words the
errors: the shortcut never decides a failure.
"""

from __future__ import annotations

import typing as t

import marshmallow as ma
from marshmallow import fields

from .hints import JSONBoolean, JSONNumber

__all__ = ["FastLoader", "fast_loader"]

#: Loads valid arguments, or returns ``None`` to leave the decision to marshmallow.
FastLoader = t.Callable[[dict[str, t.Any]], dict[str, t.Any] | None]

_MISSING = ma.missing


#: The exact types of a plain kind's JSON values; ``None``: any ``str`` (:func:`_check_of`).
_Types = tuple[type, ...] | None


def _check_of(field: fields.Field[t.Any]) -> tuple[_Types, t.Callable[[t.Any], t.Any] | None] | None:
    """The value types of *field* and how to convert one (``None``: as it is), if it is one of the plain kinds."""
    kind = type(field)
    if kind is fields.String:
        return None, None
    if kind is fields.Integer and t.cast(fields.Integer, field).strict:
        return (int,), None
    if kind is JSONNumber:
        return (int, float), float
    if kind is JSONBoolean:
        return (bool,), None
    return None


def fast_loader(schema: ma.Schema) -> FastLoader | None:
    """A plain loader for *schema*, or ``None`` when it is not a flat object of primitives."""
    if any(schema._hooks.values()) or schema.many or schema.partial:  # pre/post-load, schema validators
        return None
    if type(schema).load is not ma.Schema.load:  # a schema that validates its own way (a pydantic model)
        return None
    plan: list[tuple[str, _Types, t.Callable[[t.Any], t.Any] | None, bool, bool, t.Any]] = []
    for name, field in schema.load_fields.items():
        check = _check_of(field)
        if check is None or field.validators or (field.data_key not in (None, name)):
            return None
        plan.append((name, *check, field.required, field.allow_none, field.load_default))

    def load(arguments: dict[str, t.Any]) -> dict[str, t.Any] | None:
        loaded: dict[str, t.Any] = {}
        for name, types, convert, required, allow_none, default in plan:
            value = arguments.get(name, _MISSING)
            if value is _MISSING:
                if required:
                    return None
                if default is not _MISSING:
                    loaded[name] = default() if callable(default) else default
            elif value is None:
                if not allow_none:
                    return None
                loaded[name] = None
            elif type(value) not in types if types is not None else not isinstance(value, str):
                return None
            elif convert is None:
                loaded[name] = value
            else:
                try:
                    loaded[name] = convert(value)
                except OverflowError:  # an integer past every float: marshmallow words it
                    return None
        return loaded

    return load
