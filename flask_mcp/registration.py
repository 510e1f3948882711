"""Turning decorated functions into components.

Each ``build_*`` function takes a function and the keywords of its
decorator (described by the ``*Options`` typed dicts, the one list of what
the decorators accept) and returns the component the registry stores.
"""

from __future__ import annotations

import re
import typing as t

import marshmallow as ma

from .components import (
    Completer,
    Prompt,
    Resource,
    ResourceTemplate,
    SchemaLike,
    Tool,
    as_schema,
    completers_for,
    describe,
    is_json_schema,
    normalize_icons,
    output_schema_from_hints,
)
from .hints import context_parameter, schema_from_signature
from .uri_template import URITemplate

__all__ = ["PromptOptions", "ResourceOptions", "ToolOptions", "build_prompt", "build_resource", "build_tool"]

# SEP-986 tool names: 1-128 characters, letters, digits, underscore, hyphen, dot.
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,128}$")

Icons = t.Sequence[t.Union[str, t.Mapping[str, t.Any]]]


class ToolOptions(t.TypedDict, total=False):
    """Keyword arguments of :meth:`flask_mcp.MCP.tool`."""

    #: Tool name; defaults to the function name.
    name: str | None
    #: Human-readable display name.
    title: str | None
    #: Defaults to the docstring.
    description: str | None
    #: Schema of the arguments (marshmallow, or a JSON Schema dict advertised
    #: verbatim); defaults to one built from the type hints.
    input_schema: SchemaLike | dict[str, t.Any] | None
    #: Schema the result is dumped through, advertised as ``outputSchema``.
    output_schema: SchemaLike | None
    #: ``ToolAnnotations`` hints such as ``{"readOnlyHint": True}``.
    annotations: t.Mapping[str, t.Any] | None
    #: Icon URLs or ``Icon`` dicts.
    icons: Icons | None
    #: ``_meta`` of the descriptor.
    meta: t.Mapping[str, t.Any] | None


class ResourceOptions(t.TypedDict, total=False):
    """Keyword arguments of :meth:`flask_mcp.MCP.resource`."""

    #: Defaults to the function name.
    name: str | None
    #: Human-readable display name.
    title: str | None
    #: Defaults to the docstring.
    description: str | None
    #: ``mimeType`` of the contents.
    mime_type: str | None
    #: Size in bytes, if known (static resources only).
    size: int | None
    #: ``Annotations`` such as ``{"audience": ["user"]}``.
    annotations: t.Mapping[str, t.Any] | None
    #: Icon URLs or ``Icon`` dicts.
    icons: Icons | None
    #: ``_meta`` of the descriptor.
    meta: t.Mapping[str, t.Any] | None
    #: Schema the return value is dumped through.
    output_schema: SchemaLike | None
    #: Per template variable: values, or ``f(value, arguments) -> values``.
    completions: t.Mapping[str, Completer] | None


class PromptOptions(t.TypedDict, total=False):
    """Keyword arguments of :meth:`flask_mcp.MCP.prompt`."""

    #: Defaults to the function name.
    name: str | None
    #: Human-readable display name.
    title: str | None
    #: Defaults to the docstring.
    description: str | None
    #: Per argument: values, or ``f(value, arguments) -> values``.
    completions: t.Mapping[str, Completer] | None
    #: Icon URLs or ``Icon`` dicts.
    icons: Icons | None
    #: ``_meta`` of the descriptor.
    meta: t.Mapping[str, t.Any] | None


def _check_options(options: t.Mapping[str, t.Any], allowed: type) -> None:
    # TypedDicts are not checked at run time; a typo must not pass silently.
    unknown = set(options) - set(allowed.__annotations__)
    if unknown:
        raise TypeError(f"unexpected keyword argument(s): {', '.join(sorted(unknown))}")


def _copy(value: t.Mapping[str, t.Any] | None) -> dict[str, t.Any] | None:
    return dict(value) if value else None


def build_tool(func: t.Callable[..., t.Any], **options: t.Unpack[ToolOptions]) -> Tool:
    """Build a :class:`Tool` from a function and the decorator's keywords."""
    _check_options(options, ToolOptions)
    name = options.get("name") or func.__name__
    if not _TOOL_NAME.match(name):
        raise ValueError(f"invalid tool name {name!r}: use 1-128 letters, digits, '_', '-' or '.'")
    input_schema = options.get("input_schema")
    output_schema = options.get("output_schema")
    arguments: ma.Schema | dict[str, t.Any]
    if input_schema is None:
        arguments = schema_from_signature(func, name=f"{name}_arguments")()
    elif is_json_schema(input_schema):
        # A hand-written JSON Schema is advertised verbatim ($schema, $defs, ...).
        arguments = dict(t.cast(t.Mapping[str, t.Any], input_schema))
        if arguments.get("type") != "object":
            raise ValueError(f'tool {name!r}: a JSON Schema input_schema must have "type": "object"')
    else:
        arguments = as_schema(input_schema, f"{name}_arguments")
    return Tool(
        func=func,
        name=name,
        input_schema=arguments,
        title=options.get("title"),
        description=describe(func, options.get("description")),
        output_schema=(
            as_schema(output_schema, f"{name}_result") if output_schema is not None else output_schema_from_hints(func)
        ),
        annotations=_copy(options.get("annotations")),
        icons=normalize_icons(options.get("icons")),
        meta=_copy(options.get("meta")),
        context_param=context_parameter(func),
    )


def build_prompt(func: t.Callable[..., t.Any], **options: t.Unpack[PromptOptions]) -> Prompt:
    """Build a :class:`Prompt` from a function; arguments come from its signature."""
    _check_options(options, PromptOptions)
    name = options.get("name") or func.__name__
    schema = schema_from_signature(func, name=f"{name}_arguments", strict=False)()
    return Prompt(
        func=func,
        name=name,
        arguments_schema=schema,
        completers=completers_for(schema, options.get("completions")),
        title=options.get("title"),
        description=describe(func, options.get("description")),
        icons=normalize_icons(options.get("icons")),
        meta=_copy(options.get("meta")),
        context_param=context_parameter(func),
    )


def build_resource(
    func: t.Callable[..., t.Any], uri: str, **options: t.Unpack[ResourceOptions]
) -> Resource | ResourceTemplate:
    """Build a static :class:`Resource`, or a :class:`ResourceTemplate` when *uri* has variables."""
    _check_options(options, ResourceOptions)
    name = options.get("name") or func.__name__
    output_schema = options.get("output_schema")
    completions = options.get("completions")
    common: dict[str, t.Any] = dict(
        func=func,
        name=name,
        title=options.get("title"),
        description=describe(func, options.get("description")),
        mime_type=options.get("mime_type"),
        annotations=_copy(options.get("annotations")),
        icons=normalize_icons(options.get("icons")),
        meta=_copy(options.get("meta")),
        output_schema=as_schema(output_schema, f"{name}_contents") if output_schema is not None else None,
        context_param=context_parameter(func),
    )
    template = URITemplate(uri)
    if not template.variables:
        if completions:
            raise ValueError(f"resource {uri!r} has no variables to complete")
        return Resource(uri=uri, size=options.get("size"), **common)
    ResourceTemplate.check_signature(func, template)
    # Variables without a parameter of their own go to **kwargs, hence INCLUDE.
    variables = schema_from_signature(func, name=f"{name}_variables", only=template.variables, strict=False)
    schema = variables(unknown=ma.INCLUDE)
    return ResourceTemplate(
        template=template, variables_schema=schema, completers=completers_for(schema, completions), **common
    )
