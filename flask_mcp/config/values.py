"""Reading and checking the values of ``MCP_*`` keys: numbers, durations, lists.

Each function takes the app's config and a key, and returns the value in the
form the settings keep, or raises ``ValueError`` naming the key and what it
must be.
"""

from __future__ import annotations

import datetime
import math
import typing as t

__all__ = [
    "as_tuple",
    "fraction",
    "milliseconds",
    "optional_count",
    "optional_number",
    "optional_positive",
    "positive",
    "positive_number",
    "scope",
]


def optional_positive(config: t.Mapping[str, t.Any], key: str) -> int | None:
    """``config[key]``: a positive integer, or ``None``."""
    value = config[key]
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{key} must be a positive integer or None, not {value!r}")
    return value


def optional_count(config: t.Mapping[str, t.Any], key: str) -> int | None:
    """``config[key]``: a whole number, 0 or more, or ``None``."""
    value = config[key]
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{key} must be a whole number (0 or more) or None, not {value!r}")
    return value


def positive(config: t.Mapping[str, t.Any], key: str) -> int:
    """``config[key]``: a positive integer."""
    return _present(optional_positive(config, key), key, "a positive integer")


def fraction(config: t.Mapping[str, t.Any], key: str) -> float:
    """``config[key]``: a number in (0, 1]."""
    value = config[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise ValueError(f"{key} must be a number in (0, 1], not {value!r}")
    return float(value)


def optional_number(config: t.Mapping[str, t.Any], key: str) -> float | None:
    """``config[key]``: a positive finite number, or ``None`` (where ``None`` is allowed, it is the no-bound value).

    Infinity and NaN are refused: a wait of infinite seconds overflows the platform's clock (a
    thread waiting on it would die), and NaN compares with nothing.
    """
    value = config[key]
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
        raise ValueError(f"{key} must be a positive number or None, not {value!r}")
    return value


def positive_number(config: t.Mapping[str, t.Any], key: str) -> float:
    """``config[key]``: a positive number."""
    return _present(optional_number(config, key), key, "a positive number")


_T = t.TypeVar("_T")


def _present(value: _T | None, key: str, what: str) -> _T:
    if value is None:
        raise ValueError(f"{key} must be {what}")
    return value


def milliseconds(config: t.Mapping[str, t.Any], key: str) -> int:
    """``config[key]``, seconds (>= 0) or a ``timedelta``, in whole milliseconds."""
    value = config[key]
    if isinstance(value, datetime.timedelta):
        value = value.total_seconds()
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError(f"{key} must be a number of seconds (>= 0) or a timedelta, not {value!r}")
    return round(value * 1000)


def scope(value: t.Any) -> t.Literal["public", "private"] | None:
    """``MCP_CLIENT_CACHE_SCOPE``: ``"public"``, ``"private"`` or ``None``."""
    if value not in (None, "public", "private"):
        raise ValueError(f'MCP_CLIENT_CACHE_SCOPE must be "public", "private" or None, not {value!r}')
    return t.cast('t.Literal["public", "private"] | None', value)


def as_tuple(value: str | t.Iterable[str]) -> tuple[str, ...]:
    """A list of names: a sequence, or one comma-separated string."""
    # A single string is one entry; config files often give "a,b" too.
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    return tuple(value)
