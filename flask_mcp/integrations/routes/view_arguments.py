"""A tool stacked on a route: its URL's variables are arguments, typed by their converters.

.. code-block:: python

    @app.post("/orders/<int:customer>")
    @mcp.tool(input_schema=OrderIn)
    def create_order(customer):
        ...

The tool's ``inputSchema`` is ``customer`` (an integer, typed by the
converter: :mod:`flask_mcp.integrations.routes.url_variables`) and the
fields of ``OrderIn``; a call sends ``customer`` in the path and the rest
as the JSON body (:func:`~flask_mcp.integrations.routes.view_tools.route_for`).

Which route the function is the view of is known only once the app's routes
are: the tool decorator may run before ``@app.post``, a blueprint's routes
join an app when it is registered, and with a module-level ``MCP`` the app
comes later still. So the tool's schema is completed late, once, and kept
for every app (:meth:`~flask_mcp.components.model.Tool.complete`): when an
app is set up (:func:`complete_view_tools`, from ``init_app``), and else on
the first listing or call in an app context (:func:`complete_in_current_app`).

Without ``input_schema=`` the schema comes from the type hints, and a
parameter that is a URL variable takes the converter's field (an
``<int:book_id>`` is an integer of at least 0, described as the URL's part)
rather than its hint's: one route, one schema, however the tool was made.

A URL variable the input schema declares too is refused (the URL supplies
it; which of the two types would hold is anybody's guess), and so is a
required parameter of the function that neither supplies. ``init_app``
raises for it when the function is the view of one of the app's routes, or
of no route at all (:func:`check_unsupplied`); a function that a blueprint
registered after ``init_app`` routes is checked at the app's first request
(:func:`settle_view_tools`), where it is logged, and every call of the tool
answers it.
"""

from __future__ import annotations

import gc
import logging
import types
import typing as t

import marshmallow as ma
from flask import Flask, current_app, has_app_context
from marshmallow import fields

from ...components.binding import RESERVED_NAMES
from ...components.signature_checks import unsupplied_message
from ...schemas.hints import schema_from_signature
from ...schemas.json_schema import schema_to_json_schema, validate_json_schema
from .url_variables import url_variables_schema
from .view_tools import calls_a_route, route_of

if t.TYPE_CHECKING:
    from werkzeug.routing import Rule

    from ...components.model import Tool

__all__ = [
    "ViewArguments",
    "check_unsupplied",
    "complete_in_current_app",
    "complete_view_tools",
    "settle_view_tools",
    "view_arguments",
]

logger = logging.getLogger("flask_mcp")


def _wire_names(schema: ma.Schema | dict[str, t.Any]) -> set[str]:
    if isinstance(schema, dict):
        return set(schema.get("properties") or ())
    return {field.data_key or key for key, field in schema.load_fields.items()}


class ViewArguments(ma.Schema):
    """The arguments of a tool whose function is a view: the URL's variables, and the tool's own schema for the rest.

    Each part loads its own names: the variables by their converters'
    fields, the rest by the tool's schema as given (its hooks and
    validators see only its own fields, as they would without the route).
    """

    def __init__(self, variables: ma.Schema, rest: ma.Schema | dict[str, t.Any]) -> None:
        if isinstance(rest, ma.Schema):
            unknown = rest.unknown
        else:
            unknown = ma.RAISE if rest.get("additionalProperties") is False else ma.INCLUDE
        super().__init__(unknown=unknown)
        self.variables = variables
        self.rest = rest
        if isinstance(rest, ma.Schema):
            rest_fields, rest_load_fields = dict(rest.fields), dict(rest.load_fields)
        else:
            rest_fields = rest_load_fields = {name: fields.Raw() for name in rest.get("properties") or ()}
        # What introspection reads (the declared names, the REST page's document): both parts.
        self.fields = {**variables.fields, **rest_fields}
        self.load_fields = {**variables.load_fields, **rest_load_fields}
        self.dump_fields = {}

    def load(  # type: ignore[override]
        self,
        data: t.Mapping[str, t.Any],
        *,
        many: bool | None = None,
        partial: bool | t.Sequence[str] | t.AbstractSet[str] | None = None,
        unknown: t.Literal["exclude", "include", "raise"] | None = None,
    ) -> t.Any:
        """Load the URL variables and the rest of *data*, each by its part.

        :raises marshmallow.ValidationError: naming the offending fields of both parts.
        """
        if not isinstance(data, t.Mapping):
            raise ma.ValidationError({"_schema": ["Invalid input type."]})
        names = self.variables.fields.keys()
        errors: dict[str, t.Any] = {}
        path: dict[str, t.Any] = {}
        try:
            path = self.variables.load({name: data[name] for name in names if name in data})
        except ma.ValidationError as exc:
            errors.update(t.cast(dict[str, t.Any], exc.messages))
        rest_data = {name: value for name, value in data.items() if name not in names}
        loaded: t.Any = {}
        try:
            if isinstance(self.rest, dict):
                if (unknown or self.unknown) == ma.EXCLUDE:
                    declared = _wire_names(self.rest)
                    rest_data = {name: value for name, value in rest_data.items() if name in declared}
                loaded = validate_json_schema(self.rest, rest_data)
            else:
                loaded = self.rest.load(rest_data, partial=partial, unknown=unknown)
        except ma.ValidationError as exc:
            messages = exc.messages
            errors.update(messages if isinstance(messages, dict) else {"_schema": messages})
        if errors:
            raise ma.ValidationError(errors)
        # A schema that loads to an object of its own (post_load) keeps it: the route needs a mapping.
        return {**path, **loaded} if isinstance(loaded, t.Mapping) else loaded

    def json_schema_for(self, direction: t.Literal["input", "output"]) -> dict[str, t.Any]:
        """One object: the URL variables first, then the rest's properties; the rest's other keywords kept."""
        path = schema_to_json_schema(self.variables, direction)
        rest = dict(self.rest) if isinstance(self.rest, dict) else schema_to_json_schema(self.rest, direction)
        merged: dict[str, t.Any] = {
            **rest,
            "type": "object",
            "properties": {**path["properties"], **(rest.get("properties") or {})},
        }
        required = [*path.get("required", ()), *rest.get("required", ())]
        if required:
            merged["required"] = required
        return merged


def view_arguments(tool: Tool, rule: Rule, *, hinted: bool = False) -> ViewArguments | ma.Schema | dict[str, t.Any]:
    """*tool*'s input schema completed by *rule*'s variables, for a function that is *rule*'s view.

    :param hinted: the schema was made from the function's type hints: its
        parameters that are URL variables give way to the converters' fields.
    :raises ValueError: a variable the input schema declares too, or one
        with a reserved name; or a required parameter neither supplies.
    """
    given = tool.input_schema
    variables = url_variables_schema(rule)
    names = set(variables.fields)
    where = f"the URL {rule.rule} ({rule.endpoint})"
    reserved = sorted(names & RESERVED_NAMES)
    if reserved:
        raise ValueError(
            f"tool {tool.name!r}: the variable {reserved[0]!r} of {where} has a name the server fills "
            f"({', '.join(sorted(RESERVED_NAMES))}) and cannot be an argument; rename the URL variable"
        )
    if hinted and names:
        given = schema_from_signature(tool.func, name=f"{tool.name}_arguments", exclude=RESERVED_NAMES | names)()
    both = sorted(names & _wire_names(given))
    if both:
        listed = ", ".join(map(repr, both))
        raise ValueError(
            f"tool {tool.name!r}: {listed} is both a variable of {where} and an argument of the input schema; "
            "the URL supplies it, typed by its converter: take it out of the input schema"
        )
    missing = tool.unsupplied - names
    if missing:
        raise ValueError(unsupplied_message(tool.name, missing, f"neither the input schema nor {where} has it"))
    if not names:
        return given
    # A class of the tool's own: the REST page's document keys its schemas by class.
    arguments: type[ViewArguments] = type(f"{tool.name}_arguments", (ViewArguments,), {"__module__": __name__})
    return arguments(variables, given)


def _completed_by(app: Flask, tool: Tool) -> ViewArguments | ma.Schema | dict[str, t.Any] | None:
    route = route_of(app, tool.func)
    return None if route is None else view_arguments(tool, route.rule, hinted=tool.typed_by_hints)


def complete_in_current_app(tool: Tool) -> ViewArguments | ma.Schema | dict[str, t.Any] | None:
    """The :attr:`~flask_mcp.components.model.Tool.completion` of a tool given ``input_schema=``.

    ``None`` (not known yet) outside an app context, or while the current
    app routes nothing to the function.

    :raises ValueError: the route found refuses the schema (:func:`view_arguments`); logged.
    """
    if calls_a_route(tool.func):
        return tool.input_schema  # a tool made by expose_routes: its schema has the URL's variables already
    if not has_app_context():
        return None
    try:
        return _completed_by(current_app._get_current_object(), tool)  # type: ignore[attr-defined]
    except ValueError as exc:
        logger.error("%s; every call of the tool answers this", exc)
        raise


def complete_view_tools(app: Flask, tools: t.Iterable[Tool]) -> None:
    """Complete now the tools whose function is already a view of *app* (the routes it has when set up).

    A tool given ``input_schema=`` takes the URL's variables beside it; one typed by its hints
    takes the converters' fields for its parameters that are URL variables.

    :raises ValueError: a route that refuses its tool's schema (:func:`view_arguments`).
    """
    for tool in tools:
        if (tool.completion is None and not tool.typed_by_hints) or calls_a_route(tool.func):
            continue
        completed = _completed_by(app, tool)
        if completed is not None:
            tool.complete_with(completed)


def settle_view_tools(app: Flask, tools: t.Iterable[Tool]) -> None:
    """At *app*'s first request, when it can gain no more routes: complete every tool stacked on one.

    What cannot be called is logged now, not at its first call: a route that refuses its tool (every
    call answers it), and a required parameter nothing supplies because no route calls the function.
    """
    for tool in tools:
        try:
            complete_view_tools(app, [tool])
        except ValueError as exc:
            logger.error("%s; every call of the tool answers this", exc)
            tool.refuse(str(exc))
            continue
        if tool.completion is not None and tool.unsupplied and not calls_a_route(tool.func):
            logger.error("%s; every call of the tool answers this", unsupplied_message(tool.name, tool.unsupplied))


def check_unsupplied(app: Flask, tools: t.Iterable[Tool]) -> None:
    """Refuse, when *app* is set up, a tool whose required parameter nothing can supply.

    A function that is not (yet) a view of *app* may be the view of a route
    a blueprint registered later adds: that is left to the first request
    (:func:`settle_view_tools`). Any other function will never be handed
    the parameter.

    :raises ValueError: naming the tool, the parameter and the fixes.
    """
    for tool in tools:
        if not tool.unsupplied or tool.completion is None or route_of(app, tool.func) is not None:
            continue
        if not _routed_by_a_blueprint(tool.func):
            why = (
                "the input schema does not declare it, and the function is the view of no route of the app "
                "(a route added after init_app is not known here: add it before)"
            )
            raise ValueError(unsupplied_message(tool.name, tool.unsupplied, why))


def _routed_by_a_blueprint(func: t.Callable[..., t.Any]) -> bool:
    """Whether a blueprint holds a route to *func* for the apps it will be registered on.

    A blueprint keeps each route as a deferred function (``Blueprint.add_url_rule``'s) whose
    closure holds the view: found through the references to *func*. Only asked at ``init_app``
    for a tool that needs a route, so the walk's cost is paid rarely.
    """
    for cell in gc.get_referrers(func):
        if not isinstance(cell, types.CellType):
            continue
        for closure in gc.get_referrers(cell):
            if not isinstance(closure, tuple):
                continue
            for owner in gc.get_referrers(closure):
                if isinstance(owner, types.FunctionType) and owner.__qualname__.startswith("Blueprint.add_url_rule"):
                    return True
    return False
