"""A cachelib SimpleCache's own table of entries, read (and written) as the cache itself does.

The stores that skip the cache's calls on the hot path
(:mod:`~flask_mcp.stores.local_records`, :mod:`~flask_mcp.stores.local_markers`)
reach the table here: which backends have one, and which of its entries are live.
"""

from __future__ import annotations

import typing as t

from cachelib import simple

__all__ = ["Entry", "has_table", "live_entry"]

#: An entry of the table: when it expires (0: never), and the value pickled.
Entry = tuple[float, t.Any]


def has_table(backend: t.Any) -> bool:
    """Whether *backend* is a cachelib :class:`~cachelib.simple.SimpleCache` (flask-caching's included)
    keeping its entries in a plain dict, the table these stores read."""
    return isinstance(backend, simple.SimpleCache) and type(getattr(backend, "_cache", None)) is dict


def live_entry(entries: dict[str, Entry], key: str) -> Entry | None:
    """The entry under *key* unless it is missing or expired, by cachelib's own rule and clock.

    One dictionary lookup is a single step for the interpreter: no lock is needed to read.
    """
    entry = entries.get(key)
    if entry is None:
        return None
    expires = entry[0]
    # cachelib's clock, looked up at each call: tests replace it.
    if expires != 0 and expires <= simple.time():  # type: ignore[attr-defined]
        return None
    return entry
