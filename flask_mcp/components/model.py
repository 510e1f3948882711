"""Registered tools, resources, resource templates and prompts.

Each component is built once at registration: its marshmallow schema, its
JSON Schema and the descriptor sent in ``*/list`` results are computed then
(lazily, on first use) and cached, never per request.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing as t

import marshmallow as ma
from marshmallow import fields

from ..policies.options import ArgumentBinding, UnknownArguments
from ..policies.tool import ResolvedPolicy, ToolDefaults, ToolPolicy
from ..schemas.hints import context_parameter, pydantic_schema
from ..schemas.json_schema import schema_to_json_schema
from .uri_template import URITemplate

if t.TYPE_CHECKING:
    import pydantic

    from ..policies.permissions import Permission
    from ..policies.ratelimit import Limit
    from .binding import ArgumentBinder

__all__ = [
    "CacheScope",
    "Completer",
    "Prompt",
    "Resource",
    "ResourceTemplate",
    "SchemaLike",
    "TaskSupport",
    "Tool",
]

#: A marshmallow schema class or instance, or a dict of field name to field.
SchemaLike = t.Union[type[ma.Schema], ma.Schema, t.Mapping[str, fields.Field[t.Any]]]
#: A pydantic model class, which tools also take as a schema (the ``pydantic`` extra).
PydanticModelClass: t.TypeAlias = "type[pydantic.BaseModel]"
#: Who may reuse a modern result: anyone (``"public"``), or only the caller it was for (``"private"``).
CacheScope = t.Literal["public", "private"]
#: Whether a tool's calls run as tasks (:mod:`flask_mcp.core.tasks`).
TaskSupport = t.Literal["forbidden", "optional", "required"]
#: Completion source: a fixed list, or ``f(value, arguments) -> iterable of str``.
Completer = t.Union[t.Sequence[str], t.Callable[[str, dict[str, str]], t.Iterable[str]]]


def is_json_schema(schema: t.Any) -> bool:
    """Whether *schema* is a JSON Schema dict (rather than a dict of marshmallow fields)."""
    return isinstance(schema, t.Mapping) and not any(isinstance(v, fields.Field) for v in schema.values())


def as_schema(schema: SchemaLike | PydanticModelClass, name: str) -> ma.Schema:
    """Return a schema instance for a class, an instance, a dict of fields or a pydantic model."""
    if isinstance(schema, ma.Schema):
        return schema
    if isinstance(schema, type) and issubclass(schema, ma.Schema):
        return schema()
    if isinstance(schema, t.Mapping):
        return ma.Schema.from_dict(dict(schema), name=name)()
    model = pydantic_schema(schema)
    if model is not None:
        return model
    raise TypeError(
        f"expected a marshmallow Schema class, instance or dict of fields, or a pydantic model, got {schema!r}"
    )


def _descriptor(**members: t.Any) -> dict[str, t.Any]:
    """A wire object with the ``None`` members left out."""
    return {key: value for key, value in members.items() if value is not None}


@dataclasses.dataclass(eq=False)
class Tool:
    """A registered tool. Built by :meth:`flask_mcp.MCP.tool`."""

    func: t.Callable[..., t.Any]
    name: str
    #: A marshmallow schema, or a raw JSON Schema dict advertised verbatim.
    input_schema: ma.Schema | dict[str, t.Any]
    title: str | None = None
    description: str | None = None
    output_schema: ma.Schema | None = None
    annotations: dict[str, t.Any] | None = None
    icons: list[dict[str, t.Any]] | None = None
    meta: dict[str, t.Any] | None = None
    #: The parameter that receives a :class:`~flask_mcp.Context`, if any.
    context_param: str | None = None
    #: Who may use it: ``None`` takes the server's ``default_permissions``, ``()`` is public.
    permissions: tuple[Permission, ...] | None = None
    #: Listed even to callers its permissions deny (``MCP_FILTER_LISTINGS_BY_PERMISSIONS``).
    always_listed: bool = False
    #: ``ttlMs`` of this component's modern results, when it sets its own (``cache_ttl=``).
    cache_ttl_ms: int | None = None
    #: ``"private"`` when this component's results depend on the caller (``cache_scope=``).
    cache_scope: str | None = None
    #: Labels for ``MCP(include_tags=..., exclude_tags=...)``, also in ``_meta`` (``tags=``).
    tags: frozenset[str] = frozenset()
    #: Calls allowed per caller (:mod:`flask_mcp.policies.ratelimit`); ``None``: only the server-wide limit.
    rate_limit: Limit | None = None
    #: How validated arguments reach the function.
    binding: ArgumentBinding = ArgumentBinding.SPREAD
    #: The tool's own call options; ``None`` members inherit :attr:`defaults`.
    policy: ToolPolicy = dataclasses.field(default_factory=ToolPolicy)
    #: The server-wide defaults, set by the registry from the ``MCP_*`` keys.
    defaults: ToolDefaults = dataclasses.field(default_factory=ToolDefaults)
    #: Argument name -> the header it also travels in (``Mcp-Param-<name>``), as ``x-mcp-header``.
    param_headers: dict[str, str] | None = None
    #: ``"forbidden"``, ``"optional"`` or ``"required"``: whether its calls run as tasks.
    task_support: TaskSupport = "forbidden"
    #: Seconds its results are kept in the store and reused for the same arguments (``cache=``).
    result_ttl: float | None = None
    #: Questions asked before a task is created, by key (input requests of :mod:`flask_mcp.core.input_requests`).
    ask_first: dict[str, t.Any] = dataclasses.field(default_factory=dict)
    #: ``confirm=``: ``True`` or a message makes every call wait for the human's approval; ``False``
    #: never asks, even under ``MCP_CONFIRM_DESTRUCTIVE``; ``None`` follows it (:attr:`confirmation`).
    confirm: bool | str | None = None
    #: Required parameters of the function that its arguments do not supply: left to the URL of
    #: the route the function turns out to be the view of (:meth:`complete`).
    unsupplied: frozenset[str] = frozenset()
    #: The input schema completed by what only becomes known once the app's routes are
    #: (a route's URL variables, for a function that is its view), or ``None`` while it is
    #: not known yet; set by the layer that knows routes. Asked by :meth:`complete`.
    completion: t.Callable[[Tool], ma.Schema | dict[str, t.Any] | None] | None = None
    #: Why every call is refused, found after registration by :attr:`completion`.
    refused: str | None = None
    #: The input schema was made from the function's type hints (its parameters), so the URL of a
    #: route the function turns out to be the view of may type those of its parameters it supplies.
    typed_by_hints: bool = False
    #: How many input schemas were completed late, in all (:meth:`complete_with`): a listing
    #: made before the last one may show a schema since completed.
    completions: t.ClassVar[int] = 0
    #: Counts every change to any tool after registration (defaults applied, a schema completed, a
    #: call refused): what was worked out from a tool (:mod:`flask_mcp.core.plain_calls`) holds while it stays.
    generation: t.ClassVar[int] = 0

    @property
    def confirmation(self) -> str | None:
        """The message template of the approval its calls wait for (``""``: the default one), or ``None``.

        See :mod:`flask_mcp.core.approval`: ``confirm=``, else ``MCP_CONFIRM_DESTRUCTIVE`` for a tool
        annotated ``destructiveHint: true``.
        """
        confirm = self.confirm
        if isinstance(confirm, str):
            return confirm
        if confirm is None:
            destructive = self.annotations is not None and self.annotations.get("destructiveHint") is True
            return "" if destructive and self.defaults.confirm_destructive else None
        return "" if confirm else None

    def use_defaults(self, defaults: ToolDefaults) -> None:
        """Apply new server-wide defaults, dropping everything computed from the old ones."""
        self.defaults = defaults
        for cached in ("resolved", "_descriptor"):
            self.__dict__.pop(cached, None)
        Tool.generation += 1

    def complete(self) -> None:
        """Complete the input schema by :attr:`completion`, once it knows how; a no-op after that.

        Every reader of the schema (the listing, the call, the REST page)
        comes through here first, so a tool whose schema is completed late
        is never seen incomplete where the completion is known. A completion
        that refuses the tool (:class:`ValueError`) leaves its schema as it
        is and sets :attr:`refused`, which every call answers.
        """
        completion = self.completion
        if completion is None:
            return
        try:
            completed = completion(self)
        except ValueError as exc:
            self.refuse(str(exc))
            return
        if completed is not None:
            self.complete_with(completed)

    def refuse(self, why: str) -> None:
        """Refuse every call with *why*, found after registration; nothing is left to complete."""
        self.completion, self.refused, self.typed_by_hints = None, why, False
        Tool.generation += 1

    def complete_with(self, schema: ma.Schema | dict[str, t.Any]) -> None:
        """Make *schema* the input schema for good: :attr:`completion` is done, nothing is left unsupplied."""
        self.input_schema, self.completion, self.unsupplied = schema, None, frozenset()
        self.typed_by_hints = False
        for cached in ("_binder", "_descriptor"):
            self.__dict__.pop(cached, None)
        Tool.completions += 1
        Tool.generation += 1

    @functools.cached_property
    def resolved(self) -> ResolvedPolicy:
        """The policy with the server's defaults filled in.

        :raises ~flask_mcp.ConfigurationError: options that
            contradict the server's settings.
        """
        return self.policy.resolve(self.defaults, self.name, self.output_schema is not None)

    @property
    def binder(self) -> ArgumentBinder:
        """Validates the arguments and builds the function's keyword arguments."""
        self.complete()
        return self._binder

    @functools.cached_property
    def _binder(self) -> ArgumentBinder:
        from .binding import ArgumentBinder, accepted_parameters, unknown_policy_of

        return ArgumentBinder(
            schema=self.input_schema,
            binding=self.binding,
            unknown=self.policy.unknown_arguments or unknown_policy_of(self.input_schema),
            accepts=accepted_parameters(self.func),
            context_param=self.context_param,
            provider=self.policy.kwargs,
            precedence=self.policy.kwargs_precedence,
        )

    @property
    def descriptor(self) -> dict[str, t.Any]:
        """The ``Tool`` object of ``tools/list``."""
        self.complete()
        return self._descriptor

    @functools.cached_property
    def _descriptor(self) -> dict[str, t.Any]:
        input_schema = (
            self.input_schema if isinstance(self.input_schema, dict) else schema_to_json_schema(self.input_schema)
        )
        unknown = self.policy.unknown_arguments
        if unknown is not None:
            input_schema = {**input_schema, "additionalProperties": unknown is not UnknownArguments.REJECT}
        if self.param_headers:
            properties = dict(input_schema.get("properties") or {})
            for argument, header in self.param_headers.items():
                properties[argument] = {**properties[argument], "x-mcp-header": header}
            input_schema = {**input_schema, "properties": properties}
        advertise = self.output_schema is not None and self.resolved.include_output_schema
        return _descriptor(
            name=self.name,
            title=self.title,
            description=self.description,
            inputSchema=input_schema,
            outputSchema=schema_to_json_schema(self.output_schema, "output") if advertise else None,  # type: ignore[arg-type]
            annotations=self.annotations,
            icons=self.icons,
            execution=None if self.task_support == "forbidden" else {"taskSupport": self.task_support},
            _meta=self.meta,
        )

    def load_arguments(self, arguments: dict[str, t.Any]) -> dict[str, t.Any]:
        """Validate *arguments* by the schema and the unknown-argument policy.

        :raises marshmallow.ValidationError: naming the offending fields.
        """
        return self.binder.validate(arguments)


@dataclasses.dataclass(eq=False)
class Resource:
    """A static resource with a fixed URI. Built by :meth:`flask_mcp.MCP.resource`."""

    func: t.Callable[..., t.Any]
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: dict[str, t.Any] | None = None
    icons: list[dict[str, t.Any]] | None = None
    meta: dict[str, t.Any] | None = None
    #: ``_meta`` of each content item ``resources/read`` answers with (an MCP App view's ``ui`` members).
    content_meta: dict[str, t.Any] | None = None
    #: The tool whose view this is (an MCP App): served only while that tool is, removed with it.
    follows_tool: str | None = None
    output_schema: ma.Schema | None = None
    #: The parameter that receives a :class:`~flask_mcp.Context`, if any.
    context_param: str | None = None
    #: Who may use it: ``None`` takes the server's ``default_permissions``, ``()`` is public.
    permissions: tuple[Permission, ...] | None = None
    #: Listed even to callers its permissions deny (``MCP_FILTER_LISTINGS_BY_PERMISSIONS``).
    always_listed: bool = False
    #: ``ttlMs`` of this component's modern results, when it sets its own (``cache_ttl=``).
    cache_ttl_ms: int | None = None
    #: ``"private"`` when this component's results depend on the caller (``cache_scope=``).
    cache_scope: str | None = None
    #: Labels for ``MCP(include_tags=..., exclude_tags=...)``, also in ``_meta`` (``tags=``).
    tags: frozenset[str] = frozenset()

    @functools.cached_property
    def descriptor(self) -> dict[str, t.Any]:
        """The ``Resource`` object of ``resources/list``."""
        return _descriptor(
            uri=self.uri,
            name=self.name,
            title=self.title,
            description=self.description,
            mimeType=self.mime_type,
            size=self.size,
            annotations=self.annotations,
            icons=self.icons,
            _meta=self.meta,
        )


@dataclasses.dataclass(eq=False)
class ResourceTemplate:
    """A family of resources described by a URI template."""

    func: t.Callable[..., t.Any]
    template: URITemplate
    name: str
    variables_schema: ma.Schema
    completers: dict[str, Completer] = dataclasses.field(default_factory=dict)
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    annotations: dict[str, t.Any] | None = None
    icons: list[dict[str, t.Any]] | None = None
    meta: dict[str, t.Any] | None = None
    output_schema: ma.Schema | None = None
    #: The parameter that receives a :class:`~flask_mcp.Context`, if any.
    context_param: str | None = None
    #: Who may use it: ``None`` takes the server's ``default_permissions``, ``()`` is public.
    permissions: tuple[Permission, ...] | None = None
    #: Listed even to callers its permissions deny (``MCP_FILTER_LISTINGS_BY_PERMISSIONS``).
    always_listed: bool = False
    #: ``ttlMs`` of this component's modern results, when it sets its own (``cache_ttl=``).
    cache_ttl_ms: int | None = None
    #: ``"private"`` when this component's results depend on the caller (``cache_scope=``).
    cache_scope: str | None = None
    #: Labels for ``MCP(include_tags=..., exclude_tags=...)``, also in ``_meta`` (``tags=``).
    tags: frozenset[str] = frozenset()

    @classmethod
    def check_signature(cls, func: t.Callable[..., t.Any], template: URITemplate) -> None:
        """Every variable must be a parameter, every required parameter a variable."""
        params = inspect.signature(func).parameters
        takes_kwargs = any(p.kind is p.VAR_KEYWORD for p in params.values())
        missing = [v for v in template.variables if v not in params and not takes_kwargs]
        context = context_parameter(func)
        unfilled = [
            p.name
            for p in params.values()
            if p.name != context
            and p.default is p.empty
            and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
            and p.name not in template.variables
        ]
        if missing or unfilled:
            raise TypeError(
                f"resource template {template.template!r} does not fit {func.__name__}(): "
                f"variables without a parameter: {missing or 'none'}; "
                f"required parameters without a variable: {unfilled or 'none'}"
            )

    @functools.cached_property
    def descriptor(self) -> dict[str, t.Any]:
        """The ``ResourceTemplate`` object of ``resources/templates/list``."""
        return _descriptor(
            uriTemplate=self.template.template,
            name=self.name,
            title=self.title,
            description=self.description,
            mimeType=self.mime_type,
            annotations=self.annotations,
            icons=self.icons,
            _meta=self.meta,
        )

    def load_variables(self, variables: dict[str, str]) -> dict[str, t.Any]:
        """Convert the matched strings by the parameters' hints; raises ``ValidationError``."""
        return t.cast(dict[str, t.Any], self.variables_schema.load(variables))


@dataclasses.dataclass(eq=False)
class Prompt:
    """A registered prompt. Built by :meth:`flask_mcp.MCP.prompt`."""

    func: t.Callable[..., t.Any]
    name: str
    arguments_schema: ma.Schema
    completers: dict[str, Completer] = dataclasses.field(default_factory=dict)
    title: str | None = None
    description: str | None = None
    icons: list[dict[str, t.Any]] | None = None
    meta: dict[str, t.Any] | None = None
    #: The parameter that receives a :class:`~flask_mcp.Context`, if any.
    context_param: str | None = None
    #: Who may use it: ``None`` takes the server's ``default_permissions``, ``()`` is public.
    permissions: tuple[Permission, ...] | None = None
    #: Listed even to callers its permissions deny (``MCP_FILTER_LISTINGS_BY_PERMISSIONS``).
    always_listed: bool = False
    #: ``ttlMs`` of this component's modern results, when it sets its own (``cache_ttl=``).
    cache_ttl_ms: int | None = None
    #: ``"private"`` when this component's results depend on the caller (``cache_scope=``).
    cache_scope: str | None = None
    #: Labels for ``MCP(include_tags=..., exclude_tags=...)``, also in ``_meta`` (``tags=``).
    tags: frozenset[str] = frozenset()

    @functools.cached_property
    def descriptor(self) -> dict[str, t.Any]:
        """The ``Prompt`` object of ``prompts/list``; arguments come from the schema."""
        arguments = [
            _descriptor(name=name, description=field.metadata.get("description"), required=field.required)
            for name, field in self.arguments_schema.fields.items()
            if not field.dump_only
        ]
        return _descriptor(
            name=self.name,
            title=self.title,
            description=self.description,
            arguments=arguments,
            icons=self.icons,
            _meta=self.meta,
        )

    def load_arguments(self, arguments: dict[str, str]) -> dict[str, t.Any]:
        """Convert the string arguments by the hints; raises ``ValidationError``."""
        return t.cast(dict[str, t.Any], self.arguments_schema.load(arguments))
