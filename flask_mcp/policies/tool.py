"""What a tool's registration decides about its calls, and the server-wide defaults.

A :class:`ToolPolicy` holds a tool's own choices, ``None`` meaning "inherit
the server's". :class:`ToolDefaults` holds the server's (the ``MCP_*``
keys). :meth:`ToolPolicy.resolve` merges both once per tool into a
:class:`ResolvedPolicy` that the call path reads without any lookups.
"""

from __future__ import annotations

import dataclasses
import typing as t

from .options import ErrorFormat, KwargsPrecedence, OutputFormat, UnknownArguments, coerce

__all__ = ["ConfigurationError", "ResolvedPolicy", "ToolDefaults", "ToolPolicy"]

#: ``f(context) -> dict`` of extra keyword arguments for a tool call.
KwargsProvider = t.Callable[[t.Any], t.Mapping[str, t.Any]]


class ConfigurationError(ValueError):
    """A combination of settings the MCP specification does not allow.

    Raised at registration for a tool's own options, and when the app is
    set up (or a tool is first used) for a conflict with the server-wide
    settings, so a misconfiguration never reaches a client.
    """


@dataclasses.dataclass(frozen=True)
class ToolDefaults:
    """The server-wide defaults of tool calls (``MCP_*`` keys)."""

    output_format: OutputFormat = OutputFormat.JSON
    include_structured_content: bool = True
    include_output_schema: bool = True
    timeout: float | None = None
    max_result_bytes: int | None = None
    error_format: ErrorFormat = ErrorFormat.TEXT
    include_validation_value: bool = False
    #: Seconds a spilled result stays readable.
    spill_ttl: int = 3600
    #: Ask the human before every tool annotated ``destructiveHint: true`` (``MCP_CONFIRM_DESTRUCTIVE``).
    confirm_destructive: bool = False

    def __post_init__(self) -> None:
        if self.include_output_schema and not self.include_structured_content:
            raise ConfigurationError(
                "MCP_INCLUDE_OUTPUT_SCHEMA = True with MCP_INCLUDE_STRUCTURED_CONTENT = False would advertise "
                "output schemas and then send no structuredContent, which the MCP specification forbids; "
                "set MCP_INCLUDE_OUTPUT_SCHEMA = False too"
            )


@dataclasses.dataclass(frozen=True)
class ResolvedPolicy:
    """A tool's policy with every default filled in."""

    output_format: OutputFormat
    include_structured_content: bool
    include_output_schema: bool
    timeout: float | None
    max_result_bytes: int | None
    spill_to_resource: bool
    error_format: ErrorFormat
    include_validation_value: bool
    spill_ttl: int


def _positive(value: float | None, option: str) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0):
        raise ValueError(f"{option} must be a positive number or None, not {value!r}")


@dataclasses.dataclass(frozen=True)
class ToolPolicy:
    """A tool's own choices; ``None`` inherits the server's default."""

    kwargs: KwargsProvider | None = None
    kwargs_precedence: KwargsPrecedence = KwargsPrecedence.PROVIDER
    #: ``None``: as the input schema says (marshmallow ``unknown``, or the raw JSON Schema).
    unknown_arguments: UnknownArguments | None = None
    output_format: OutputFormat | None = None
    include_structured_content: bool | None = None
    include_output_schema: bool | None = None
    timeout: float | None = None
    max_result_bytes: int | None = None
    spill_to_resource: bool = False
    error_format: ErrorFormat | None = None
    atomic: bool = False

    @classmethod
    def from_options(cls, options: t.Mapping[str, t.Any], tool: str) -> ToolPolicy:
        """Build from the decorator's keywords, accepting strings for the enums.

        :raises ValueError: a value of the wrong kind, naming the option.
        :raises ConfigurationError: options that contradict each other.
        """

        def choice(kind: type[t.Any], option: str) -> t.Any:
            value = options.get(option)
            return None if value is None else coerce(kind, value, option)

        provider = options.get("kwargs")
        if provider is not None and not callable(provider):
            raise TypeError(f"tool {tool!r}: kwargs must be a callable returning a dict, not {provider!r}")
        _positive(options.get("timeout"), "timeout")
        _positive(options.get("max_result_bytes"), "max_result_bytes")
        policy = cls(
            kwargs=provider,
            kwargs_precedence=choice(KwargsPrecedence, "kwargs_precedence") or KwargsPrecedence.PROVIDER,
            unknown_arguments=choice(UnknownArguments, "unknown_arguments"),
            output_format=choice(OutputFormat, "output_format"),
            include_structured_content=options.get("include_structured_content"),
            include_output_schema=options.get("include_output_schema"),
            timeout=options.get("timeout"),
            max_result_bytes=options.get("max_result_bytes"),
            spill_to_resource=bool(options.get("spill_to_resource", False)),
            error_format=choice(ErrorFormat, "error_format"),
            atomic=bool(options.get("atomic", False)),
        )
        if policy.include_output_schema is True and policy.include_structured_content is False:
            raise ConfigurationError(
                f"tool {tool!r}: include_output_schema=True with include_structured_content=False would "
                "advertise an outputSchema and send no structuredContent, which the MCP specification forbids"
            )
        if policy.include_output_schema is True and policy.spill_to_resource:
            raise ConfigurationError(
                f"tool {tool!r}: a result spilled to a resource carries no structuredContent, so the tool "
                "cannot advertise an outputSchema; pass include_output_schema=False"
            )
        return policy

    def resolve(self, defaults: ToolDefaults, tool: str, has_output_schema: bool) -> ResolvedPolicy:
        """Fill in the server's defaults.

        :raises ConfigurationError: when the merged choices would advertise an
            ``outputSchema`` for results that may lack ``structuredContent``.
        """
        structured = _pick(self.include_structured_content, defaults.include_structured_content)
        advertise = _pick(self.include_output_schema, defaults.include_output_schema)
        if has_output_schema and advertise and (not structured or self.spill_to_resource):
            why = "spills oversized results to a resource" if structured else "sends no structuredContent"
            raise ConfigurationError(
                f"tool {tool!r} {why} but would advertise its outputSchema (MCP_INCLUDE_OUTPUT_SCHEMA is on); "
                "pass include_output_schema=False to the tool"
            )
        return ResolvedPolicy(
            output_format=_pick(self.output_format, defaults.output_format),
            include_structured_content=structured,
            include_output_schema=advertise,
            timeout=_pick(self.timeout, defaults.timeout),
            max_result_bytes=_pick(self.max_result_bytes, defaults.max_result_bytes),
            spill_to_resource=self.spill_to_resource,
            error_format=_pick(self.error_format, defaults.error_format),
            include_validation_value=defaults.include_validation_value,
            spill_ttl=defaults.spill_ttl,
        )


V = t.TypeVar("V")


def _pick(own: V | None, default: V) -> V:
    return default if own is None else own
