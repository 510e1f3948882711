"""Validation messages in marshmallow's shape, from errors that name a path.

marshmallow nests messages by field (``{"item": {"qty": ["..."]}}``) and puts
a message about a whole nested object under ``_schema`` beside its fields.
Validators that report a path per error (pydantic, jsonschema) are worded
the same way through :func:`store_message`, so a client sees one shape
whatever checked the value.
"""

from __future__ import annotations

import typing as t

__all__ = ["store_message"]


def store_message(messages: dict[t.Any, t.Any], path: t.Sequence[t.Any], message: str) -> None:
    """Put *message* at *path* in *messages*, nesting dicts as marshmallow does.

    A message for an object that already holds field messages goes under its
    ``_schema`` key (and the reverse); the same message at the same place is
    kept once. An empty *path* is the whole value (``_schema``).
    """
    node = messages
    for key in path[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = node[key] = {"_schema": child} if child else {}
        node = child
    key = path[-1] if path else "_schema"
    if isinstance(node.get(key), dict):
        node, key = node[key], "_schema"
    if message not in node.setdefault(key, []):
        node[key].append(message)
