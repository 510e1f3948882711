"""A URL rule's variables as tool arguments: one marshmallow field each, typed by its converter.

The same fields type the URL variables of a tool made by
:func:`~flask_mcp.routes.expose_routes` and of a tool stacked on a route
(:mod:`flask_mcp.integrations.routes.view_arguments`):

=================================== =====================================================
converter                           argument
=================================== =====================================================
``int`` (``signed``, ``min``,       an integer, at least 0 unless ``signed``, within
``max``)                            ``min`` and ``max``
``float``                           a number, likewise
``uuid``                            a string of format ``uuid``
``any(a, b)``                       one of the strings ``a``, ``b``
``string``, ``path``, any other     a string
=================================== =====================================================

What the field admits is what the converter reads back from the URL, so a
value the route could not take is an invalid argument before anything runs.
"""

from __future__ import annotations

import typing as t

import marshmallow as ma
from marshmallow import fields, validate
from werkzeug.routing import AnyConverter, FloatConverter, IntegerConverter, UUIDConverter

if t.TYPE_CHECKING:
    from werkzeug.routing import BaseConverter, Rule

__all__ = ["url_variable_field", "url_variables_schema"]


def _range(converter: IntegerConverter | FloatConverter) -> list[validate.Validator]:
    # Unsigned converters match no '-': their values start at 0.
    lowest = converter.min if converter.min is not None else (None if converter.signed else 0)
    if lowest is None and converter.max is None:
        return []
    return [validate.Range(min=lowest, max=converter.max)]


def url_variable_field(converter: BaseConverter, description: str) -> fields.Field[t.Any]:
    """The required argument a variable read by *converter* is (see the module's table)."""
    metadata = {"description": description}
    if isinstance(converter, IntegerConverter):
        return fields.Integer(required=True, strict=True, validate=_range(converter), metadata=metadata)
    if isinstance(converter, FloatConverter):
        return fields.Float(required=True, validate=_range(converter), metadata=metadata)
    if isinstance(converter, UUIDConverter):
        return fields.UUID(required=True, metadata=metadata)
    if isinstance(converter, AnyConverter):
        return fields.String(required=True, validate=validate.OneOf(sorted(converter.items)), metadata=metadata)
    return fields.String(required=True, metadata=metadata)


def url_variables_schema(rule: Rule) -> ma.Schema:
    """A schema of *rule*'s variables, by name (sorted), each typed by its converter."""
    declared = {
        variable: url_variable_field(
            rule._converters[variable],  # werkzeug keeps them per rule, by variable
            f"The {variable} part of the URL {rule.rule}.",
        )
        for variable in sorted(rule.arguments)
    }
    return ma.Schema.from_dict(declared, name="URLVariables")()
