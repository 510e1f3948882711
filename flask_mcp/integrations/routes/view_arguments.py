"""A tool stacked on a route, with ``input_schema=``: its URL's variables are arguments beside the schema's.

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

A URL variable the input schema declares too is refused (the URL supplies
it; which of the two types would hold is anybody's guess), and so is a
required parameter of the function that neither supplies; when that is found
at ``init_app`` it raises there, and when found later it is logged and every
call of the tool answers it.
"""

from __future__ import annotations

import logging
import typing as t

import marshmallow as ma
from flask import Flask, current_app, has_app_context
from marshmallow import fields

from ...components.binding import RESERVED_NAMES
from ...components.signature_checks import unsupplied_message
from ...schemas.json_schema import schema_to_json_schema, validate_json_schema
from .url_variables import url_variables_schema
from .view_tools import calls_a_route, route_of

if t.TYPE_CHECKING:
    from werkzeug.routing import Rule

    from ...components.model import Tool

__all__ = ["ViewArguments", "complete_in_current_app", "complete_view_tools", "view_arguments"]

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


def view_arguments(tool: Tool, rule: Rule) -> ViewArguments | ma.Schema | dict[str, t.Any]:
    """*tool*'s input schema completed by *rule*'s variables, for a function that is *rule*'s view.

    :raises ValueError: a variable the input schema declares too, or one
        with a reserved name; or a required parameter neither supplies.
    """
    given = tool.input_schema
    variables = url_variables_schema(rule)
    names = set(variables.fields)
    where = f"the URL {rule.rule} ({rule.endpoint})"
    both = sorted(names & _wire_names(given))
    if both:
        listed = ", ".join(map(repr, both))
        raise ValueError(
            f"tool {tool.name!r}: {listed} is both a variable of {where} and an argument of the input schema; "
            "the URL supplies it, typed by its converter: take it out of the input schema"
        )
    reserved = sorted(names & RESERVED_NAMES)
    if reserved:
        raise ValueError(
            f"tool {tool.name!r}: the variable {reserved[0]!r} of {where} has a name the server fills "
            f"({', '.join(sorted(RESERVED_NAMES))}) and cannot be an argument; rename the URL variable"
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
    return None if route is None else view_arguments(tool, route.rule)


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

    :raises ValueError: a route that refuses its tool's schema (:func:`view_arguments`).
    """
    for tool in tools:
        if tool.completion is None:
            continue
        completed = _completed_by(app, tool)
        if completed is not None:
            tool.complete_with(completed)
