"""The arguments of ``flask mcp call``: one JSON object, or ``key=value`` pairs typed by the tool's schema.

::

    flask mcp call add '{"a": 1, "b": 2}'
    flask mcp call add a=1 b=2
    flask mcp call search query="red shoes" limit=5 tags='["new"]'

A value is read as its argument's JSON type says: ``integer`` and ``number``
as numbers, ``boolean`` as ``true``/``false``, ``array``, ``object`` and
``null`` as JSON, anything else as the text itself. An argument the schema
does not know is taken as JSON when it parses, else as text, and the tool
decides.
"""

from __future__ import annotations

import json
import typing as t

from ..schemas.json_schema import non_null

__all__ = ["ArgumentError", "parse_arguments"]


class ArgumentError(ValueError):
    """A ``key=value`` pair that cannot be read; the message names it."""


def _kind(schema: t.Mapping[str, t.Any], key: str) -> str | None:
    found = non_null((schema.get("properties") or {}).get(key))  # anyOf [{"type": "integer"}, null]: the integer
    kind = found.get("type") if isinstance(found, dict) else None
    if isinstance(kind, list):  # ["integer", "null"] (a raw schema): the non-null one
        kind = next((k for k in kind if k != "null"), None)
    return kind if isinstance(kind, str) else None


def _value(key: str, text: str, kind: str | None) -> t.Any:
    if kind == "string":
        return text
    try:
        value = json.loads(text)
    except ValueError:
        if kind is None:
            return text
        raise ArgumentError(f"{key}={text}: not a valid {kind}") from None
    expected = {
        "integer": (int,),
        "number": (int, float),
        "boolean": (bool,),
        "array": (list,),
        "object": (dict,),
    }.get(kind or "")
    if expected is not None and (not isinstance(value, expected) or (kind != "boolean" and isinstance(value, bool))):
        raise ArgumentError(f"{key}={text}: not a valid {kind}")
    if kind is None and not isinstance(value, (dict, list, int, float, bool)) and value is not None:
        return text
    return value


def parse_arguments(values: t.Sequence[str], schema: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    """The tool arguments *values* spell: ``[]``, one JSON object, or ``key=value`` pairs.

    :param schema: the tool's ``inputSchema``, whose property types read the values.
    :raises ArgumentError: a value that does not fit its type, a pair without ``=``, or JSON that is not an object.
    """
    if not values:
        return {}
    if len(values) == 1 and values[0].lstrip().startswith(("{", "[")):
        try:
            parsed = json.loads(values[0])
        except ValueError as exc:
            raise ArgumentError(f"not valid JSON: {exc}") from None
        if not isinstance(parsed, dict):
            raise ArgumentError("must be a JSON object")
        return parsed
    arguments: dict[str, t.Any] = {}
    for pair in values:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            raise ArgumentError(f"{pair!r}: give one JSON object, or key=value pairs")
        arguments[key] = _value(key, text, _kind(schema, key))
    return arguments
