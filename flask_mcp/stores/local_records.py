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

What a reader works out from a value alone can be kept the same way
(:meth:`LocalRecords.view`): the session check keeps a record's owner and
the time until which it needs no more than a look at the clock.
"""

from __future__ import annotations

import typing as t

from cachelib import simple

from .simple_entries import has_table, live_entry

__all__ = ["LocalRecords", "local_records_for"]

V = t.TypeVar("V")

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
        self._views: dict[str, tuple[tuple[float, bytes], t.Callable[[t.Any], t.Any], t.Any]] = {}

    def read(self, key: str) -> t.Any:
        """The value under *key*, as the backend's ``get`` answers it; shared: never change it."""
        entry = live_entry(self._entries, key)
        return None if entry is None else self._value(key, entry)

    def _value(self, key: str, entry: tuple[float, bytes]) -> t.Any:
        # The value *entry* holds, decoded the first time it is asked for.
        decoded = self._decoded.get(key)
        if decoded is not None and decoded[0] is entry:
            return decoded[1]
        value = self._loads(entry[1])
        if len(self._decoded) >= self.kept:
            self._decoded.clear()
        self._decoded[key] = (entry, value)
        return value

    def view(self, key: str, derive: t.Callable[[t.Any], V]) -> V | None:
        """``derive(value)`` of the value under *key*, worked out once per write of it; ``None`` without one.

        *derive* must depend on the value alone (and be the same object from
        call to call: a bound method made once, not looked up each time).
        """
        entry = live_entry(self._entries, key)
        if entry is None:
            return None
        kept = self._views.get(key)
        if kept is not None and kept[0] is entry and kept[1] is derive:
            return kept[2]  # type: ignore[no-any-return]
        derived = derive(self._value(key, entry))
        if len(self._views) >= self.kept:
            self._views.clear()
        # Kept with the entry it was read from, which a later write replaces: the view goes with it.
        self._views[key] = (entry, derive, derived)
        return derived


def local_records_for(backend: t.Any) -> LocalRecords | None:
    """A :class:`LocalRecords` for *backend* when it is a cachelib SimpleCache; ``None`` otherwise."""
    if has_table(backend):
        return LocalRecords(backend)
    return None
