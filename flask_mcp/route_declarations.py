"""What a route's view already declares about its arguments: flask-smorest's and APIFlask's schemas.

Read from the attributes the two libraries leave on the view function, so
neither needs to be installed for anything else: flask-smorest's
``@blp.arguments(Schema, location=...)`` and ``@blp.paginate()`` (in
``view._apidoc``), APIFlask's ``@app.input(Schema, location=...)`` (in
``view._spec``). A plain view declares nothing.
"""

from __future__ import annotations

import dataclasses
import typing as t

import marshmallow as ma

__all__ = ["Declared", "declared_arguments"]

#: The locations whose fields become a route tool's arguments, and where they are sent.
QUERY_LOCATIONS = frozenset({"query", "querystring"})
BODY_LOCATIONS = frozenset({"json", "body"})


@dataclasses.dataclass(frozen=True)
class Declared:
    """The schemas of a route's query string and JSON body; ``None`` where nothing is declared."""

    query: tuple[ma.Schema, ...] = ()
    body: ma.Schema | None = None


def _instance(schema: t.Any) -> ma.Schema:
    return t.cast(ma.Schema, schema() if isinstance(schema, type) else schema)


def declared_arguments(view: t.Callable[..., t.Any]) -> Declared:
    """The query and body schemas *view* declares through flask-smorest or APIFlask.

    Other locations (headers, cookies, forms, files) are left out: a route
    tool sends its arguments as the query string or a JSON body only.
    """
    query: list[ma.Schema] = []
    body: ma.Schema | None = None
    apidoc = getattr(view, "_apidoc", None)  # flask-smorest
    if isinstance(apidoc, dict):
        parameters = list(apidoc.get("arguments", {}).get("parameters", ()))
        pagination = apidoc.get("pagination", {}).get("parameters")
        if pagination:
            parameters.append(pagination)
        for parameter in parameters:
            location, schema = parameter.get("in", "json"), parameter.get("schema")
            if schema is None:
                continue
            if location in QUERY_LOCATIONS:
                query.append(_instance(schema))
            elif location in BODY_LOCATIONS:
                body = _instance(schema)
    spec = getattr(view, "_spec", None)  # APIFlask
    if isinstance(spec, dict):
        if spec.get("body") is not None:
            body = _instance(spec["body"])
        for schema, location in spec.get("args", ()):
            if location in QUERY_LOCATIONS:
                query.append(_instance(schema))
            elif location in BODY_LOCATIONS:
                body = _instance(schema)
    return Declared(tuple(query), body)
