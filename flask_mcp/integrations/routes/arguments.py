"""A route tool's arguments: one ``inputSchema`` made of the URL rule's variables and the view's declared schemas.

How each maps is told in :mod:`flask_mcp.integrations.routes.expose`; a
name declared twice (URL variable, query or body field) is refused.
"""

from __future__ import annotations

import typing as t

from ...schemas.json_schema import schema_to_json_schema
from .declarations import Declared
from .dispatch import BODY_METHODS
from .url_variables import url_variables_schema

if t.TYPE_CHECKING:
    from werkzeug.routing import Rule

__all__ = ["RouteArguments", "route_arguments"]


class RouteArguments(t.NamedTuple):
    """A route tool's ``inputSchema`` and where each of its arguments is sent."""

    #: The JSON Schema of the arguments.
    schema: dict[str, t.Any]
    #: Names of the URL rule's variables.
    path: frozenset[str]
    #: Names sent as query string parameters (``query`` itself, when free-form, is spread).
    query: frozenset[str]
    #: Names sent as the JSON body's members; ``None`` when the free-form ``body`` argument is the body.
    body: frozenset[str] | None


def route_arguments(
    rule: Rule, method: str, declared: Declared | None = None, *, free_query: bool = False
) -> RouteArguments:
    """The arguments of the tool for *rule* and *method*, given the schemas the view *declared*.

    :param free_query: with no query schema declared, give the tool ``query``,
        an object of strings sent as the query string (for a view that reads
        ``request.args`` itself).
    :raises ValueError: a name is declared twice (URL variable, query or body field).
    """
    declared = declared or Declared()
    properties: dict[str, t.Any] = {}
    required: list[str] = []
    defs: dict[str, t.Any] = {}
    places: dict[str, str] = {}

    def add(name: str, schema: dict[str, t.Any], place: str, is_required: bool) -> None:
        if name in places:
            raise ValueError(
                f"route {rule.endpoint!r}: {name!r} is declared both as a {places[name]} and a {place} argument"
            )
        places[name] = place
        properties[name] = schema
        if is_required:
            required.append(name)

    for variable, prop in schema_to_json_schema(url_variables_schema(rule), "input")["properties"].items():
        add(variable, prop, "path", True)
    for place, schemas in (("query", declared.query), ("body", (declared.body,) if declared.body else ())):
        for declaration in schemas:
            converted = schema_to_json_schema(declaration, "input")
            defs.update(converted.get("$defs", {}))
            for name, prop in converted.get("properties", {}).items():
                add(name, prop, place, name in converted.get("required", ()))
    if free_query and not declared.query:
        add("query", {"type": "object", "additionalProperties": {"type": "string"}}, "query", False)
        properties["query"]["description"] = "Query string parameters."
    free_body = method in BODY_METHODS and declared.body is None
    if free_body:
        add("body", {"description": "The JSON body."}, "body", False)
    # A name declared nowhere would reach no part of the request: refused rather than dropped unseen.
    json_schema: dict[str, t.Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        json_schema["required"] = required
    if defs:
        json_schema["$defs"] = defs
    body = None if free_body else frozenset(n for n, p in places.items() if p == "body")
    return RouteArguments(
        json_schema,
        frozenset(n for n, p in places.items() if p == "path"),
        frozenset(n for n, p in places.items() if p == "query"),
        body,
    )
