"""List and retrieve tools: read-only tools shaped by their item schema.

A *list tool* returns a collection (a sequence of dicts or objects, or a
SQLAlchemy ``Select`` / legacy ``Query``) and a pipeline filters, orders and
pages it with arguments of its own (the filters, each a field with a lookup
as in :mod:`~flask_mcp.components.list_tools_filters`, ``ordering``, ``page``
and ``limit``) before the items are dumped through the item schema. A
*retrieve tool* returns one object, or ``None`` for "not found".

The pipeline lives in a wrapper around the decorated function: the wrapper's
signature and input schema hold the function's own arguments plus the
pipeline's, it passes only the function's own ones on, and it hands
:func:`~flask_mcp.components.build.build_tool` a value already shaped like the
advertised output schema, so the tool is an ordinary :class:`~flask_mcp.components.model.Tool`.

SQLAlchemy is optional: it is never imported here unless the application has
imported it already (a value cannot be a ``Select`` otherwise).
"""

from __future__ import annotations

import functools
import inspect
import math
import typing as t

import marshmallow as ma
from marshmallow import fields, validate

from ..protocol.errors import NotFoundError
from ..schemas.hints import InjectedParameter, context_parameter, pydantic_schema, schema_from_signature
from ..schemas.json_schema import schema_to_json_schema
from .binding import RESERVED_NAMES
from .build import ToolOptions, build_tool
from .list_tools_filters import Filter, FilterSpec, argument_field, matches, parse_filters, value_of
from .list_tools_sql import Sessions, SessionSource, query_page, rows, select_page, sql_kind
from .model import SchemaLike, Tool, as_schema, is_json_schema

__all__ = [
    "PIPELINE_KEYS",
    "ListToolOptions",
    "RetrieveToolOptions",
    "SessionSource",
    "build_list_tool",
    "build_retrieve_tool",
]

#: The arguments a list tool's pipeline adds (besides its filter fields).
PIPELINE_KEYS = ("ordering", "page", "limit")


class ListToolOptions(ToolOptions, total=False):
    """Keyword arguments of :meth:`flask_mcp.MCP.list_tool`.

    Those of :class:`~flask_mcp.components.build.ToolOptions` (except
    ``output_schema``, which comes from the item schema) and these.
    """

    #: Schema each item is dumped through (objects and dicts both work).
    item_schema: t.Required[SchemaLike]
    #: Optional filter arguments: item schema field names, for equality, or
    #: ``field__lookup`` (``title__icontains``, ``priority__in``, ``due__lte``...);
    #: or a mapping of field name to lookups. See :data:`~flask_mcp.components.list_tools_filters.LOOKUPS`.
    filter_fields: FilterSpec
    #: Item schema fields the ``ordering`` argument may name (``-field`` for descending).
    ordering_fields: t.Sequence[str]
    #: Add ``page`` and ``limit`` and answer with a page envelope.
    paginate: bool
    #: Largest page; a bigger ``limit`` is clamped to it.
    max_limit: int
    #: Page size when the caller gives no ``limit``.
    default_limit: int
    #: Session that runs a returned ``Select``; by default the extension's ``MCP(transaction=...)``.
    session: SessionSource | None


class RetrieveToolOptions(ToolOptions, total=False):
    """Keyword arguments of :meth:`flask_mcp.MCP.retrieve_tool`.

    Those of :class:`~flask_mcp.components.build.ToolOptions` (except
    ``output_schema``, which comes from the item schema) and these.
    """

    #: Schema the object is dumped through.
    item_schema: t.Required[SchemaLike]
    #: Answer ``None`` with a successful ``{"result": null}`` instead of a not-found error.
    allow_none: bool
    #: Session that runs a returned ``Select``; by default the extension's ``MCP(transaction=...)``.
    session: SessionSource | None


_LIST_KEYS = frozenset(ListToolOptions.__annotations__) - frozenset(ToolOptions.__annotations__)
_RETRIEVE_KEYS = frozenset(RetrieveToolOptions.__annotations__) - frozenset(ToolOptions.__annotations__)


def _split(options: t.Mapping[str, t.Any], own: frozenset[str], kind: str) -> tuple[dict[str, t.Any], ToolOptions]:
    if "output_schema" in options:
        raise TypeError(f"{kind} tools build their output schema from item_schema; output_schema cannot be given")
    if "item_schema" not in options:
        raise TypeError(f"{kind} tools need an item_schema")
    mine = {key: value for key, value in options.items() if key in own}
    rest = {key: value for key, value in options.items() if key not in own}
    return mine, t.cast(ToolOptions, rest)


# -- the list pipeline -------------------------------------------------


class _ListPipeline:
    """Filter, order and page what a list tool's function returned."""

    def __init__(self, item: ma.Schema, tool: str, options: dict[str, t.Any]) -> None:
        self.tool = tool
        self.paginate: bool = options.get("paginate", False)
        self.max_limit: int = options.get("max_limit", 100)
        self.default_limit: int = options.get("default_limit", 20)
        if not 1 <= self.default_limit <= self.max_limit:
            raise ValueError(f"list tool {tool!r}: need 1 <= default_limit <= max_limit")
        self.sessions = Sessions(options.get("session"), tool)
        declared = type(item)._declared_fields
        attributes = {name: field.attribute or name for name, field in declared.items()}
        #: The filter arguments, each with its field, attribute and lookup.
        self.filters = parse_filters(options.get("filter_fields", ()), declared, tool)
        ordering_fields = list(options.get("ordering_fields", ()))
        unknown = [name for name in ordering_fields if name not in declared]
        if unknown:
            raise ValueError(f"list tool {tool!r}: ordering_fields not in the item schema: {', '.join(unknown)}")
        #: ``ordering`` choice -> (attribute, descending).
        self.orderings: dict[str, tuple[str, bool]] = {}
        for name in ordering_fields:
            self.orderings[name] = (attributes[name], False)
            self.orderings[f"-{name}"] = (attributes[name], True)
        self.fields: dict[str, fields.Field[t.Any]] = {
            spec.argument: argument_field(declared[spec.field], spec) for spec in self.filters
        }
        if self.orderings:
            self.fields["ordering"] = fields.String(
                validate=validate.OneOf(list(self.orderings)),
                metadata={"description": "Sort by this field; a leading '-' sorts in descending order."},
            )
        if self.paginate:
            self.fields["page"] = fields.Integer(
                strict=True,
                load_default=1,
                validate=validate.Range(min=1),
                metadata={"description": "Page number, from 1."},
            )
            self.fields["limit"] = fields.Integer(
                strict=True,
                load_default=self.default_limit,
                validate=validate.Range(min=1),
                metadata={
                    "description": f"Items per page; values above {self.max_limit} are clamped to {self.max_limit}."
                },
            )

    def run(self, value: t.Any, arguments: dict[str, t.Any], context: t.Any) -> dict[str, t.Any]:
        active = [(spec, arguments[spec.argument]) for spec in self.filters if spec.argument in arguments]
        ordering = self.orderings.get(arguments.get("ordering") or "")
        page = arguments.get("page", 1)
        limit = min(arguments.get("limit", self.default_limit), self.max_limit)
        kind = sql_kind(value)
        if kind is not None:
            # Pushed down into SQL: WHERE, ORDER BY, LIMIT/OFFSET and a COUNT.
            conditions = [(spec.attribute, spec.lookup, wanted) for spec, wanted in active]
            paged = page if self.paginate else None
            if kind == "select":
                items, total = select_page(self.sessions.get(context), value, conditions, ordering, paged, limit)
            else:
                items, total = query_page(self.sessions.query(value, context), conditions, ordering, paged, limit)
        else:
            items, total = self._sequence(value, active, ordering, page, limit)
        if not self.paginate:
            return {"result": items}
        # An empty collection is one empty page, so "page 1 of totalPages" always holds.
        total_pages = max(1, math.ceil(total / limit))
        return {"items": items, "page": page, "totalPages": total_pages, "hasNext": page < total_pages}

    def _sequence(
        self,
        value: t.Any,
        active: list[tuple[Filter, t.Any]],
        ordering: tuple[str, bool] | None,
        page: int,
        limit: int,
    ) -> tuple[list[t.Any], int]:
        if isinstance(value, (str, bytes, t.Mapping)) or not isinstance(value, t.Iterable):
            raise TypeError(f"list tool {self.tool!r} must return a collection, not {type(value).__name__}")
        items = [item for item in value if matches(item, active, self.tool)]
        if ordering is not None:
            key, descending = ordering
            # None sorts last either way: it has no order with other values.
            present = sorted(
                (i for i in items if value_of(i, key) is not None), key=lambda i: value_of(i, key), reverse=descending
            )
            items = present + [i for i in items if value_of(i, key) is None]
        if self.paginate:
            return items[(page - 1) * limit : page * limit], len(items)
        return items, len(items)


# -- wrapping the function ----------------------------------------------


def _wire_names(schema: ma.Schema) -> set[str]:
    return {field.data_key or name for name, field in schema.fields.items()} | {
        field.attribute or name for name, field in schema.fields.items()
    }


def _arguments(
    func: t.Callable[..., t.Any], name: str, options: ToolOptions, pipeline: dict[str, fields.Field[t.Any]]
) -> tuple[ma.Schema | dict[str, t.Any], ma.Schema | None]:
    """The tool's input schema (own arguments plus the pipeline's), and the schema loading
    the pipeline's arguments when the input schema is raw JSON Schema that only validates."""
    given = options.get("input_schema")
    pipeline_schema = ma.Schema.from_dict(dict(pipeline), name=f"{name}_pipeline")()
    model = pydantic_schema(given)
    if model is not None:
        # A pydantic model is taken as the JSON Schema it writes: the pipeline's
        # keys join its properties, and the arguments are validated by it.
        given = model.json_schema_for("input")  # type: ignore[attr-defined]
    if given is None:
        # The server's seeds (request, user, data, context) are filled in, never arguments.
        own_class: type[ma.Schema] = schema_from_signature(func, name=f"{name}_arguments", exclude=RESERVED_NAMES)
    elif is_json_schema(given):
        raw = dict(t.cast(t.Mapping[str, t.Any], given))
        clash = set(raw.get("properties", {})) & _wire_names(pipeline_schema)
        if clash:
            raise ValueError(f"tool {name!r}: argument(s) {', '.join(sorted(clash))} clash with the pipeline's")
        extra = schema_to_json_schema(pipeline_schema, "input")
        raw["properties"] = {**raw.get("properties", {}), **extra["properties"]}
        if "$defs" in extra:
            raw["$defs"] = {**raw.get("$defs", {}), **extra["$defs"]}
        return raw, pipeline_schema
    elif isinstance(given, type):
        own_class = t.cast(type[ma.Schema], given)
    elif isinstance(given, ma.Schema):
        own_class = type(given)
    else:
        own_class = type(as_schema(given, f"{name}_arguments"))
    own = own_class()
    params = set(inspect.signature(func).parameters) - {context_parameter(func), *RESERVED_NAMES}
    clash = (_wire_names(own) | params) & _wire_names(pipeline_schema)
    if clash:
        raise ValueError(
            f"tool {name!r}: argument(s) {', '.join(sorted(clash))} clash with the pipeline's reserved keys "
            "(ordering, page, limit and the filter fields)"
        )
    # A subclass keeps the own schema's hooks and Meta options.
    return own_class.from_dict(dict(pipeline), name=f"{name}_arguments")(), None


def _wrap(
    func: t.Callable[..., t.Any],
    pipeline: dict[str, fields.Field[t.Any]],
    loader: ma.Schema | None,
    shape: t.Callable[[t.Any, dict[str, t.Any], t.Any], t.Any],
) -> t.Callable[..., t.Any]:
    """A function taking the function's own arguments plus the pipeline's, calling *func* with its own.

    *shape* gets what *func* returned, the pipeline's arguments and the
    call's :class:`~flask_mcp.Context` (``None`` outside a call): the
    wrapper takes one whether or not *func* does, since a SQL query runs in
    the session of the extension that serves the call.
    """

    # Raw JSON Schema leaves the arguments under their wire names (data_key), unloaded.
    keys = [(field.data_key or key) if loader is not None else key for key, field in pipeline.items()]
    signature = inspect.signature(func)
    context_name = context_parameter(func) or "context"
    # The server fills a parameter called "context" with the Context, unannotated, so the call
    # keeps its fast path (an annotated Context makes a handler run in a thread that may stream).
    # A function taking **kwargs receives every name: only an annotation asks for the Context then.
    hidden = context_name not in signature.parameters
    takes_any = any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values())

    def split(kwargs: dict[str, t.Any]) -> tuple[dict[str, t.Any], dict[str, t.Any], t.Any]:
        context = kwargs.pop(context_name, None) if hidden else kwargs.get(context_name)
        taken = {key: kwargs.pop(key) for key in keys if key in kwargs}
        return kwargs, loader.load(taken) if loader is not None else taken, context

    wrapper: t.Callable[..., t.Any]
    if inspect.iscoroutinefunction(func):

        async def wrapper(**kwargs: t.Any) -> t.Any:
            own, taken, context = split(kwargs)
            return shape(await func(**own), taken, context)

    else:

        def wrapper(**kwargs: t.Any) -> t.Any:
            own, taken, context = split(kwargs)
            return shape(func(**own), taken, context)

    functools.update_wrapper(wrapper, func)
    # The signature and hints others inspect (Context injection, argument
    # binding) are the function's own plus the pipeline's keyword-only ones
    # (and the Context's, when the function has none).
    keyword = inspect.Parameter.KEYWORD_ONLY
    params = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    extra = [inspect.Parameter(key, keyword, default=None) for key in pipeline]
    annotations: dict[str, t.Any] = {**getattr(func, "__annotations__", {}), **{key: t.Any for key in pipeline}}
    if hidden:
        extra.append(inspect.Parameter(context_name, keyword, default=None))
        if takes_any:
            annotations[context_name] = InjectedParameter
    variadic = [p for p in signature.parameters.values() if p.kind is p.VAR_KEYWORD]
    wrapper.__signature__ = signature.replace(parameters=[*params, *extra, *variadic])  # type: ignore[union-attr]
    wrapper.__annotations__ = annotations
    return wrapper


# -- builders -----------------------------------------------------------


def build_list_tool(func: t.Callable[..., t.Any], **options: t.Unpack[ListToolOptions]) -> Tool:
    """Build the :class:`~flask_mcp.components.model.Tool` of :meth:`flask_mcp.MCP.list_tool`.

    :raises ValueError: a filter or ordering field the item schema lacks, or
        an argument of the function named like a pipeline key.
    """
    mine, tool_options = _split(options, _LIST_KEYS, "list")
    name = tool_options.get("name") or func.__name__
    if tool_options.get("argument_binding") == "bundle":  # a str enum equals its value
        # The pipeline takes its keys out of the spread arguments; a bundle would hide them.
        raise ValueError(f"list tool {name!r}: argument_binding='bundle' is not supported, the arguments are spread")
    item = as_schema(mine["item_schema"], f"{name}_item")
    pipeline = _ListPipeline(item, name, mine)
    input_schema, loader = _arguments(func, name, tool_options, pipeline.fields)
    items = fields.List(fields.Nested(item), required=True)
    if pipeline.paginate:
        envelope: dict[str, fields.Field[t.Any]] = {
            "items": items,
            "page": fields.Integer(required=True),
            "totalPages": fields.Integer(required=True),
            "hasNext": fields.Boolean(required=True),
        }
    else:
        # MCP wants an object as structuredContent: the list goes under "result".
        envelope = {"result": items}
    output = ma.Schema.from_dict(envelope, name=f"{name}_page" if pipeline.paginate else f"{name}_result")
    wrapper = _wrap(func, pipeline.fields, loader, pipeline.run)
    tool_options["input_schema"] = input_schema
    tool_options["output_schema"] = output
    return build_tool(wrapper, **tool_options)


def build_retrieve_tool(func: t.Callable[..., t.Any], **options: t.Unpack[RetrieveToolOptions]) -> Tool:
    """Build the :class:`~flask_mcp.components.model.Tool` of :meth:`flask_mcp.MCP.retrieve_tool`.

    :raises TypeError: list-only keywords (``filter_fields``, ``ordering_fields``,
        ``paginate``, ...), which make no sense for one object.
    """
    list_only = set(options) & (_LIST_KEYS - _RETRIEVE_KEYS)
    if list_only:
        raise TypeError(
            f"retrieve tools return one object: {', '.join(sorted(list_only))} only apply to list tools (MCP.list_tool)"
        )
    mine, tool_options = _split(options, _RETRIEVE_KEYS, "retrieve")
    name = tool_options.get("name") or func.__name__
    item = as_schema(mine["item_schema"], f"{name}_item")
    allow_none = bool(mine.get("allow_none", False))
    sessions = Sessions(mine.get("session"), name)

    def shape(value: t.Any, arguments: dict[str, t.Any], context: t.Any) -> t.Any:
        kind = sql_kind(value)
        if kind == "select":
            value = rows(sessions.get(context), value, first=True)
        elif kind == "query":
            value = sessions.query(value, context).first()
        if allow_none:
            return {"result": value}
        if value is None:
            raise NotFoundError(f"{name}: not found")
        return value

    output: ma.Schema | type[ma.Schema] = item
    if allow_none:
        output = ma.Schema.from_dict(
            {"result": fields.Nested(item, allow_none=True, required=True)}, name=f"{name}_result"
        )
    # No pipeline arguments: the input schema is the function's own, derived by build_tool as for any tool.
    wrapper = _wrap(func, {}, None, shape)
    tool_options["output_schema"] = output
    return build_tool(wrapper, **tool_options)
