"""What a route's view already declares about its arguments: flask-smorest's and APIFlask's schemas.

Read from the attributes the two libraries leave on the view function, so
neither needs to be installed for anything else: flask-smorest's
``@blp.arguments(Schema, location=...)`` and ``@blp.paginate()`` (in
``view._apidoc``), APIFlask's ``@app.input(Schema, location=...)`` (in
``view._spec``), and the schema of their success response
(``@blp.response(200, Schema)``, ``@app.output(Schema)``). A plain view
declares nothing.
"""

from __future__ import annotations

import dataclasses
import typing as t

import marshmallow as ma

from ...schemas.json_schema import schema_to_json_schema

__all__ = ["Declared", "RouteOutput", "declared_arguments", "declared_response"]

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


def declared_response(view: t.Callable[..., t.Any]) -> ma.Schema | None:
    """The schema of *view*'s success response when it is one object (not ``many``); ``None`` otherwise."""
    schema: t.Any = None
    apidoc = getattr(view, "_apidoc", None)  # flask-smorest: responses by status, the first 2xx one
    if isinstance(apidoc, dict):
        responses = apidoc.get("response", {}).get("responses", {})
        for status in sorted((code for code in responses if str(code).startswith("2")), key=str):
            entries = responses[status]
            entry = entries[0] if isinstance(entries, list) and entries else entries
            schema = entry.get("schema") if isinstance(entry, dict) else None
            break
    spec = getattr(view, "_spec", None)  # APIFlask
    if isinstance(spec, dict) and isinstance(spec.get("response"), dict):
        schema = spec["response"].get("schema", schema)
    if schema is None:
        return None
    instance = _instance(schema)
    return None if instance.many or not instance.fields else instance


class RouteOutput(ma.Schema):
    """A route's response schema as its tool's output schema.

    The route has already dumped its answer through that schema, so the
    answer's JSON is the value as it is (dumping it again would misread
    dates and the like); the schema's JSON Schema is the ``outputSchema``
    the answer is checked against.
    """

    def __init__(self, response: ma.Schema) -> None:
        super().__init__()
        self.response = response

    def dump(self, obj: t.Any, *, many: bool | None = None) -> t.Any:
        """*obj*, the JSON the route answered."""
        return obj

    def json_schema_for(self, direction: t.Literal["input", "output"]) -> dict[str, t.Any]:
        """The response schema's JSON Schema."""
        return schema_to_json_schema(self.response, direction)
