"""A Redis Cluster store that may be away when the app is set up.

redis-py's ``RedisCluster`` connects to its startup nodes in its constructor,
which flask-caching's ``RedisClusterCache`` calls while ``cache.init_app``
builds the backend: a cluster that is away at that moment (a restart, the
app coming up before its Redis) would make the worker fail to start, where a
single Redis or a Sentinel group only fails the requests that need it.
:class:`DeferredRedisClusterCache` is what flask_mcp's caches are built
with instead (``CACHE_TYPE``, :data:`CACHE_TYPE`): the ``RedisClusterCache``
itself when the cluster answers, else a backend that builds it at its first
use, and again at each later use until the cluster answers. Meanwhile every
use raises the client's own error, which the transports answer with 503 and
``Retry-After`` (:mod:`.failures`).

A configuration that can never work still fails in ``init_app``: a malformed
node list, or a setting redis-py refuses before it connects (a URL naming a
``db`` other than 0).
"""

from __future__ import annotations

import threading
import traceback
import typing as t

from flask_caching.backends.base import BaseCache
from flask_caching.backends.rediscache import RedisClusterCache

if t.TYPE_CHECKING:
    import datetime as dt

    from cachelib import BaseCache as CachelibBaseCache
    from flask import Flask

__all__ = ["CACHE_TYPE", "DeferredRedisClusterCache", "cluster_type"]

#: ``CACHE_TYPE`` of :class:`DeferredRedisClusterCache`, as flask-caching imports it.
CACHE_TYPE = "flask_mcp.stores.deferred.DeferredRedisClusterCache"
#: The ``CACHE_TYPE`` spellings of flask-caching's RedisClusterCache.
_CLUSTER_TYPES = {
    "RedisClusterCache",
    "flask_caching.backends.RedisClusterCache",
    "flask_caching.backends.rediscache.RedisClusterCache",
}

_Timeout = t.Union[int, "dt.timedelta", None]


def cluster_type(kind: t.Any) -> t.Any:
    """*kind* (a ``CACHE_TYPE``), or :data:`CACHE_TYPE` when it names flask-caching's ``RedisClusterCache``."""
    return CACHE_TYPE if kind in _CLUSTER_TYPES or kind is RedisClusterCache else kind


class DeferredRedisClusterCache(BaseCache):
    """flask-caching's ``RedisClusterCache``, built at its first use when the cluster is away at start.

    flask-caching makes it through :meth:`factory`, which returns the
    ``RedisClusterCache`` itself whenever the cluster answers then.

    :param build: makes the backend; it raises the client's error while the cluster does not answer.
    """

    def __init__(self, build: t.Callable[[], CachelibBaseCache]) -> None:
        super().__init__()
        self._build = build
        self._backend: CachelibBaseCache | None = None
        # One attempt at a time: once the cluster answers, every thread that waited uses its backend.
        self._building = threading.Lock()

    @classmethod
    def factory(cls, app: Flask, config: dict[str, t.Any], args: list[t.Any], kwargs: dict[str, t.Any]) -> BaseCache:
        """The ``RedisClusterCache`` of *config*, or one of these when the cluster cannot be reached now.

        :raises ValueError: a malformed node list, or settings redis-py refuses before it connects.
        """

        def build() -> CachelibBaseCache:
            # flask-caching's factory adds the CACHE_REDIS_* settings to what it is given: a copy each time.
            return t.cast("CachelibBaseCache", RedisClusterCache.factory(app, config, list(args), dict(kwargs)))

        try:
            from redis.exceptions import RedisClusterException, RedisError
        except ImportError:  # flask-caching's own error says what is missing
            return t.cast(BaseCache, build())
        try:
            return t.cast(BaseCache, build())
        except (RedisError, RedisClusterException) as exc:
            if _while_connecting(exc):
                return cls(build)
            # Refused before any node was asked: no answer of the cluster will ever change it.
            raise ValueError(f"{type(exc).__name__}: {exc}") from exc

    def built(self) -> CachelibBaseCache:
        """The backend, built now if it is not yet.

        :raises redis.exceptions.RedisClusterException: the cluster still does not answer
            (or another of redis-py's errors, all in :func:`~.failures.store_errors`).
        """
        backend = self._backend
        if backend is None:
            with self._building:
                if self._backend is None:
                    self._backend = self._build()
                backend = self._backend
        return backend

    def then(self, change: t.Callable[[CachelibBaseCache], t.Any]) -> DeferredRedisClusterCache:
        """A backend built as ``change(backend)`` once this one's backend is: it shares its connections."""
        return DeferredRedisClusterCache(lambda: change(self.built()))

    # cachelib's calls, on the backend once it is built.

    def get(self, key: str) -> t.Any:
        """The backend's ``get``."""
        return self.built().get(key)

    def delete(self, key: str) -> bool:
        """The backend's ``delete``."""
        return self.built().delete(key)

    def get_many(self, *keys: str) -> list[t.Any]:
        """The backend's ``get_many``."""
        return self.built().get_many(*keys)

    def get_dict(self, *keys: str) -> dict[str, t.Any]:
        """The backend's ``get_dict``."""
        return self.built().get_dict(*keys)

    def set(self, key: str, value: t.Any, timeout: _Timeout = None) -> bool | None:
        """The backend's ``set``."""
        return self.built().set(key, value, timeout)

    def add(self, key: str, value: t.Any, timeout: _Timeout = None) -> bool:
        """The backend's ``add``."""
        return self.built().add(key, value, timeout)

    def set_many(self, mapping: dict[str, t.Any], timeout: _Timeout = None) -> list[t.Any]:
        """The backend's ``set_many``."""
        return self.built().set_many(mapping, timeout)

    def delete_many(self, *keys: str) -> list[t.Any]:
        """The backend's ``delete_many``."""
        return self.built().delete_many(*keys)

    def has(self, key: str) -> bool:
        """The backend's ``has``."""
        return self.built().has(key)

    def clear(self) -> bool:
        """The backend's ``clear``."""
        return self.built().clear()

    def inc(self, key: str, delta: int = 1) -> int | None:
        """The backend's ``inc``."""
        return self.built().inc(key, delta)

    def dec(self, key: str, delta: int = 1) -> int | None:
        """The backend's ``dec``."""
        return self.built().dec(key, delta)


def _while_connecting(exc: BaseException) -> bool:
    """Whether *exc* came from redis-py looking for the cluster's nodes, not from the arguments it was given.

    ``RedisCluster`` checks its arguments, then asks its startup nodes for the
    cluster's layout (``NodesManager.initialize``), and raises
    ``RedisClusterException`` in either case: only where it was raised tells
    "cannot be reached (yet)" (refused, timed out, slots not yet assigned)
    from "can never work".
    """
    try:
        from redis.cluster import NodesManager
    except ImportError:
        return False
    looking = NodesManager.initialize.__code__
    return any(frame.f_code is looking for frame, _ in traceback.walk_tb(exc.__traceback__))
