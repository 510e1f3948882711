"""Turning decorated functions into components.

Each ``build_*`` function takes a function and the keywords of its
decorator (described by the ``*Options`` typed dicts, the one list of what
the decorators accept) and returns the component the registry stores.
"""

from __future__ import annotations

import dataclasses
import datetime
import re
import typing as t

import marshmallow as ma

from ..policies.options import ArgumentBinding, ErrorFormat, KwargsPrecedence, OutputFormat, UnknownArguments, coerce
from ..policies.permissions import PermissionLike, normalize_permissions
from ..policies.ratelimit import Limit, parse_limit
from ..policies.tool import KwargsProvider, ToolPolicy
from ..schemas.hints import context_parameter, pydantic_schema, schema_from_dataclass, schema_from_signature
from .binding import RESERVED_NAMES, accepted_parameters
from .from_functions import completers_for, describe, normalize_icons, output_schema_from_hints
from .model import (
    CacheScope,
    Completer,
    Prompt,
    PydanticModelClass,
    Resource,
    ResourceTemplate,
    SchemaLike,
    TaskSupport,
    Tool,
    as_schema,
    is_json_schema,
)
from .option_checks import cache_hints, confirm_option, param_headers, result_ttl, task_support, with_result_ttl
from .signature_checks import check_parameters
from .uri_template import URITemplate

__all__ = [
    "TAGS_META",
    "PromptOptions",
    "ResourceOptions",
    "ToolOptions",
    "build_prompt",
    "build_resource",
    "build_tool",
]

#: The ``_meta`` key listing a component's tags.
TAGS_META = "io.flask-mcp/tags"
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
    #: Schema of the arguments (marshmallow, a pydantic model, or a JSON Schema
    #: dict advertised verbatim); defaults to one built from the type hints.
    input_schema: SchemaLike | PydanticModelClass | dict[str, t.Any] | None
    #: Schema the result is dumped through (marshmallow or a pydantic model), advertised as ``outputSchema``.
    output_schema: SchemaLike | PydanticModelClass | None
    #: ``ToolAnnotations`` hints such as ``{"readOnlyHint": True}``.
    annotations: t.Mapping[str, t.Any] | None
    #: Icon URLs or ``Icon`` dicts.
    icons: Icons | None
    #: ``_meta`` of the descriptor.
    meta: t.Mapping[str, t.Any] | None
    #: ``"spread"`` (each argument a keyword) or ``"bundle"`` (one ``data=`` dict).
    argument_binding: ArgumentBinding | str | None
    #: ``f(context) -> dict`` of extra keyword arguments (a tenant id, ...).
    kwargs: KwargsProvider | None
    #: Who wins when ``kwargs`` and the caller name the same argument: ``"provider"`` or ``"caller"``.
    kwargs_precedence: KwargsPrecedence | str | None
    #: ``"reject"``, ``"passthrough"`` or ``"ignore"`` names the input schema does not declare.
    unknown_arguments: UnknownArguments | str | None
    #: ``"json"``, ``"toon"`` or ``"auto"`` for the text block; default ``MCP_OUTPUT_FORMAT``.
    output_format: OutputFormat | str | None
    #: Send ``structuredContent``; default ``MCP_INCLUDE_STRUCTURED_CONTENT``.
    include_structured_content: bool | None
    #: Advertise ``outputSchema``; default ``MCP_INCLUDE_OUTPUT_SCHEMA``.
    include_output_schema: bool | None
    #: Seconds the call may take; default ``MCP_TOOL_TIMEOUT``.
    timeout: float | None
    #: Largest result in bytes of JSON; default ``MCP_MAX_RESULT_BYTES``.
    max_result_bytes: int | None
    #: Answer an oversized result with a ``resource_link`` to it instead of an error.
    spill_to_resource: bool | None
    #: ``"text"``, ``"json"`` or ``"plain"`` failures; default ``MCP_ERROR_FORMAT``.
    error_format: ErrorFormat | str | None
    #: Run inside ``MCP(transaction=...)``: committed on success, rolled back on failure.
    atomic: bool | None
    #: Who may use it (:mod:`flask_mcp.policies.permissions`), all required; ``[]`` makes it public.
    #: Without it, ``MCP(default_permissions=...)`` applies.
    permissions: t.Sequence[PermissionLike] | PermissionLike | None
    #: Keep it in listings filtered by ``MCP_FILTER_LISTINGS_BY_PERMISSIONS`` even for callers it denies.
    always_listed: bool
    #: Calls allowed per caller: ``"10/minute"``, a ``FixedWindow`` or a ``TokenBucket``.
    rate_limit: str | Limit | None
    #: Argument name -> header name: the argument also travels in ``Mcp-Param-<name>`` (2026-07-28),
    #: for proxies to route on. Only string, integer and boolean arguments.
    headers: t.Mapping[str, str] | None
    #: How long clients may reuse this component's modern results (seconds or a
    #: ``timedelta``); default ``MCP_CLIENT_CACHE_TTL``. A listing takes the shortest of its components'.
    cache_ttl: float | datetime.timedelta | None
    #: ``"private"`` when its results depend on the caller, ``"public"`` otherwise; default ``MCP_CLIENT_CACHE_SCOPE``.
    cache_scope: CacheScope | None
    #: Labels that ``MCP(include_tags=..., exclude_tags=...)`` select by; listed in ``_meta`` under :data:`TAGS_META`.
    tags: t.Iterable[str] | None
    #: Whether a call may (``"optional"``) or must (``"required"``) run as a task that outlives
    #: its request; ``"forbidden"`` (the default) never does. See :doc:`tasks`.
    task: TaskSupport | None
    #: Keep results in the shared store this long (seconds or a ``timedelta``) and answer the same
    #: arguments from there: for read-only tools (``annotations={"readOnlyHint": True}``). Per caller
    #: unless ``cache_scope="public"``; also the default ``cache_ttl``. See :ref:`cached-results`.
    cache: float | datetime.timedelta | None
    #: Its view (an MCP App): a template name, or a :class:`~flask_mcp.apps.App`; see :doc:`apps`.
    app: t.Any
    #: Questions settled before a task is created: key -> an input request
    #: (:class:`~flask_mcp.Elicit`...). The task's ``ctx.elicit(..., key=...)`` finds the answers.
    ask_first: t.Mapping[str, t.Any] | None
    #: Wait for the human's approval of every call before the function runs: ``True``, or a message
    #: formatted with the call's arguments (``"Delete note {note_id}?"``); ``False`` never asks, even
    #: under ``MCP_CONFIRM_DESTRUCTIVE``. See :doc:`approval`.
    confirm: bool | str | None


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
    #: Who may use it (:mod:`flask_mcp.policies.permissions`), all required; ``[]`` makes it public.
    #: Without it, ``MCP(default_permissions=...)`` applies.
    permissions: t.Sequence[PermissionLike] | PermissionLike | None
    #: Keep it in listings filtered by ``MCP_FILTER_LISTINGS_BY_PERMISSIONS`` even for callers it denies.
    always_listed: bool
    #: How long clients may reuse this component's modern results (seconds or a
    #: ``timedelta``); default ``MCP_CLIENT_CACHE_TTL``. A listing takes the shortest of its components'.
    cache_ttl: float | datetime.timedelta | None
    #: ``"private"`` when its results depend on the caller, ``"public"`` otherwise; default ``MCP_CLIENT_CACHE_SCOPE``.
    cache_scope: CacheScope | None
    #: Labels that ``MCP(include_tags=..., exclude_tags=...)`` select by; listed in ``_meta`` under :data:`TAGS_META`.
    tags: t.Iterable[str] | None


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
    #: Who may use it (:mod:`flask_mcp.policies.permissions`), all required; ``[]`` makes it public.
    #: Without it, ``MCP(default_permissions=...)`` applies.
    permissions: t.Sequence[PermissionLike] | PermissionLike | None
    #: Keep it in listings filtered by ``MCP_FILTER_LISTINGS_BY_PERMISSIONS`` even for callers it denies.
    always_listed: bool
    #: How long clients may reuse this component's modern results (seconds or a
    #: ``timedelta``); default ``MCP_CLIENT_CACHE_TTL``. A listing takes the shortest of its components'.
    cache_ttl: float | datetime.timedelta | None
    #: ``"private"`` when its results depend on the caller, ``"public"`` otherwise; default ``MCP_CLIENT_CACHE_SCOPE``.
    cache_scope: CacheScope | None
    #: Labels that ``MCP(include_tags=..., exclude_tags=...)`` select by; listed in ``_meta`` under :data:`TAGS_META`.
    tags: t.Iterable[str] | None


def _check_options(options: t.Mapping[str, t.Any], allowed: type) -> None:
    # TypedDicts are not checked at run time; a typo must not pass silently.
    unknown = set(options) - set(allowed.__annotations__)
    if unknown:
        raise TypeError(f"unexpected keyword argument(s): {', '.join(sorted(unknown))}")


def _copy(value: t.Mapping[str, t.Any] | None) -> dict[str, t.Any] | None:
    return dict(value) if value else None


def _tagged(options: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    """``tags`` and ``meta`` of a component: the tags are also listed in ``_meta`` under :data:`TAGS_META`."""
    tags = options.get("tags") or ()
    if isinstance(tags, str) or not all(isinstance(tag, str) for tag in tags):
        raise TypeError(f"tags must be an iterable of strings, not {tags!r}")
    tags = frozenset(tags)
    meta = _copy(options.get("meta"))
    if tags:
        meta = {**(meta or {}), TAGS_META: sorted(tags)}
    return {"tags": tags, "meta": meta}


def build_tool(func: t.Callable[..., t.Any], *, routable: bool = False, **options: t.Unpack[ToolOptions]) -> Tool:
    """Build a :class:`Tool` from a function and the decorator's keywords.

    :param routable: the function may be a route's view, whose URL supplies
        what an explicit ``input_schema`` does not: a required parameter
        nothing else supplies is left to it (:attr:`Tool.unsupplied`)
        rather than refused.
    :raises ValueError: an invalid name, option value or combination.
    :raises TypeError: an unknown keyword.
    """
    _check_options(options, ToolOptions)
    name = options.get("name") or func.__name__
    if not _TOOL_NAME.match(name):
        raise ValueError(f"invalid tool name {name!r}: use 1-128 letters, digits, '_', '-' or '.'")
    binding = coerce(ArgumentBinding, options.get("argument_binding") or ArgumentBinding.SPREAD, "argument_binding")
    policy = ToolPolicy.from_options(options, name)
    arguments = _input_schema(func, name, binding, options.get("input_schema"))
    _check_reserved(name, arguments)
    if (
        binding is ArgumentBinding.SPREAD
        and policy.unknown_arguments is UnknownArguments.PASSTHROUGH
        and accepted_parameters(func) is not None
    ):
        raise ValueError(
            f"tool {name!r}: unknown_arguments='passthrough' with argument_binding='spread' needs a function "
            "that takes **kwargs to receive them; add **kwargs or use argument_binding='bundle'"
        )
    unsupplied = check_parameters(
        name,
        func,
        binding,
        # The names the loaded data has (a field's data_key is only its name on the wire).
        set(arguments.get("properties") or ()) if isinstance(arguments, dict) else set(arguments.load_fields),
        context_parameter(func),
        has_provider=options.get("kwargs") is not None,
        leave_to_route=routable and options.get("input_schema") is not None,
    )
    output_schema = options.get("output_schema")
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
        context_param=context_parameter(func),
        binding=binding,
        policy=policy,
        permissions=normalize_permissions(options.get("permissions")),
        always_listed=bool(options.get("always_listed", False)),
        rate_limit=parse_limit(options.get("rate_limit")),
        param_headers=param_headers(name, options.get("headers"), arguments),
        task_support=task_support(name, options.get("task"), options.get("ask_first")),
        ask_first=dict(options.get("ask_first") or {}),
        confirm=confirm_option(name, options.get("confirm")),
        result_ttl=result_ttl(name, options),
        unsupplied=unsupplied,
        typed_by_hints=options.get("input_schema") is None and binding is ArgumentBinding.SPREAD,
        **_tagged(options),
        **cache_hints(with_result_ttl(options), f"tool {name!r}"),
    )


def _input_schema(
    func: t.Callable[..., t.Any], name: str, binding: ArgumentBinding, given: t.Any
) -> ma.Schema | dict[str, t.Any]:
    if given is not None and is_json_schema(given):
        # A hand-written JSON Schema is advertised verbatim ($schema, $defs, ...).
        raw = dict(t.cast(t.Mapping[str, t.Any], given))
        if raw.get("type") != "object":
            raise ValueError(f'tool {name!r}: a JSON Schema input_schema must have "type": "object"')
        return raw
    bundle = binding is ArgumentBinding.BUNDLE
    if given is not None:
        return pydantic_schema(given, bundle=bundle) or as_schema(given, f"{name}_arguments")
    # Service style: the arguments are described by the ``data`` parameter's annotation.
    hint = t.get_type_hints(func).get("data")
    data_schema = pydantic_schema(hint, bundle=True)
    if data_schema is None and isinstance(hint, type) and issubclass(hint, ma.Schema):
        data_schema = hint()
    if data_schema is None and isinstance(hint, type) and dataclasses.is_dataclass(hint):
        data_schema = schema_from_dataclass(hint)()
    if bundle and data_schema is None:
        raise ValueError(
            f"tool {name!r}: argument_binding='bundle' needs input_schema=, or a data parameter annotated "
            "with a marshmallow Schema, a dataclass or a pydantic model"
        )
    if data_schema is not None and not bundle:
        kind = getattr(hint, "__name__", hint)
        raise ValueError(
            f"tool {name!r}: the data parameter is annotated with {kind}, but data is reserved for the validated "
            f"arguments: use argument_binding='bundle' for the whole arguments object to be validated by {kind}, "
            "or rename the parameter to take it as one argument"
        )
    if data_schema is not None:
        return data_schema
    # The server's seeds (request, user, data, context) are filled in, never arguments.
    return schema_from_signature(func, name=f"{name}_arguments", exclude=RESERVED_NAMES)()


def _declared(schema: ma.Schema | dict[str, t.Any]) -> set[str]:
    """The argument names an input schema declares."""
    if isinstance(schema, dict):
        return set(schema.get("properties") or ())
    return {field.data_key or key for key, field in schema.load_fields.items()}


def _check_reserved(name: str, schema: ma.Schema | dict[str, t.Any]) -> None:
    clash = sorted(_declared(schema) & RESERVED_NAMES)
    if clash:
        raise ValueError(
            f"tool {name!r}: argument name(s) {', '.join(clash)} are reserved for what the server passes "
            f"({', '.join(sorted(RESERVED_NAMES))}); rename the argument(s)"
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
        context_param=context_parameter(func),
        permissions=normalize_permissions(options.get("permissions")),
        always_listed=bool(options.get("always_listed", False)),
        **_tagged(options),
        **cache_hints(options, f"prompt {name!r}"),
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
        output_schema=as_schema(output_schema, f"{name}_contents") if output_schema is not None else None,
        context_param=context_parameter(func),
        permissions=normalize_permissions(options.get("permissions")),
        always_listed=bool(options.get("always_listed", False)),
        **_tagged(options),
        **cache_hints(options, f"resource {uri!r}"),
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
