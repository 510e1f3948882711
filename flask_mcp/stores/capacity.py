"""How full a store is, asked before a client makes it keep something more.

A store that is full evicts: SimpleCache drops entries past its threshold,
Redis drops keys past ``maxmemory``. Either way a flood from one client
would cost other clients what the store kept for them. A :class:`Capacity`
says, before a session or another client-driven entry is stored, whether
the store still has room, so a full store refuses instead of evicting.

Each backend is asked in its own terms: SimpleCache by counting its entries
against a cap (``MCP_MAX_SESSIONS`` for sessions; ``MCP_STORE_HIGH_WATER``
of its threshold for the short-lived store), Redis by comparing
``used_memory`` with ``MCP_STORE_HIGH_WATER`` of ``maxmemory``: on a
cluster, of every master (keys spread over all of them, and whichever one
is full would evict or refuse its share). A cluster that was away when the
app was set up (:mod:`.deferred`) is asked once it answers. Other backends
have no probe; their own limits apply.
"""

from __future__ import annotations

import logging
import math
import typing as t

from ..policies.keeping_cache import sweep_expired
from .deferred import DeferredRedisClusterCache
from .topology import primaries

__all__ = [
    "EVICTING_POLICIES",
    "Capacity",
    "RedisCapacity",
    "SimpleCacheCapacity",
    "capacity_of",
    "is_process_local",
    "threshold_capacity_of",
]

logger = logging.getLogger("flask_mcp")


class Capacity(t.Protocol):
    """Whether a store can take one more entry."""

    def has_room(self, size: int = 0) -> bool:
        """``False`` when storing one more entry (of about *size* bytes) could make the store evict."""
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

    def has_room(self, size: int = 0) -> bool:
        """Whether fewer than :attr:`max_entries` live entries are stored (whatever their *size*)."""
        backend = self.backend
        with backend._lock:
            if len(backend._cache) < self.max_entries:
                return True
            sweep_expired(backend)
            return len(backend._cache) < self.max_entries


class RedisCapacity:
    """Compares Redis's ``used_memory`` with its ``maxmemory``, on each master.

    Without ``maxmemory`` Redis never evicts (it grows until the machine
    runs out of memory), so there is nothing to protect and the answer is
    yes for that master; :doc:`/security` says to set it. On a cluster the
    answer is yes only while every master has room: where the next key
    lands is not known here, and a full master must not take it.

    :param client: a ``redis.Redis`` (or ``redis.cluster.RedisCluster``) client of the store.
    :param high_water: the fraction of ``maxmemory`` past which new sessions are refused.
    """

    def __init__(self, client: t.Any, high_water: float) -> None:
        self.client = client
        self.high_water = high_water
        self._policy_checked = False

    def has_room(self, size: int = 0) -> bool:
        """Whether used memory, with room for a value of *size* bytes, stays below :attr:`high_water` of ``maxmemory``.

        A value takes its room twice while it is written (in the command Redis
        reads, then as the value stored), and Redis judges its memory between
        commands: the margin keeps a large write from taking it past ``maxmemory``.
        """
        # Every master is asked (one on a single Redis or behind Sentinel): a cluster's nodes change over time.
        return all(self._master_has_room(master.info("memory"), size) for master in primaries(self.client))

    def _master_has_room(self, info: t.Mapping[str, t.Any], size: int) -> bool:
        limit = int(info.get("maxmemory") or 0)
        if limit and not self._policy_checked:
            self._policy_checked = True
            policy = str(info.get("maxmemory_policy") or "")
            if policy in EVICTING_POLICIES:
                logger.warning(
                    "Redis evicts keys at maxmemory (maxmemory-policy %s): past it, rate-limit counters and other "
                    "callers' entries may be dropped. Set maxmemory-policy noeviction (see the security docs)",
                    policy,
                )
        return limit == 0 or int(info.get("used_memory") or 0) + 2 * size < self.high_water * limit


class _DeferredRedisCapacity:
    """A :class:`RedisCapacity` of a cluster backend built at its first use, made once the backend is."""

    def __init__(self, backend: DeferredRedisClusterCache, high_water: float) -> None:
        self.backend = backend
        self.high_water = high_water
        self._probe: RedisCapacity | None = None

    def has_room(self, size: int = 0) -> bool:
        """:meth:`RedisCapacity.has_room`; raises the client's error while the cluster does not answer."""
        probe = self._probe
        if probe is None:
            built: t.Any = self.backend.built()
            probe = self._probe = RedisCapacity(built._write_client, self.high_water)
        return probe.has_room(size)


#: ``maxmemory-policy`` values under which Redis drops keys to make room; ``noeviction`` refuses writes instead.
EVICTING_POLICIES = frozenset(
    {"allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"}
)


def is_process_local(backend: t.Any) -> bool:
    """Whether *backend* (a cachelib cache) lives in this process's memory (SimpleCache): no other process sees it."""
    return hasattr(backend, "_cache") and hasattr(backend, "_remove_expired") and hasattr(backend, "_lock")


def capacity_of(backend: t.Any, *, max_entries: int, high_water: float) -> Capacity | None:
    """The probe that fits *backend* (a cachelib cache), or ``None`` for backends without one."""
    if is_process_local(backend):
        return SimpleCacheCapacity(backend, max_entries)
    if isinstance(backend, DeferredRedisClusterCache):
        return _DeferredRedisCapacity(backend, high_water)  # its client exists once the cluster answers
    client = getattr(backend, "_write_client", None)
    if client is not None and callable(getattr(client, "info", None)):
        return RedisCapacity(client, high_water)
    logger.debug("no capacity probe for %s: the store's own limits apply", type(backend).__name__)
    return None


def threshold_capacity_of(backend: t.Any, *, high_water: float) -> Capacity | None:
    """The probe of a store of short-lived entries: *high_water* of a SimpleCache's threshold, or of Redis's memory.

    The room left above the high-water mark is for the entries the server
    writes for itself (answers, events, locks, counters), which are not
    refused.
    """
    if is_process_local(backend):
        return SimpleCacheCapacity(backend, max(1, math.floor(high_water * backend._threshold)))
    return capacity_of(backend, max_entries=0, high_water=high_water)
