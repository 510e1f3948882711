"""Rate limits for tool calls, kept in a shared cache.

Two kinds of limit: :class:`FixedWindow` (``"10/minute"``: at most *limit*
calls per calendar window of *period* seconds) and :class:`TokenBucket`
(bursts of up to *capacity* calls, refilled at *rate* per second). A
:class:`CacheRateLimiter` counts them in a flask-caching cache (or any
object with ``add``, ``inc``, ``dec``, ``get`` and ``delete``), using only
operations Redis performs atomically, so every worker process and host
sharing the cache shares the limits. The protocol core only sees the
:class:`RateLimiter` protocol.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import re
import time
import typing as t

from ..protocol.jsonrpc import RATE_LIMITED, MCPError
from .keeping_cache import KeepingSimpleCache
from .principal import Principal
from .store_keys import tag

__all__ = [
    "CacheRateLimiter",
    "FixedWindow",
    "Limit",
    "RateLimiter",
    "TokenBucket",
    "caller_key",
    "counter_cache",
    "enforce",
    "parse_limit",
]

logger = logging.getLogger("flask_mcp")

_PERIODS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}
_RULE = re.compile(r"^\s*(\d+)\s*(?:/|per)\s*(\d*)\s*(second|minute|hour|day)s?\s*$", re.IGNORECASE)


@dataclasses.dataclass(frozen=True)
class FixedWindow:
    """At most *limit* calls in each window of *period* seconds (windows aligned on the clock)."""

    limit: int
    period: float

    def __post_init__(self) -> None:
        if self.limit < 1 or self.period <= 0:
            raise ValueError(f"FixedWindow needs limit >= 1 and period > 0, not ({self.limit}, {self.period})")

    @property
    def key(self) -> str:
        """Part of the cache key: another rule never shares this one's counters."""
        return f"fw{self.limit}/{self.period:g}"

    def __str__(self) -> str:
        return f"{self.limit} per {self.period:g} seconds"


@dataclasses.dataclass(frozen=True)
class TokenBucket:
    """Bursts of up to *capacity* calls; one call's worth refills every ``1 / rate`` seconds."""

    rate: float
    capacity: int

    def __post_init__(self) -> None:
        if self.rate <= 0 or self.capacity < 1:
            raise ValueError(f"TokenBucket needs rate > 0 and capacity >= 1, not ({self.rate}, {self.capacity})")

    @property
    def interval_ms(self) -> int:
        """Milliseconds per token, at least 1: the state is kept in whole milliseconds."""
        return max(1, round(1000 / self.rate))

    @property
    def key(self) -> str:
        """Part of the cache key: another rule never shares this one's state."""
        return f"tb{self.rate:g}/{self.capacity}"

    def __str__(self) -> str:
        return f"{self.rate:g} per second, bursts of {self.capacity}"


Limit = t.Union[FixedWindow, TokenBucket]


def parse_limit(rule: str | Limit | None) -> Limit | None:
    """A limit from a rule such as ``"10/minute"``, ``"100 per hour"`` or ``"5/10 seconds"``.

    Limit objects and ``None`` pass through unchanged.

    :raises ValueError: for a rule that does not parse.
    """
    if rule is None or isinstance(rule, (FixedWindow, TokenBucket)):
        return rule
    if not isinstance(rule, str):
        raise TypeError(f"a rate limit is a rule string, FixedWindow or TokenBucket, not {rule!r}")
    match = _RULE.match(rule)
    if match is None:
        raise ValueError(f"invalid rate limit {rule!r}: use e.g. '10/minute', '100/hour' or '5/second'")
    count, multiple, unit = match.groups()
    return FixedWindow(int(count), int(multiple or 1) * _PERIODS[unit.lower()])


class RateLimiter(t.Protocol):
    """Counts calls per key; what the protocol core asks before a limited call."""

    def hit(self, key: str, limit: Limit) -> float | None:
        """Count one call under *key*: ``None`` if allowed, else seconds until one would be."""
        ...


@t.runtime_checkable
class CacheLike(t.Protocol):
    """The part of a flask-caching :class:`~flask_caching.Cache` the limiter uses."""

    def add(self, key: str, value: t.Any, timeout: int | None = None) -> bool: ...
    def inc(self, key: str, delta: int = 1) -> int | None: ...
    def dec(self, key: str, delta: int = 1) -> int | None: ...
    def get(self, key: str) -> t.Any: ...
    def delete(self, key: str) -> bool: ...


class CacheProxy(t.Protocol):
    """A flask-caching :class:`~flask_caching.Cache`: its backend has ``inc``, the proxy does not."""

    @property
    def cache(self) -> CacheLike: ...


class CacheRateLimiter:
    """A :class:`RateLimiter` storing its counters in a shared cache.

    Fixed windows are one integer per key and window: ``add(key, 0)`` then
    ``inc``, both atomic on Redis. Token buckets follow GCRA: the state is
    the time, in milliseconds, at which the bucket would be full again
    ("theoretical arrival time"); a call adds one interval with ``inc`` and
    is allowed while that time is at most *capacity* intervals ahead of now
    (a refused call takes its interval back with ``dec``). When a bucket has
    been idle, that time lags behind the clock; the worker that sees it
    first (an ``add`` on a short-lived marker key elects one) moves it up to
    now. Calls racing with that catch-up may each get one extra token, so
    right after an idle period the burst can exceed *capacity* by the number
    of calls arriving in the same few milliseconds; it is never stricter
    than the limit.

    Backends without a native ``inc`` (SimpleCache, FileSystemCache) rewrite
    the key with the cache's default timeout on each call: keep
    ``CACHE_DEFAULT_TIMEOUT`` (``MCP_CACHE_DEFAULT_TIMEOUT``) above your
    longest period, or idle counters may expire early (in the caller's favour).

    :param cache: a flask-caching ``Cache`` (its backend is looked up on
        each call, in the app context) or a cachelib backend.
    :param clock: seconds since the epoch; tests pass a fake one.
    :param prefix: prepended to every key, inside the cache's own prefix.
    """

    def __init__(
        self,
        cache: CacheLike | CacheProxy,
        *,
        clock: t.Callable[[], float] = time.time,
        prefix: str = "ratelimit:",
    ) -> None:
        self.source = cache
        self.clock = clock
        self.prefix = prefix

    @classmethod
    def in_process(cls) -> CacheRateLimiter:
        """A limiter counting in this process's memory only, for a limit with no shared cache to count in."""
        return cls(counter_cache())

    @property
    def cache(self) -> CacheLike:
        """The backend counting the calls."""
        source = self.source
        # flask-caching's Cache proxies add/get/delete but not inc/dec.
        return source if isinstance(source, CacheLike) else source.cache

    def hit(self, key: str, limit: Limit) -> float | None:
        """Count one call under *key*; ``None`` if allowed, else seconds to wait.

        A cache that fails (``inc`` answers ``None``) lets the call through,
        logged: a broken cache must not take the whole server down.
        """
        cache = self.cache
        # Tagged by the budget: a bucket and its catch-up marker live on one node of a cluster.
        counted = f"{self.prefix}{limit.key}:{tag(key)}"
        if isinstance(limit, FixedWindow):
            return self._fixed_window(cache, counted, limit)
        return self._token_bucket(cache, counted, limit)

    def spent(self, key: str, limit: Limit) -> float | None:
        """Without counting: ``None`` while *key* may still call, else seconds until it may.

        For limits counted after the fact (failures, say): the next request is
        refused before it does any work once the budget is spent.
        """
        cache = self.cache
        counted = f"{self.prefix}{limit.key}:{tag(key)}"
        if isinstance(limit, FixedWindow):
            now = self.clock()
            window = math.floor(now / limit.period)
            count = cache.get(f"{counted}:{window}")
            if not isinstance(count, int) or count < limit.limit:
                return None
            return (window + 1) * limit.period - now
        arrival = cache.get(counted)
        now_ms = math.floor(self.clock() * 1000)
        if not isinstance(arrival, int) or arrival + limit.interval_ms - now_ms <= limit.interval_ms * limit.capacity:
            return None
        return (arrival + limit.interval_ms - limit.interval_ms * limit.capacity - now_ms) / 1000

    def _fixed_window(self, cache: CacheLike, key: str, limit: FixedWindow) -> float | None:
        now = self.clock()
        window = math.floor(now / limit.period)
        counter = f"{key}:{window}"
        # The window number is in the key, so the timeout only has to clean up.
        cache.add(counter, 0, timeout=math.ceil(limit.period) + 1)
        count = cache.inc(counter)
        if count is None:
            logger.warning("rate limit cache unavailable; letting the call through")
            return None
        if count <= limit.limit:
            return None
        return (window + 1) * limit.period - now

    def _token_bucket(self, cache: CacheLike, key: str, limit: TokenBucket) -> float | None:
        now_ms = math.floor(self.clock() * 1000)
        interval = limit.interval_ms
        burst = interval * limit.capacity
        # A fresh bucket is full: its arrival time is now. The key outlives any
        # bucket that is not full yet; once full, an expired key means the same.
        cache.add(key, now_ms, timeout=max(3600, 2 * math.ceil(burst / 1000)))
        arrival = cache.inc(key, interval)
        if arrival is None:
            logger.warning("rate limit cache unavailable; letting the call through")
            return None
        if arrival - interval < now_ms:
            # Idle bucket (full): bring its arrival time up to now + one interval.
            self._catch_up(cache, key, now_ms + interval)
            return None
        if arrival - now_ms <= burst:
            return None
        cache.dec(key, interval)  # a refused call takes no token
        return (arrival - burst - now_ms) / 1000

    def _catch_up(self, cache: CacheLike, key: str, target: int) -> None:
        marker = f"{key}:sync"
        if not cache.add(marker, 1, timeout=1):
            return  # another worker is moving it up right now
        try:
            current = cache.get(key)
            if isinstance(current, int) and current < target:
                cache.inc(key, target - current)
        finally:
            cache.delete(marker)


def counter_cache() -> KeepingSimpleCache:
    """A cache of this process's memory for rate-limit counters alone, which never evicts a live one.

    Counters kept with other entries in a cache that evicts (cachelib's
    ``SimpleCache`` past its threshold) would be pushed out by a flood of
    those entries, and a caller's spent budget would come back. Here nothing
    else is stored, and nothing live is dropped: the counters are as many as
    callers times limits, and each expires with its window.
    """
    return KeepingSimpleCache(threshold=10_000, default_timeout=3600)


def caller_key(principal: Principal | None, client_key: t.Callable[[], str | None] | None) -> str:
    """Whose budget a call spends: the principal's subject, else the client's address.

    Anonymous callers are told apart by *client_key* (the HTTP transport
    gives the remote address); without one they share a single budget.
    """
    if principal is not None:
        return "p:" + principal.subject
    address = client_key() if client_key is not None else None
    return "a:" + (address or "anonymous")


def enforce(limiter: RateLimiter, key: str, limit: Limit, what: str) -> None:
    """Count one call under *key*.

    :raises MCPError: :data:`~flask_mcp.protocol.jsonrpc.RATE_LIMITED` with
        ``data.retryAfter`` in whole seconds (at least 1), what an HTTP
        ``Retry-After`` header carries.
    """
    wait = limiter.hit(key, limit)
    if wait is not None:
        retry_after = max(1, math.ceil(wait))
        raise MCPError(
            RATE_LIMITED,
            f"Rate limit exceeded: {what} ({limit}); retry in {retry_after} s",
            {"retryAfter": retry_after},
        )
