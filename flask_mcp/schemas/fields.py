"""marshmallow building blocks for JSON objects as MCP sends them.

MCP objects may carry members a later revision adds, a nested object must be
an object, and some members are an object or a string: these say so once for
every schema that needs it.
"""

from __future__ import annotations

import typing as t

import marshmallow as ma
from marshmallow import fields
from marshmallow.types import ErrorMessages

__all__ = ["DictOrString", "ObjectField", "OpenSchema"]


class OpenSchema(ma.Schema):
    """Keeps undeclared keys: MCP objects may carry members a later revision adds."""

    class Meta:
        unknown = ma.INCLUDE


class ObjectField(fields.Nested):
    """A nested object whose non-object values are refused like a ``Dict`` field's.

    (``Nested`` alone reports them as ``<field>._schema: Invalid input type.``)
    """

    # marshmallow merges these along the MRO, as a class attribute.
    default_error_messages: ErrorMessages = {"type": "Not a valid mapping type."}  # noqa: RUF012

    def _deserialize(
        self,
        value: t.Any,
        attr: str | None,
        data: t.Mapping[str, t.Any] | None,
        partial: bool | t.Sequence[str] | t.AbstractSet[str] | None = None,
        **kwargs: t.Any,
    ) -> t.Any:
        if not isinstance(value, t.Mapping):
            raise self.make_error("type")
        return super()._deserialize(value, attr, data, partial, **kwargs)


class DictOrString(fields.Field):  # type: ignore[type-arg]
    """An object or a string, passed through as is."""

    # marshmallow merges these along the MRO, as a class attribute.
    default_error_messages: ErrorMessages = {"invalid": "Not a valid mapping type or string."}  # noqa: RUF012

    def _deserialize(self, value: t.Any, attr: str | None, data: t.Any, **kwargs: t.Any) -> t.Any:
        if not isinstance(value, (dict, str)):
            raise self.make_error("invalid")
        return value
