"""orjson on the hot path, answering exactly what the standard library would, or not at all.

orjson decodes and encodes JSON several times faster than :mod:`json`, but
not by the same rules. Each function here answers only when its answer is
provably the one the strict standard-library path
(:mod:`flask_mcp.protocol.strict_json`, :func:`flask_mcp.protocol.jsonrpc.dumps`)
would give; otherwise it returns ``None`` (or :data:`UNDECIDED`) and that
path decides, and words any error. Without orjson (it is not installed, or
the interpreter has no wheel for it) everything goes the standard way.

Decoding. orjson refuses ``NaN``, ``Infinity``, numbers out of range,
invalid UTF-8 (encoded surrogates included), a byte order mark and nesting
past 1,024 levels, as the strict decoder does. It differs in three ways,
each ruled out before its answer is used:

* an integer outside 64 bits becomes a float: a text with 19 digits in a
  row (every such integer has them) is left to the standard path;
* it keeps the last of duplicate keys: a decoded value whose re-encoding
  has fewer ``:`` than the text had, lost a member (each member has one
  ``:`` of its own, and a text without ``\\u`` escapes can put a ``:`` in a
  string only literally, where the re-encoding keeps it);
* it knows no member limit: a text with more ``:`` than the limit allows
  members could hold an object that large, and is left to the standard path.

Encoding. orjson writes ``NaN`` and infinities as ``null``, and small floats
otherwise (``0.00001`` and ``1e-7`` for Python's ``1e-05`` and ``1e-07``):
an output with ``null``, ``0.0000`` or a one-digit negative exponent is made
again by the standard encoder, which refuses the non-finite numbers.
Integers past 64 bits, keys that are not strings and lone surrogates make
orjson raise, and the standard encoder takes over too. Dates, times and
dataclasses are passed to the same ``default`` as the standard encoder's.
"""

from __future__ import annotations

import re
import typing as t

try:
    import orjson
except ImportError:  # pragma: no cover - the interpreter has no orjson wheel
    orjson = None  # type: ignore[assignment]

__all__ = ["AVAILABLE", "UNDECIDED", "decode", "encode"]

#: Whether orjson is there to be used.
AVAILABLE = orjson is not None
#: What :func:`decode` answers when the strict decoder must decide.
UNDECIDED: t.Any = object()

# Digits made "0", everything else a space: an integer orjson would turn into a float shows as 19 zeros.
_DIGITS_ONLY = bytes(48 if 48 <= byte <= 57 else 32 for byte in range(256))
_LONG_NUMBER = b"0" * 19
# Python writes an exponent with two digits at least; orjson "e-7" for "e-07".
_SHORT_EXPONENT = re.compile(rb"[0-9]e-[0-9](?![0-9])")
_OPTIONS = (orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS) if orjson is not None else 0


def decode(data: bytes | bytearray, max_keys: int) -> t.Any:
    """*data* decoded by orjson, or :data:`UNDECIDED` when the strict decoder must decide (see the module)."""
    # find(), not "in": a bytes "in" first tries its operand as an integer, raising and
    # clearing a TypeError, which costs twice the search itself.
    if orjson is None or data.find(b"\\u") >= 0:
        return UNDECIDED
    colons = data.count(b":")
    if colons > max_keys or data.translate(_DIGITS_ONLY).find(_LONG_NUMBER) >= 0:
        return UNDECIDED
    try:
        value = orjson.loads(data)
    except Exception:  # invalid, or too deep for orjson: the strict decoder words why
        return UNDECIDED
    try:
        written = orjson.dumps(value)
    except Exception:  # deeper than orjson writes (it reads deeper than it writes): the strict decoder decides
        return UNDECIDED
    if written.count(b":") != colons:
        return UNDECIDED  # a duplicate key (the strict decoder names it)
    return value


def encode(value: t.Any, default: t.Callable[[t.Any], t.Any]) -> bytes | None:
    """*value* as compact UTF-8 JSON, byte for byte what the standard encoder writes; ``None`` when it must write it."""
    if orjson is None:
        return None
    try:
        out = orjson.dumps(value, default=default, option=_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError: a big integer, a lone surrogate, a key that is not a string
        return None
    if out.find(b"null") >= 0 or out.find(b"0.0000") >= 0 or (out.find(b"e-") >= 0 and _SHORT_EXPONENT.search(out)):
        return None
    return out
