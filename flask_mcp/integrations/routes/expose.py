"""The app's own routes as MCP tools, called in-process through the app's dispatch.

:func:`expose_routes` makes a tool of each chosen route and method. A call
builds the HTTP request an API client would send (the path from the route's
converters, the query string or JSON body from the other arguments) and has
the app handle it in a request context of its own: its ``before_request``
hooks, its decorators and auth, its error handlers all run as for any HTTP
client, and the route keeps working for them unchanged. The MCP caller's
``Authorization`` and ``Cookie`` headers and its address go with it, nothing
else of the MCP request. A 2xx answer is the tool's result (parsed JSON, or
text); any other status is an error result carrying the view's message.

A tool runs the one rule it was made from and nothing else: the URL is built
from that rule, and a value that would make it another route's URL (a ``/``
in a one-segment variable, ``..``, ``?``...) is refused before anything runs
(:mod:`flask_mcp.integrations.routes.dispatch`).

How arguments map (one ``inputSchema``, no name used twice):

* each variable of the URL rule is an argument of its name, typed by its
  converter (``<int:id>`` an integer, ``<uuid:key>`` a UUID, others strings);
* the fields of the query and body schemas the view declares (flask-smorest's
  ``@blp.arguments``/``@blp.paginate``, APIFlask's ``@app.input``: see
  :mod:`flask_mcp.integrations.routes.declarations`), or of a schema given at exposure
  (the query's for ``GET``/``DELETE``, the body's otherwise), by their wire
  names; a name declared twice is refused when the route is exposed;
* with no body schema, for ``POST``/``PUT``/``PATCH``, ``body`` (any JSON
  value) carries the body as it is; with no query schema, and only when asked
  (``query=True``, for every route or one view's :func:`route_tool`),
  ``query`` (an object of strings) carries the query string as it is: whether
  a plain view reads ``request.args`` cannot be told from outside, and most
  do not.

The arguments are checked against that JSON Schema and sent as they came:
the route's own schemas load them, as they would an HTTP client's.
"""

from __future__ import annotations

import fnmatch
import json
import typing as t
import weakref

import marshmallow as ma
from flask import Flask, current_app

from ...core.result_cache import public_refused
from ...globals import servers_of
from ...protocol.errors import ToolError
from ...schemas.json_schema import schema_to_json_schema
from .arguments import RouteArguments, route_arguments
from .declarations import Declared, RouteOutput, declared_arguments, declared_response
from .dispatch import BODY_METHODS, dispatch
from .view_tools import query_pairs, remember_route_call

if t.TYPE_CHECKING:
    from werkzeug.routing import Rule

    from ...extension import MCP

__all__ = ["EXPOSED_KEY", "ROUTE_TOOL_ATTRIBUTE", "expose_routes", "route_tool"]

V = t.TypeVar("V", bound=t.Callable[..., t.Any])
#: The attribute :func:`route_tool` leaves on a view: the options of its tool.
ROUTE_TOOL_ATTRIBUTE = "_flask_mcp_route_tool"


def route_tool(
    *, name: str | None = None, description: str | None = None, query: bool | None = None, **options: t.Any
) -> t.Callable[[V], V]:
    """Mark a view as a tool for :func:`expose_routes` (``marked=True`` picks the marked ones), with its own options.

    Put it above or below ``@app.route``; *name*, *description*, *query* and
    the other :meth:`~flask_mcp.MCP.tool` options replace what the tool would
    otherwise get (its endpoint, its docstring, the options given to
    :func:`expose_routes`). A route serving several methods gives a tool for
    each, named ``<name>_<method>``.

    :param query: give the tool ``query``, the free-form query string, when
        the view declares no query schema (it reads ``request.args`` itself);
        ``None`` follows :func:`expose_routes`' *query*.
    """

    def mark(view: V) -> V:
        setattr(view, ROUTE_TOOL_ATTRIBUTE, {"name": name, "description": description, "query": query, **options})
        return view

    return mark


def _route_tool_options(view: t.Callable[..., t.Any]) -> dict[str, t.Any] | None:
    # The mark, on the view or on a function its decorators wrapped.
    while view is not None:
        found = getattr(view, ROUTE_TOOL_ATTRIBUTE, None)
        if found is not None:
            return t.cast(dict[str, t.Any], found)
        view = getattr(view, "__wrapped__", None)  # type: ignore[assignment]
    return None


def expose_routes(
    mcp: MCP,
    app: Flask,
    endpoints: t.Iterable[str] | None = None,
    *,
    rules: t.Iterable[str] = (),
    marked: bool = False,
    exclude: t.Iterable[str] = (),
    schemas: t.Mapping[str, type[ma.Schema] | ma.Schema] | None = None,
    names: t.Mapping[str, str] | None = None,
    descriptions: t.Mapping[str, str] | None = None,
    query: bool = False,
    **options: t.Any,
) -> list[str]:
    """Register *app*'s chosen routes as tools of *mcp*; by default every route.

    A route is chosen when its endpoint matches one of *endpoints*
    (:mod:`fnmatch` patterns: ``"notes.*"`` is a blueprint's routes), its URL
    rule one of *rules* (``"/api/*"``), or, with *marked*, its view carries
    :func:`route_tool`; and its endpoint matches no *exclude* pattern. With
    none of the three, every route is. The extension's own routes and
    ``static`` are never exposed. A route serving several methods gives a
    tool for each, named ``<endpoint>_<method>``; one method, ``<endpoint>``
    (dots become ``_``). The view's docstring is the description.

    :param schemas: by endpoint, the schema of the arguments a plain view
        reads (the query string's for ``GET``/``DELETE``, the body's
        otherwise), in place of what the view declares.
    :param names: by endpoint, the tool's name in place of the endpoint's.
    :param descriptions: by endpoint, the tool's description in place of the docstring.
    :param query: give each tool whose view declares no query schema ``query``,
        an object of strings sent as the query string, for views that read
        ``request.args`` themselves (:func:`route_tool` decides it per view).
    :param options: further :meth:`~flask_mcp.MCP.tool` options for every tool
        (``permissions``, ``annotations``...).
    :returns: the names of the tools registered.
    :raises ValueError: nothing matches, a route declares a name twice, or a
        tool would keep results for every caller (``cache=`` with
        ``cache_scope="public"``): the route is handed each caller's
        credentials, so its answers may differ by caller.
    """
    rule_patterns, excluded = tuple(rules), tuple(exclude)
    patterns = tuple(endpoints) if endpoints is not None else (() if rule_patterns or marked else ("*",))
    schemas, names, descriptions = schemas or {}, names or {}, descriptions or {}
    # Every MCP server's own routes (endpoint, REST, metadata), by the blueprint they were registered under.
    own = set(servers_of(app).by_blueprint) | {mcp.blueprint.name}
    # Every tool is checked before any is registered: a refusal leaves the server as it was.
    tools: list[tuple[dict[str, t.Any], t.Callable[..., t.Any]]] = []
    for rule in app.url_map.iter_rules():
        endpoint = rule.endpoint
        if endpoint == "static" or endpoint.rpartition(".")[0] in own:
            continue
        view = app.view_functions[endpoint]
        mark = _route_tool_options(view)
        chosen = (
            any(fnmatch.fnmatchcase(endpoint, p) for p in patterns)
            or any(fnmatch.fnmatchcase(rule.rule, p) for p in rule_patterns)
            or (marked and mark is not None)
        )
        if not chosen or any(fnmatch.fnmatchcase(endpoint, p) for p in excluded):
            continue
        mark = mark or {}
        methods = sorted((rule.methods or {"GET"}) - {"HEAD", "OPTIONS"})
        base = mark.get("name") or names.get(endpoint) or endpoint.replace(".", "_")
        for method in methods:
            declared = declared_arguments(view)
            given = schemas.get(endpoint)
            if given is not None:
                instance = given() if isinstance(given, type) else given
                declared = Declared(declared.query, instance) if method in BODY_METHODS else Declared((instance,))
            free_query = query if mark.get("query") is None else bool(mark["query"])
            arguments = route_arguments(rule, method, declared, free_query=free_query)
            name = base + (f"_{method.lower()}" if len(methods) > 1 else "")
            description = mark.get("description") or descriptions.get(endpoint) or view.__doc__
            response = declared_response(view)
            tool_options = {
                "name": name,
                "description": (description or f"{method} {rule.rule}").strip(),
                "input_schema": arguments.schema,
                **({"output_schema": RouteOutput(response)} if response is not None else {}),
                **options,
                **{key: value for key, value in mark.items() if key not in ("name", "description", "query")},
            }
            if tool_options.get("cache") is not None and tool_options.get("cache_scope") == "public":
                raise ValueError(public_refused(f"route tool {name!r}"))
            tools.append((tool_options, _route_call(rule, method, arguments, _comparable(tool_options))))
    if not tools:
        wanted = [*patterns, *rule_patterns] + (["views marked with route_tool"] if marked else [])
        raise ValueError(f"no route of the app matches {', '.join(wanted)}")
    # An app factory exposes the same routes again for each app it makes: the tool registered for
    # the first app serves them, each app running its own rule. Anything else with the name is refused.
    registered = mcp.registry.registered("tools")
    fresh: list[tuple[dict[str, t.Any], t.Callable[..., t.Any]]] = []
    served: list[tuple[t.Callable[..., t.Any], Rule]] = []
    for tool_options, call in tools:
        existing = registered.get(tool_options["name"])
        if existing is None:
            fresh.append((tool_options, call))
            served.append((call, _route_calls_made[call].rule))
        elif _route_calls_made[call].same_tool(_route_calls_made.get(existing.func)):
            served.append((existing.func, _route_calls_made[call].rule))
        else:
            raise ValueError(_taken(tool_options["name"], existing.func, _route_calls_made[call]))
    for tool_options, call in fresh:
        mcp.tool(**tool_options)(call)
    exposed = _exposed_on(app)
    for call, rule in served:
        exposed[call] = rule
    return [tool_options["name"] for tool_options, _ in tools]


#: Where an app keeps the rule each route tool runs on it (``app.extensions``).
EXPOSED_KEY = "flask_mcp.routes"


def _exposed_on(app: Flask) -> dict[t.Callable[..., t.Any], Rule]:
    return t.cast("dict[t.Callable[..., t.Any], Rule]", app.extensions.setdefault(EXPOSED_KEY, {}))


class _RouteCallMade(t.NamedTuple):
    """What a route tool was made of: its route, method and options, and the rule of the app it was made for."""

    endpoint: str
    method: str
    rule_text: str
    #: The tool's options as compared: plain values as JSON, anything else by its qualified name.
    options: str
    rule: Rule

    def same_tool(self, other: _RouteCallMade | None) -> bool:
        """Whether *other* was made of the same route, method and options (of whichever app)."""
        return other is not None and self[:4] == other[:4]


def _comparable(options: t.Mapping[str, t.Any]) -> str:
    def name_of(value: t.Any) -> t.Any:
        if isinstance(value, RouteOutput):
            return value.json_schema_for("output")
        if isinstance(value, ma.Schema):
            return schema_to_json_schema(value, "input")
        if isinstance(value, (set, frozenset, tuple)):
            return sorted(map(repr, value))
        return getattr(value, "__qualname__", type(value).__qualname__)

    return json.dumps(options, sort_keys=True, default=name_of)


def _taken(name: str, func: t.Callable[..., t.Any], wanted: _RouteCallMade) -> str:
    made = _route_calls_made.get(func)
    if made is None:
        return f"tool {name!r} is already registered (by {func.__qualname__})"
    if made[:3] != wanted[:3]:
        return (
            f"tool {name!r} is already registered for the route {made.method} {made.rule_text} "
            f"({made.endpoint}) of another app, not {wanted.method} {wanted.rule_text}; give one a name of its own"
        )
    return (
        f"tool {name!r} is already registered for the route {made.method} {made.rule_text} of another app "
        "with other options or schemas; an app factory must expose its routes alike for every app "
        "(or use one MCP per app)"
    )


#: What each function made by :func:`expose_routes` calls (the rule of the app it was made for).
_route_calls_made: weakref.WeakKeyDictionary[t.Callable[..., t.Any], _RouteCallMade] = weakref.WeakKeyDictionary()


def _route_call(rule: Rule, method: str, arguments: RouteArguments, options: str) -> t.Callable[..., t.Any]:
    endpoint = rule.endpoint

    def call_route(**values: t.Any) -> t.Any:
        app = current_app._get_current_object()  # type: ignore[attr-defined]
        # The rule of the app serving the call: each app of a factory exposed its own.
        own_rule = _exposed_on(app).get(call_route)
        if own_rule is None:
            raise ToolError(f"this app does not expose the route {method} {rule.rule} ({endpoint}) as a tool")
        path = {name: values[name] for name in arguments.path if name in values}
        query: list[tuple[str, str]] = []
        for name in arguments.query:
            if name == "query" and isinstance(values.get(name), dict):
                query += [(key, str(value)) for key, value in values[name].items()]
            elif values.get(name) is not None:
                query += query_pairs(name, values[name])
        if arguments.body is None:
            body = values.get("body")
        else:
            body = {name: values[name] for name in arguments.body if name in values} if arguments.body else None
        return dispatch(app, own_rule, method, path, query, body)

    call_route.__name__ = f"call_{endpoint.replace('.', '_')}_{method.lower()}"
    remember_route_call(call_route)
    _route_calls_made[call_route] = _RouteCallMade(endpoint, method, rule.rule, options, rule)
    return call_route
