"""A process-local cache that never evicts a live entry to make room.

cachelib's ``SimpleCache``, past its ``threshold``, drops the expired
entries and then live ones, soonest to expire first: whoever writes the
most decides what everybody else loses. In the cache that holds rate-limit
counters and ``ctx.state`` that is an attack (a flood of anything brings
other callers' budgets back), so the caches flask_mcp builds in process
memory use :class:`KeepingSimpleCache` instead: past its threshold it only
sweeps expired entries (at most once a second). What keeps it bounded is
that every write a client can cause is refused before the threshold is
reached (:mod:`flask_mcp.stores.quota`). A sweep reads the keys that
expired, found by the second they expire in, not every entry: a cache
holding hundreds of thousands of short-lived entries sweeps in time
proportional to what it drops, a few keys a write. Each key is noted once,
under the earliest second it may expire in (a key that lives on is noted
again when that second is swept, one deleted is forgotten, one expired
below the threshold waits for the next sweep past it), so the notes never
outnumber the keys.
"""

from __future__ import annotations

import time
import typing as t

from cachelib import SimpleCache

__all__ = ["KeepingSimpleCache", "sweep_expired"]

#: Seconds between two sweeps of a cache past its threshold.
SWEEP_INTERVAL = 1.0
#: Expired keys a write looks at, at most, while a sweep is under way: a sweep is spread over
#: the writes that follow, so that none waits for all of it.
SWEEP_STEP = 256


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

    # Class defaults, since subclasses may skip ``__init__``.
    #: When the last sweep began (``time.time()``).
    _swept: float = 0.0
    #: Keys by the second they may expire in.
    _expiring: dict[int, list[str]] | None = None
    #: The second each noted key is noted under (the earliest it may expire in).
    _noted: dict[str, int] | None = None
    #: The (key, second noted under) of the sweep under way, and when it began (what expired before goes).
    _due: list[tuple[str, int]] | None = None
    _due_before: float = 0.0
    #: Keys found expired while the cache was below its threshold: they go with the next sweep past it.
    _lingering: list[tuple[str, int]] | None = None

    def set(self, key: str, value: t.Any, timeout: t.Any = None) -> bool | None:
        """cachelib's ``set``, the key noted under the second it expires in."""
        with self._lock:
            done = super().set(key, value, timeout)
            self._note(key, self._cache[key][0])
            return done

    def set_many(self, mapping: dict[str, t.Any], timeout: t.Any = None) -> list[t.Any]:
        """cachelib's ``set_many``, in one hold of the lock and one look at the threshold."""
        with self._lock:
            expires = self._normalize_timeout(timeout)
            self._prune()
            cache, dumps = self._cache, self.serializer.dumps
            for key, value in mapping.items():
                cache[key] = (expires, dumps(value))
                self._note(key, expires)
            return list(mapping)

    def add(self, key: str, value: t.Any, timeout: t.Any = None) -> bool:
        """cachelib's ``add``, the key noted under the second it expires in."""
        with self._lock:
            added = super().add(key, value, timeout)
            if added:
                self._note(key, self._cache[key][0])
            return added

    def expire_within(self, keys: t.Iterable[str], seconds: int) -> None:
        """Let each of *keys* live at most *seconds* more (never longer than it would have)."""
        until = int(time.time()) + seconds
        with self._lock:
            for key in keys:
                entry = self._cache.get(key)
                if entry is not None and (entry[0] == 0 or entry[0] > until):
                    self._cache[key] = (until, entry[1])
                    self._note(key, until)

    def _note(self, key: str, expires: int) -> None:
        if expires <= 0:
            return  # without a timeout: no sweep drops it
        if self._expiring is None or self._noted is None:
            self._expiring, self._noted = {}, {}
        noted = self._noted.get(key)
        if noted is not None and noted <= expires:
            return  # already noted no later: its sweep finds it again if it lives longer
        self._noted[key] = expires
        keys = self._expiring.get(expires)
        if keys is None:
            self._expiring[expires] = [key]
        else:
            keys.append(key)

    def _prune(self) -> None:
        due = self._due
        if not due:
            now = time.time()
            expiring = self._expiring
            if now - self._swept < SWEEP_INTERVAL or not expiring:
                return
            self._swept = self._due_before = now
            due = self._due = []
            if self._lingering and len(self._cache) > self._threshold:
                due += self._lingering
                self._lingering = None
            for second in [second for second in expiring if second < now]:
                due += ((key, second) for key in expiring.pop(second))
        cache, noted, before = self._cache, t.cast(dict[str, int], self._noted), self._due_before
        dropping = len(cache) > self._threshold
        for _ in range(min(SWEEP_STEP, len(due))):
            key, second = due.pop()
            if noted.get(key) != second:
                continue  # noted under another second since (made to expire sooner, or swept and noted again)
            entry = cache.get(key)
            if entry is not None and 0 < entry[0] < before and not dropping:
                if self._lingering is None:
                    self._lingering = []
                self._lingering.append((key, second))  # kept below the threshold, as cachelib keeps it
                continue
            del noted[key]
            if entry is None:
                continue  # deleted since: forgotten
            if 0 < entry[0] < before:
                del cache[key]
            else:  # rewritten to live longer since: noted under its new second
                self._note(key, entry[0])

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
