"""How full the session store is, asked before a new session is stored.

A store that is full evicts: SimpleCache drops entries past its threshold,
Redis drops keys past ``maxmemory``. Either way a flood of new sessions would
cost other clients theirs. A :class:`Capacity` tells the transport, before
it creates a session, whether the store still has room, so a full store
refuses newcomers (HTTP 503) instead of evicting anybody.

Each backend is asked in its own terms: SimpleCache by counting its entries
against ``MCP_MAX_SESSIONS``, Redis by comparing ``used_memory`` with
``maxmemory``. Other backends have no probe; their own limits apply.
"""

from __future__ import annotations

import logging
import time
import typing as t

__all__ = ["Capacity", "RedisCapacity", "SimpleCacheCapacity", "capacity_of", "is_process_local"]

logger = logging.getLogger("flask_mcp")


class Capacity(t.Protocol):
    """Whether the session store can take one more session."""

    def has_room(self) -> bool:
        """``False`` when storing one more session could make the store evict."""
        ...


class SimpleCacheCapacity:
    """Counts the entries of a process-local SimpleCache (cachelib) against a cap.

    Expired entries are swept before the cache is judged full, so sessions
    that idled out never hold the place of live ones.

    :param backend: the cachelib ``SimpleCache`` holding the sessions.
    :param max_entries: how many entries it may hold (``MCP_MAX_SESSIONS``).
    """

    def __init__(self, backend: t.Any, max_entries: int) -> None:
        self.backend = backend
        self.max_entries = max_entries

    def has_room(self) -> bool:
        """Whether fewer than :attr:`max_entries` live entries are stored."""
        backend = self.backend
        with backend._lock:
            if len(backend._cache) < self.max_entries:
                return True
            backend._remove_expired(time.time())
            return len(backend._cache) < self.max_entries


class RedisCapacity:
    """Compares Redis's ``used_memory`` with its ``maxmemory``.

    Without ``maxmemory`` Redis never evicts (it grows until the machine
    runs out of memory), so there is nothing to protect and the answer is
    always yes; :doc:`/security` says to set it.

    :param client: a ``redis.Redis`` client of the session store.
    :param high_water: the fraction of ``maxmemory`` past which new sessions are refused.
    """

    def __init__(self, client: t.Any, high_water: float) -> None:
        self.client = client
        self.high_water = high_water

    def has_room(self) -> bool:
        """Whether used memory is below :attr:`high_water` of ``maxmemory``."""
        info = self.client.info("memory")
        limit = int(info.get("maxmemory") or 0)
        return limit == 0 or int(info.get("used_memory") or 0) < self.high_water * limit


def is_process_local(backend: t.Any) -> bool:
    """Whether *backend* (a cachelib cache) lives in this process's memory (SimpleCache): no other process sees it."""
    return hasattr(backend, "_cache") and hasattr(backend, "_remove_expired") and hasattr(backend, "_lock")


def capacity_of(backend: t.Any, *, max_entries: int, high_water: float) -> Capacity | None:
    """The probe that fits *backend* (a cachelib cache), or ``None`` for backends without one."""
    if is_process_local(backend):
        return SimpleCacheCapacity(backend, max_entries)
    client = getattr(backend, "_write_client", None)
    if client is not None and callable(getattr(client, "info", None)):
        return RedisCapacity(client, high_water)
    logger.debug("no capacity probe for %s: the store's own limits apply", type(backend).__name__)
    return None
