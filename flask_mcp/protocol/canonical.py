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
        text = _ENCODER.encode(arguments)
    except (TypeError, ValueError):
        text = repr(canonical(dict(arguments)))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
