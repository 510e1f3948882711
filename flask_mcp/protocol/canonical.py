"""Arguments in canonical form, and their digest: the same arguments in any order are the same call.

What a kept result is keyed by, a ``requestState`` and an approval are bound
to, and an audit row records.
"""

from __future__ import annotations

import hashlib
import json
import typing as t

__all__ = ["arguments_digest", "canonical"]

#: The standard library's encoder, keys sorted at every depth: the same bytes in every process (made
#: once: building one for each call would cost more than the encoding).
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _not_json(value: t.Any) -> t.Any:
    raise TypeError(f"{type(value).__name__} is not JSON")


def _one_encoder() -> t.Callable[[t.Any], str]:
    """:data:`_ENCODER`'s ``encode``, or the C encoder it builds for every call, built once.

    ``JSONEncoder.encode`` makes a new C encoder (and a dictionary of what it
    has seen, against cycles) each time, half of what a small call's digest
    costs. Arguments are decoded JSON, which holds no cycles, so the one kept
    here keeps no such dictionary (and shares no state between threads); a
    cycle would still fail, with :class:`RecursionError`, as it does through
    :func:`canonical`.
    """
    # None where the standard library has no C speedups (typeshed does not know the name).
    make: t.Any = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return _ENCODER.encode
    encoder = make(None, _not_json, json.encoder.encode_basestring, None, ":", ",", True, False, False)

    def encode(value: t.Any) -> str:
        return "".join(encoder(value, 0))

    return encode


_encode = _one_encoder()


def canonical(value: t.Any) -> t.Any:
    """*value* with every object's keys sorted (as strings), at every depth."""
    if isinstance(value, dict):
        return {str(key): canonical(value[key]) for key in sorted(value, key=str)}
    if isinstance(value, list):
        return [canonical(item) for item in value]
    return value


def arguments_digest(arguments: t.Mapping[str, t.Any]) -> str:
    """The SHA-256 (hex) of *arguments* as canonical JSON.

    Values JSON cannot carry are digested by their ``repr`` rather than refused:
    any call the server was sent has a digest.
    """
    try:
        text = _encode(arguments)
    except (TypeError, ValueError):
        text = repr(canonical(dict(arguments)))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
