"""The named choices a tool's registration makes, as string enums.

Every option accepts its value as a plain string (``"bundle"``) as well as
the enum member (``ArgumentBinding.BUNDLE``); :func:`coerce` turns either
into the member and names the allowed values when a string is wrong.
"""

from __future__ import annotations

import enum
import typing as t

__all__ = [
    "ArgumentBinding",
    "ErrorFormat",
    "KwargsPrecedence",
    "OutputFormat",
    "UnknownArguments",
    "coerce",
]

E = t.TypeVar("E", bound=enum.Enum)


class ArgumentBinding(enum.StrEnum):
    """How validated arguments reach the tool function."""

    #: Each validated argument becomes a keyword argument (the default).
    SPREAD = "spread"
    #: The validated dict arrives whole as ``data=`` (service style).
    BUNDLE = "bundle"


class KwargsPrecedence(enum.StrEnum):
    """Who wins when a ``kwargs`` provider and the caller name the same argument."""

    #: The provider's value wins: author-side invariants beat client input (the default).
    PROVIDER = "provider"
    #: The caller's value wins: the provider only supplies defaults.
    CALLER = "caller"


class UnknownArguments(enum.StrEnum):
    """What happens to argument names the input schema does not declare."""

    #: Refused (``additionalProperties: false``); the error lists them (the default).
    REJECT = "reject"
    #: Kept and merged into the validated data (``additionalProperties: true``).
    PASSTHROUGH = "passthrough"
    #: Dropped silently (``additionalProperties: true``).
    IGNORE = "ignore"


class OutputFormat(enum.StrEnum):
    """How a structured result is written in the text block of a tool result."""

    #: JSON (the default).
    JSON = "json"
    #: TOON, in a fenced ``toon`` block after a ``# format: toon`` line.
    TOON = "toon"
    #: TOON for a non-empty list of objects that share their keys, JSON otherwise.
    AUTO = "auto"


class ErrorFormat(enum.StrEnum):
    """How a failed tool call is worded in its ``isError`` result."""

    #: ``Error executing tool: <message>`` (the default).
    TEXT = "text"
    #: ``{"error": {"type": ..., "message": ..., "detail": ...}}`` as the text.
    JSON = "json"
    #: ``{"error": "<message>"}`` as the text.
    PLAIN = "plain"


def coerce(kind: type[E], value: E | str, option: str) -> E:
    """Return the member of *kind* for *value*, a member or its string value.

    :raises ValueError: naming *option* and the allowed values.
    """
    if isinstance(value, kind):
        return value
    try:
        return kind(value)
    except ValueError:
        allowed = ", ".join(repr(member.value) for member in kind)
        raise ValueError(f"{option} must be one of {allowed}, not {value!r}") from None
