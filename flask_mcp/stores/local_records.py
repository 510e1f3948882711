"""Session records of a store in this process's memory, decoded once per write.

cachelib's SimpleCache keeps every value pickled, so that each reader gets a
copy of its own. A request in a handshake session reads its session's record
only to look at it (whose it is, how old); unpickling the same bytes as the
request before, under the cache's lock, cost about as much as the rest of
the session check together.

SimpleCache keeps a key's entry as one tuple (its expiry, the pickled value)
that every write replaces whole. While the tuple under a key is the same
object, the record decoded from it last time is still the record: there is
nothing to decode again. :class:`LocalRecords` keeps that one decoded value
per key beside the tuple it came from; it never answers from anything but
the tuple in the cache now, so a write, a delete, an eviction or an expiry
is seen by the very next read, as with ``get``.

The value it answers is shared with the next readers of the same entry:
only the reads that change nothing of it take it (the session check of
:meth:`SessionStore.check <flask_mcp.stores.sessions.SessionStore.check>`);
whatever builds on a record reads its own copy through the cache.
"""

from __future__ import annotations

import typing as t

from cachelib import simple

__all__ = ["LocalRecords", "local_records_for"]

#: The most keys whose decoded value is kept (all are forgotten past it).
KEPT = 4096


class LocalRecords:
    """Reads of a SimpleCache that decode each written value once (see the module).

    :param backend: a cachelib :class:`~cachelib.simple.SimpleCache` (flask-caching's included).
    :param kept: the most keys whose decoded value is kept.
    """

    def __init__(self, backend: simple.SimpleCache, kept: int = KEPT) -> None:
        # cachelib's own table of entries, (expires, pickled value) per key: read, never written.
        self._entries: dict[str, tuple[float, bytes]] = backend._cache
        self._loads = backend.serializer.loads
        self.kept = kept
        self._decoded: dict[str, tuple[tuple[float, bytes], t.Any]] = {}

    def read(self, key: str) -> t.Any:
        """The value under *key*, as the backend's ``get`` answers it; shared: never change it."""
        # One dictionary lookup is a single step for the interpreter: no lock needed to read.
        entry = self._entries.get(key)
        if entry is None:
            return None
        expires = entry[0]
        # cachelib's own rule and clock (looked up at each call: tests replace it).
        if expires != 0 and expires <= simple.time():  # type: ignore[attr-defined]
            return None
        decoded = self._decoded.get(key)
        if decoded is not None and decoded[0] is entry:
            return decoded[1]
        value = self._loads(entry[1])
        if len(self._decoded) >= self.kept:
            self._decoded.clear()
        self._decoded[key] = (entry, value)
        return value


def local_records_for(backend: t.Any) -> LocalRecords | None:
    """A :class:`LocalRecords` for *backend* when it is a cachelib SimpleCache; ``None`` otherwise."""
    if isinstance(backend, simple.SimpleCache) and type(getattr(backend, "_cache", None)) is dict:
        return LocalRecords(backend)
    return None
