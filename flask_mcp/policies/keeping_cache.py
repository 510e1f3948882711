"""A process-local cache that never evicts a live entry to make room.

cachelib's ``SimpleCache``, past its ``threshold``, drops the expired
entries and then live ones, soonest to expire first: whoever writes the
most decides what everybody else loses. In the cache that holds rate-limit
counters and ``ctx.state`` that is an attack (a flood of anything brings
other callers' budgets back), so the caches flask_mcp builds in process
memory use :class:`KeepingSimpleCache` instead: past its threshold it only
sweeps expired entries (at most once a second). What keeps it bounded is
that every write a client can cause is refused before the threshold is
reached (:mod:`flask_mcp.stores.quota`).
"""

from __future__ import annotations

import time
import typing as t

from cachelib import SimpleCache

__all__ = ["KeepingSimpleCache", "sweep_expired"]

#: Seconds between two sweeps of a cache past its threshold: a sweep reads every entry.
SWEEP_INTERVAL = 1.0


def sweep_expired(backend: t.Any, now: float | None = None) -> None:
    """Drop the expired entries of *backend*, a cachelib ``SimpleCache``, and only those.

    cachelib's own ``_remove_expired`` also drops the entries stored without
    a timeout (their expiry is 0), which are meant to live until deleted.
    """
    now = time.time() if now is None else now
    with backend._lock:
        expired = [key for key, (expires, _) in backend._cache.items() if expires != 0 and expires < now]
        for key in expired:
            backend._cache.pop(key, None)


class KeepingSimpleCache(SimpleCache):
    """A cachelib ``SimpleCache`` that, past its threshold, drops expired entries and never a live one."""

    #: When the last sweep ran (``time.time()``); a class default, since subclasses may skip ``__init__``.
    _swept: float = 0.0

    def _prune(self) -> None:
        if len(self._cache) <= self._threshold:
            return
        now = time.time()
        if now - self._swept < SWEEP_INTERVAL:
            return
        self._swept = now
        sweep_expired(self, now)

    def inc(self, key: str, delta: int = 1) -> int | None:
        """Add *delta* to the integer under *key*, keeping its expiry (a missing key starts from 0).

        cachelib rewrites the key with the default timeout instead, which
        would make a rate-limit counter outlive its window, or never expire.
        """
        with self._lock:
            entry = self._cache.get(key)
            value = self.get(key)
            if entry is None or not isinstance(value, int) or isinstance(value, bool):
                return super().inc(key, delta)
            value += delta
            self._cache[key] = (entry[0], self.serializer.dumps(value))
            return value

    def dec(self, key: str, delta: int = 1) -> int | None:
        """Subtract *delta*, as :meth:`inc` adds it."""
        return self.inc(key, -delta)
