"""The Redis client options flask_mcp gives a Redis store when the app gives no ``MCP_CACHE_OPTIONS``.

A store that cannot be reached must fail the request that needs it within
about a second, so that the client gets its 503 and ``Retry-After`` and
comes back, rather than the request hanging. redis-py's own defaults do not
allow that: a ``redis.Redis`` built from a host and port (and every client
a Sentinel asks where the master is) retries a refused connection ten times
with a backoff of up to a second each, so an app whose three sentinels are
down took 11 to 13 seconds per request, and as long to set up. A
``RedisCluster`` retries ten times too, sleeping a quarter of a second each
time its nodes answer ``CLUSTERDOWN``. A client built from a URL, and the
master's connections in a Sentinel group, retry nothing at all, so one
connection dropped by a failover failed the request that met it.

The policy here is the same for every shape of Redis: a refused or dropped
connection (redis-py's ``ConnectionError``, which includes "no master
found") is tried again :data:`RETRIES` times after a short pause
(:data:`BACKOFF`: 50 ms, then 100 ms), enough to ride over a blip. A
timeout is not retried: the store already took the whole socket timeout to
not answer, and each retry would add as much again. Each sentinel is tried
again only :data:`SENTINEL_RETRIES` times, since the master's connection
asks every sentinel at each of its own attempts, and finding none is
itself retried.
"""

from __future__ import annotations

import typing as t

__all__ = ["BACKOFF_BASE", "BACKOFF_CAP", "RETRIES", "SENTINEL_RETRIES", "SOCKET_TIMEOUT", "redis_options"]

#: Seconds a connection to Redis, or a command on it, may take before it fails.
SOCKET_TIMEOUT = 5
#: Retries of a command (or of a connection) to a Redis node that refused or dropped the connection.
RETRIES = 2
#: Retries of a question to one sentinel (the others are asked next).
SENTINEL_RETRIES = 1
#: ``ExponentialBackoff(cap=BACKOFF_CAP, base=BACKOFF_BASE)``: waits ``base * 2**n`` (50 ms, 100 ms),
#: at most ``cap``, before the n-th retry.
BACKOFF_BASE = 0.025
BACKOFF_CAP = 0.1

#: The flask-caching backends that take redis-py's options, by the end of their ``CACHE_TYPE``.
_REDIS_TYPES = ("RedisCache", "RedisClusterCache", "RedisSentinelCache")


def redis_options(kind: str) -> dict[str, t.Any] | None:
    """The ``CACHE_OPTIONS`` flask_mcp gives a store of ``CACHE_TYPE`` *kind*; ``None`` when it is no Redis.

    Every value is picklable and can be deep-copied (redis-py copies the
    retry policy into each connection): only redis-py's own classes and numbers.

    * ``socket_timeout``, ``socket_connect_timeout``: :data:`SOCKET_TIMEOUT`.
    * ``retry``: a ``redis.retry.Retry`` of :data:`RETRIES` retries on ``ConnectionError``.
      flask-caching hands it to ``redis.Redis`` (single node), to the master's
      connections (``redis.sentinel.Sentinel``), or to ``RedisCluster``, which
      counts its retries by it (and retries at once, between refreshes of its layout).
    * for Sentinel, ``sentinel_socket_timeout``, ``sentinel_socket_connect_timeout``
      and ``sentinel_retry`` (:data:`SENTINEL_RETRIES` retries): flask-caching
      gives the ``sentinel_*`` options, without the prefix, to the clients
      that ask the sentinels where the master is.
    """
    if not kind.endswith(_REDIS_TYPES):
        return None
    options: dict[str, t.Any] = {"socket_timeout": SOCKET_TIMEOUT, "socket_connect_timeout": SOCKET_TIMEOUT}
    sentinel = kind.endswith("RedisSentinelCache")
    if sentinel:
        options.update(sentinel_socket_timeout=SOCKET_TIMEOUT, sentinel_socket_connect_timeout=SOCKET_TIMEOUT)
    try:
        from redis.backoff import ExponentialBackoff
        from redis.exceptions import ConnectionError as RedisConnectionError
        from redis.retry import Retry
    except ImportError:  # no redis-py: flask-caching says so when it builds the backend
        return options

    def retry(retries: int) -> Retry:
        backoff = ExponentialBackoff(cap=BACKOFF_CAP, base=BACKOFF_BASE)
        return Retry(backoff, retries, supported_errors=(RedisConnectionError,))

    options["retry"] = retry(RETRIES)
    if sentinel:
        options["sentinel_retry"] = retry(SENTINEL_RETRIES)
    return options
