"""Strict decoding of the JSON a client sends, with a bounded structure.

Python's :func:`json.loads` is lenient where a protocol must not be:

* it guesses UTF-16 and UTF-32 from the first bytes and lets UTF-8-encoded
  surrogates through; here input is UTF-8 and nothing else;
* it reads ``NaN`` and ``Infinity``, and turns ``1e999`` into ``inf``, none
  of which JSON can carry back; here numbers are finite;
* it keeps the last of duplicate keys, so two readers of one message can
  disagree about its ``id`` or ``method``; here a duplicate key is an error;
* it decodes objects with any number of members nested to any depth; here
  both are bounded by :class:`JSONLimits`.

Integers keep Python's own bound (``sys.get_int_max_str_digits()``, 4300
digits by default): a longer one is refused as invalid JSON, like the rest.

The checks cost little on ordinary messages: one decoder per limit is built
once, duplicate keys and member counts are checked as each object is built,
and the decoded value is only walked for its depth (or its strings) when the
text has more brackets (or characters) than the limit allows.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import typing as t

from . import fast_json

__all__ = ["DEFAULT_LIMITS", "InvalidJSON", "JSONLimitExceeded", "JSONLimits", "decode"]


@dataclasses.dataclass(frozen=True)
class JSONLimits:
    """Bounds of the structure of one decoded JSON text.

    :param max_keys: members of one object.
    :param max_depth: objects and arrays nested in each other (``{}`` is 1).
    :param max_string: characters of one string, keys included; ``None``
        leaves strings bounded by the size of the text alone.
    """

    max_keys: int = 10_000
    max_depth: int = 64
    max_string: int | None = None


#: What :func:`decode` applies unless told otherwise.
DEFAULT_LIMITS = JSONLimits()


class InvalidJSON(ValueError):
    """The text is not strict UTF-8 JSON: a parse error."""


class JSONLimitExceeded(ValueError):
    """Valid JSON whose structure is larger than the limits allow."""


def _shown(text: str, limit: int = 40) -> str:
    # Error messages name the offending text, never all of it.
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _reject_constant(name: str) -> t.NoReturn:
    # json accepts NaN, Infinity and -Infinity by default; JSON does not.
    raise InvalidJSON(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise InvalidJSON(f"the number {_shown(text)} is out of range: JSON numbers must be finite")
    return value


def _duplicate(pairs: list[tuple[str, t.Any]]) -> str:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            return key
        seen.add(key)
    raise AssertionError("no duplicate key")  # pragma: no cover - only called when there is one


@functools.lru_cache(maxsize=8)
def _decoder(max_keys: int) -> json.JSONDecoder:
    """The decoder enforcing *max_keys*; built once per value, as building one per call costs more than decoding."""

    def unique_object(pairs: list[tuple[str, t.Any]]) -> dict[str, t.Any]:
        if len(pairs) > max_keys:
            raise JSONLimitExceeded(f"an object has {len(pairs)} members, more than the limit of {max_keys}")
        obj = dict(pairs)
        if len(obj) != len(pairs):
            raise InvalidJSON(f"duplicate key {_shown(_duplicate(pairs))} in an object")
        return obj

    return json.JSONDecoder(object_pairs_hook=unique_object, parse_float=_finite_float, parse_constant=_reject_constant)


def decode(data: bytes | bytearray | str, limits: JSONLimits = DEFAULT_LIMITS) -> t.Any:
    """Decode one JSON text strictly (see the module docstring).

    :raises InvalidJSON: not UTF-8, not JSON, a non-finite number, an integer
        of too many digits, a duplicate key, or nesting too deep for the
        decoder to recurse into (about a thousand levels).
    :raises JSONLimitExceeded: an object with more than ``max_keys`` members,
        nesting deeper than ``max_depth`` or a string longer than ``max_string``.
    """
    if isinstance(data, (bytes, bytearray)):
        value = fast_json.decode(data, limits.max_keys)
        if value is not fast_json.UNDECIDED:
            # orjson's answer is the one the decoder below would give (:mod:`.fast_json`): only the bounds
            # are left, and a text with no more brackets than levels allowed, no longer than a string may
            # be, is within them (as _check_bounds finds first).
            max_string = limits.max_string
            if data.count(b"{") + data.count(b"[") > limits.max_depth or (
                max_string is not None and len(data) > max_string
            ):
                _check_bounds(data, value, limits)
            return value
        try:
            # The strict codec: no byte order guessing, no encoded surrogates.
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidJSON(f"the text is not UTF-8: {exc}") from None
    else:
        text = data
    try:
        value = _decoder(limits.max_keys).decode(text)
    except (InvalidJSON, JSONLimitExceeded):
        raise
    except RecursionError:
        # The decoder recurses per level: text nested this deep cannot even be
        # decoded (nor told valid), so it is a parse error, not a limit exceeded.
        raise InvalidJSON(f"nesting is too deep to decode (the limit is {limits.max_depth})") from None
    except ValueError as exc:  # JSONDecodeError, and int() refusing too many digits
        raise InvalidJSON(str(exc)) from None
    _check_bounds(data, value, limits)
    return value


def _check_bounds(data: bytes | bytearray | str, value: t.Any, limits: JSONLimits) -> None:
    """Raise :class:`JSONLimitExceeded` when *value*, decoded from *data*, nests too deep or has too long a string."""
    # Each level needs one bracket: with no more brackets than the limit, nothing more to check.
    brackets = data.count("{") + data.count("[") if isinstance(data, str) else data.count(b"{") + data.count(b"[")
    if brackets > limits.max_depth:
        raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
        deeper = _text_deeper_than(bytes(raw), limits.max_depth)
        if deeper or (deeper is None and _deeper_than(value, limits.max_depth)):
            raise JSONLimitExceeded(f"nesting is deeper than the limit of {limits.max_depth}")
    # Likewise no string is longer than the whole text (in characters, at most its bytes).
    if limits.max_string is not None and len(data) > limits.max_string:
        _check_strings(value, limits.max_string)


# Everything but quotes and brackets, and objects' brackets made arrays' (only depth counts).
_NOT_STRUCTURE = bytes(sorted(set(range(256)) - set(b'"[]{}')))
_AS_ARRAYS = bytes.maketrans(b"{}", b"[]")


def _text_deeper_than(raw: bytes, max_depth: int) -> bool | None:
    """Whether valid JSON text *raw* nests deeper than *max_depth*; ``None`` when a string holds brackets.

    Works on the bytes, at the speed of :meth:`bytes.replace`: the brackets
    outside strings are kept, and each pass takes out the innermost pairs,
    one level of nesting.
    """
    if b"\\" in raw:
        # Escaped quotes (and the backslashes that could precede them) would pass for delimiters.
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    kept = raw.translate(_AS_ARRAYS, _NOT_STRUCTURE)
    quotes = kept.count(b'"')
    if kept.count(b'""') * 2 != quotes:
        return None  # the quotes do not all pair up adjacent: some string holds a bracket
    brackets = kept.replace(b'"', b"") if quotes else kept
    for _ in range(max_depth):
        if not brackets:
            return False
        brackets = brackets.replace(b"[]", b"")
    return bool(brackets)


def _deeper_than(value: t.Any, max_depth: int) -> bool:
    """Whether *value* nests more than *max_depth* objects and arrays, level by level, without recursion."""
    level = [value] if isinstance(value, (dict, list)) else []
    depth = 0
    while level:
        depth += 1
        if depth > max_depth:
            return True
        below: list[t.Any] = []
        for item in level:
            # Exact types: the decoder builds nothing else.
            below += [c for c in (item.values() if type(item) is dict else item) if type(c) is dict or type(c) is list]
        level = below
    return False


def _check_strings(value: t.Any, max_string: int) -> None:
    """Raise when a string of *value*, or a key, is longer than *max_string* characters."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if len(item) > max_string:
                raise JSONLimitExceeded(f"a string has {len(item)} characters, more than the limit of {max_string}")
        elif isinstance(item, dict):
            pending += item
            pending += item.values()
        elif isinstance(item, list):
            pending += item
