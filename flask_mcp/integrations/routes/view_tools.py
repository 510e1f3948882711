"""Tools whose function is also a view of the app: the route a call runs, and what it hands the route.

``@mcp.tool`` stacked above or below ``@app.route`` makes a tool that runs
its route (:func:`route_for`); every function that calls a route, a view
tool's or one made by :func:`~flask_mcp.routes.expose_routes`,
is keyed by the caller's credentials when its results are cached
(:func:`route_caller_digest`).
"""

from __future__ import annotations

import json
import typing as t
import weakref

from flask import Flask, current_app, has_app_context

from .dispatch import BODY_METHODS, dispatch, forwarded_digest

if t.TYPE_CHECKING:
    from werkzeug.routing import Rule

__all__ = [
    "ViewRoute",
    "calls_a_route",
    "query_pairs",
    "remember_route_call",
    "route_caller_digest",
    "route_for",
    "route_of",
    "routes_settled",
]

#: The functions that call a route (a tool's own, or the one found for a view that is a tool).
_route_calls: weakref.WeakSet[t.Callable[..., t.Any]] = weakref.WeakSet()


def route_caller_digest(func: t.Callable[..., t.Any]) -> str | None:
    """For a function that calls a route: a digest of what the current request hands the route; else ``None``.

    The protocol core keys cached results by it (``Server.caller_digest``,
    :mod:`flask_mcp.core.result_cache`): a route's answer may depend on the
    caller's credentials and address, which the tool's arguments do not hold
    (:func:`~flask_mcp.integrations.routes.dispatch.forwarded_digest`).
    """
    if func not in _route_calls or not has_app_context():
        return None
    return forwarded_digest(current_app._get_current_object())  # type: ignore[attr-defined]


def remember_route_call(func: t.Callable[..., t.Any]) -> None:
    """Note *func* as a function that calls a route (:func:`route_caller_digest` then digests its caller)."""
    _route_calls.add(func)


def calls_a_route(func: t.Callable[..., t.Any]) -> bool:
    """Whether *func* is one that calls a route (:func:`remember_route_call`): made to, never a view itself."""
    return func in _route_calls


class ViewRoute(t.NamedTuple):
    """The route a function serves as a view: its endpoint, URL variables, the method a tool call uses, its rule."""

    endpoint: str
    variables: frozenset[str]
    method: str
    #: The URL rule a tool call is built from and must lead back to.
    rule: Rule


#: Per app: how many URL rules the table was built for (:data:`_SETTLED` once no more can come), and function -> route.
_view_routes: weakref.WeakKeyDictionary[Flask, tuple[int, dict[t.Callable[..., t.Any], ViewRoute]]] = (
    weakref.WeakKeyDictionary()
)
#: The table of an app that has served a request: Flask refuses new routes from then on, so it is final.
_SETTLED = -1


def route_of(app: Flask, func: t.Callable[..., t.Any]) -> ViewRoute | None:
    """The route *func* serves on *app* (as its view, or wrapped by the view's decorators); ``None`` if none.

    A route serving ``GET`` is called with ``GET``, else with the first of
    its methods. The table is built once per app and again whenever the app
    gains routes, so ``@mcp.tool`` stacked above or below ``@app.route`` is
    found either way. Once the app has served a request it can gain no more
    (Flask refuses setup after the first request), and the table is looked
    up without counting the rules again: every ``tools/call`` asks.
    """
    known = _view_routes.get(app)
    if known is not None and known[0] == _SETTLED:
        return known[1].get(func)
    size = len(app.url_map._rules)  # werkzeug's list of rules: grows with every route added
    if known is None or known[0] != size:
        table: dict[t.Callable[..., t.Any], ViewRoute] = {}
        for rule in app.url_map.iter_rules():
            view = app.view_functions.get(rule.endpoint)
            served = (rule.methods or {"GET"}) - {"HEAD", "OPTIONS"}
            if view is None or not served:
                continue
            route = ViewRoute(rule.endpoint, frozenset(rule.arguments), "GET" if "GET" in served else min(served), rule)
            # The view and each function its decorators wrapped (functools.wraps' __wrapped__).
            while view is not None and view not in table:
                table[view] = route
                view = getattr(view, "__wrapped__", None)
        known = (size, table)
    if routes_settled(app):
        known = (_SETTLED, known[1])
    _view_routes[app] = known
    return known[1].get(func)


def routes_settled(app: Flask) -> bool:
    """Whether *app* can gain no more routes: it has served a request (Flask refuses setup from then on)."""
    return bool(getattr(app, "_got_first_request", False))


def route_for(func: t.Callable[..., t.Any]) -> t.Callable[..., t.Any] | None:
    """What runs a tool whose function is also a view of the current app: its route; ``None`` for other tools.

    The protocol core asks this for every call (``Server.route_for``): the
    route takes all of the tool's validated arguments, the URL variables by
    name and the rest as the query string (``GET``/``DELETE``) or JSON body.
    """
    if not has_app_context():
        return None
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    route = route_of(app, func)
    if route is None:
        return None

    def call_route(**arguments: t.Any) -> t.Any:
        path = {name: value for name, value in arguments.items() if name in route.variables}
        rest = {name: value for name, value in arguments.items() if name not in route.variables}
        if route.method in BODY_METHODS:
            body = json.loads(json.dumps(rest, default=str)) if rest else None
            return dispatch(app, route.rule, route.method, path, (), body)
        query = [pair for name, value in rest.items() if value is not None for pair in query_pairs(name, value)]
        return dispatch(app, route.rule, route.method, path, query)

    remember_route_call(call_route)
    return call_route


def query_pairs(name: str, value: t.Any) -> list[tuple[str, str]]:
    """The query string pairs of the argument *name*."""
    # Lists repeat the parameter (webargs' and werkzeug's reading); JSON spells booleans.
    values = value if isinstance(value, list) else [value]
    return [(name, json.dumps(item) if isinstance(item, bool) else str(item)) for item in values]
