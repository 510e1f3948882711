"""The app's own routes as MCP tools, called in-process through the app's dispatch.

:func:`expose_routes` makes a tool of each chosen route and method. A call
builds the HTTP request an API client would send (the path from the route's
converters, the query string or JSON body from the other arguments) and has
the app handle it in a request context of its own: its ``before_request``
hooks, its decorators and auth, its error handlers all run as for any HTTP
client, and the route keeps working for them unchanged. The MCP caller's
``Authorization`` and ``Cookie`` headers go with it, nothing else of the MCP
request. A 2xx answer is the tool's result (parsed JSON, or text); any other
status is an error result carrying the view's message.

How arguments map (one ``inputSchema``, no collisions):

* each variable of the URL rule is an argument of its name, typed by its
  converter (``<int:id>`` an integer, ``<uuid:key>`` a UUID, others strings);
* with a schema given at exposure, its fields are the rest of the arguments,
  sent as the query string for ``GET``/``DELETE`` and as the JSON body for
  ``POST``/``PUT``/``PATCH``; a field named like a URL variable is refused;
* without one, ``query`` (an object of strings) and, for the methods with a
  body, ``body`` (any JSON value) carry them as they are.
"""

from __future__ import annotations

import fnmatch
import json
import typing as t

import marshmallow as ma
from flask import Flask, current_app, has_request_context, request
from marshmallow import fields
from werkzeug.test import EnvironBuilder

from .protocol.errors import ToolError

if t.TYPE_CHECKING:
    from werkzeug.routing import Rule

    from .extension import MCP

__all__ = ["BODY_METHODS", "FORWARDED_HEADERS", "dispatch", "expose_routes", "route_arguments"]

#: Methods whose arguments travel as a JSON body; the others' as the query string.
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
#: Request headers of the MCP caller handed on to the route: its credentials.
FORWARDED_HEADERS = ("Authorization", "Cookie")
#: URL converters and the fields their values load with.
_CONVERTER_FIELDS: dict[str, type[fields.Field[t.Any]]] = {
    "IntegerConverter": fields.Integer,
    "FloatConverter": fields.Float,
    "UUIDConverter": fields.UUID,
}


def route_arguments(rule: Rule, method: str, schema: type[ma.Schema] | None = None) -> type[ma.Schema]:
    """The schema of a route tool's arguments: the rule's variables, then *schema*'s fields or ``query``/``body``.

    :raises ValueError: a field of *schema* is named like a variable of the rule.
    """
    declared: dict[str, fields.Field[t.Any]] = {}
    for variable in sorted(rule.arguments):
        converter = type(rule._converters[variable]).__name__  # werkzeug keeps them per rule, by variable
        declared[variable] = _CONVERTER_FIELDS.get(converter, fields.String)(
            required=True, metadata={"description": f"The {variable} part of the URL {rule.rule}."}
        )
    if schema is not None:
        own = schema().fields
        clash = sorted(set(own) & set(declared))
        if clash:
            raise ValueError(
                f"route {rule.endpoint!r}: schema field(s) {', '.join(clash)} clash with its URL variables"
            )
        declared.update({name: field for name, field in own.items() if not field.dump_only})
    else:
        declared["query"] = fields.Dict(
            keys=fields.String(), values=fields.String(), metadata={"description": "Query string parameters."}
        )
        if method in BODY_METHODS:
            declared["body"] = fields.Raw(allow_none=True, metadata={"description": "The JSON body."})
    return ma.Schema.from_dict(declared, name=f"{rule.endpoint}_{method.lower()}_arguments")


def expose_routes(
    mcp: MCP,
    app: Flask,
    endpoints: t.Iterable[str] = ("*",),
    *,
    exclude: t.Iterable[str] = (),
    schemas: t.Mapping[str, type[ma.Schema]] | None = None,
    **options: t.Any,
) -> list[str]:
    """Register *app*'s routes whose endpoint matches *endpoints* (and no *exclude*) as tools of *mcp*.

    Patterns are :mod:`fnmatch` patterns over endpoint names (``"notes.*"`` is
    a blueprint's routes). The extension's own routes and ``static`` are never
    exposed. A route serving several methods gives a tool for each, named
    ``<endpoint>_<method>``; one method, ``<endpoint>`` (dots become ``_``).
    The view's docstring is the description.

    :param schemas: the arguments' schema by endpoint (the query or body fields).
    :param options: further :meth:`~flask_mcp.MCP.tool` options for every tool
        (``permissions``, ``annotations``...).
    :returns: the names of the tools registered.
    """
    patterns, excluded, schemas = tuple(endpoints), tuple(exclude), schemas or {}
    own = {rule.endpoint for rule in app.url_map.iter_rules() if rule.endpoint.startswith(f"{mcp.blueprint.name}.")}
    names: list[str] = []
    for rule in app.url_map.iter_rules():
        endpoint = rule.endpoint
        if endpoint == "static" or endpoint in own:
            continue
        if not any(fnmatch.fnmatchcase(endpoint, p) for p in patterns) or any(
            fnmatch.fnmatchcase(endpoint, p) for p in excluded
        ):
            continue
        methods = sorted((rule.methods or {"GET"}) - {"HEAD", "OPTIONS"})
        view = app.view_functions[endpoint]
        for method in methods:
            name = endpoint.replace(".", "_") + (f"_{method.lower()}" if len(methods) > 1 else "")
            description = (view.__doc__ or f"{method} {rule.rule}").strip()
            call = _route_call(endpoint, method, set(rule.arguments))
            mcp.tool(
                name=name,
                description=description,
                input_schema=route_arguments(rule, method, schemas.get(endpoint)),
                **options,
            )(call)
            names.append(name)
    return names


def _route_call(endpoint: str, method: str, variables: set[str]) -> t.Callable[..., t.Any]:
    def call_route(**arguments: t.Any) -> t.Any:
        path_values = {name: arguments.pop(name) for name in variables}
        query = arguments.pop("query", None) or {}
        body = arguments.pop("body", None)
        if arguments:  # a schema's fields
            if method in BODY_METHODS:
                body = json.loads(json.dumps(arguments, default=str))
            else:
                query = {**query, **{key: str(value) for key, value in arguments.items() if value is not None}}
        return dispatch(current_app._get_current_object(), endpoint, method, path_values, query, body)  # type: ignore[attr-defined]

    call_route.__name__ = f"call_{endpoint.replace('.', '_')}_{method.lower()}"
    return call_route


def dispatch(
    app: Flask,
    endpoint: str,
    method: str,
    path_values: t.Mapping[str, t.Any],
    query: t.Mapping[str, str],
    body: t.Any = None,
) -> t.Any:
    """Have *app* handle the request for *endpoint* in a context of its own; the 2xx answer's value.

    :raises ~flask_mcp.ToolError: any other status, with the view's message.
    """
    outer = has_request_context()
    path = app.url_map.bind("localhost").build(endpoint, dict(path_values), method=method)
    headers = [(name, request.headers[name]) for name in FORWARDED_HEADERS if outer and name in request.headers]
    builder = EnvironBuilder(
        path=path,
        base_url=request.host_url.rstrip("/") + request.script_root if outer else None,
        method=method,
        query_string=dict(query),
        headers=headers,
        json=body if method in BODY_METHODS and body is not None else None,
    )
    try:
        environ = builder.get_environ()
    finally:
        builder.close()
    # A fresh app context too: the route sees its own ``g``, not the MCP request's.
    with app.app_context(), app.request_context(environ):
        response = app.full_dispatch_request()
    payload = _payload(response.get_data(as_text=True), response.mimetype or "")
    if 200 <= response.status_code < 300:
        return payload
    raise ToolError(f"{method} {path} answered {response.status}: {_message(payload)}")


def _payload(text: str, mimetype: str) -> t.Any:
    if mimetype == "application/json" or mimetype.endswith("+json"):
        try:
            return json.loads(text) if text else None
        except ValueError:
            return text
    return text


def _message(payload: t.Any) -> str:
    # What APIs put their message under: flask-smorest's "message", APIFlask's "message", others' "error".
    if isinstance(payload, dict):
        for key in ("message", "error", "description", "detail"):
            if isinstance(payload.get(key), str):
                return t.cast(str, payload[key])
        return json.dumps(payload)
    return str(payload).strip()[:500] or "no body"
