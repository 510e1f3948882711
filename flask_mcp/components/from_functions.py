"""What a component takes from its function besides its arguments: its description, icons, output schema, completions.

Read once, when the component is built (:mod:`flask_mcp.components.build`).
"""

from __future__ import annotations

import dataclasses
import inspect
import typing as t

import marshmallow as ma
from marshmallow import fields, validate

from ..results.content import Content, ToolResult
from ..schemas.hints import pydantic_schema, schema_from_dataclass

if t.TYPE_CHECKING:
    from .model import Completer

__all__ = ["completers_for", "describe", "normalize_icons", "output_schema_from_hints"]


def normalize_icons(icons: t.Sequence[str | t.Mapping[str, t.Any]] | None) -> list[dict[str, t.Any]] | None:
    """Accept icons as ``src`` strings or full ``Icon`` dicts."""
    if not icons:
        return None
    return [{"src": icon} if isinstance(icon, str) else dict(icon) for icon in icons]


def describe(func: t.Callable[..., t.Any], description: str | None) -> str | None:
    """*description* when given, else *func*'s docstring."""
    return description if description is not None else inspect.getdoc(func)


def output_schema_from_hints(func: t.Callable[..., t.Any]) -> ma.Schema | None:
    """A return annotation that is a Schema subclass, a dataclass or a pydantic model names the output schema."""
    try:
        hint = t.get_type_hints(func).get("return")
    except Exception:  # unresolvable forward references: no schema, like no hint
        return None
    if isinstance(hint, type) and issubclass(hint, ma.Schema):
        return hint()
    if isinstance(hint, type) and issubclass(hint, (Content, ToolResult)):
        return None  # a full result object, not structured data
    model = pydantic_schema(hint)
    if model is not None:
        return model
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return schema_from_dataclass(hint)()
    return None


def _choices(schema: ma.Schema) -> dict[str, list[str]]:
    """Completion values implied by ``OneOf`` validators (``Literal``/``Enum`` hints)."""
    found: dict[str, list[str]] = {}
    for name, field in schema.fields.items():
        for validator in field.validators:
            if isinstance(validator, validate.OneOf):
                found[name] = [str(choice) for choice in validator.choices]
        if isinstance(field, fields.Enum):
            found[name] = [str(member.value if field.by_value else member.name) for member in field.enum]
    return found


def completers_for(schema: ma.Schema, explicit: t.Mapping[str, Completer] | None) -> dict[str, Completer]:
    """The completion values of *schema*'s arguments: those its ``OneOf`` and ``Enum`` fields imply, then *explicit*.

    :raises ValueError: *explicit* names an argument *schema* does not have.
    """
    unknown = set(explicit or ()) - set(schema.fields)
    if unknown:
        raise ValueError(f"completions given for unknown argument(s): {', '.join(sorted(unknown))}")
    return {**_choices(schema), **(explicit or {})}
