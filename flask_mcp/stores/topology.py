"""The store's backend as flask_mcp's stores use it, whatever shape of Redis is behind it.

flask-caching's Redis backends are written for a cache, where a value read a
moment late or a write that half-happened costs a recomputation. flask_mcp
keeps state in them, and asks three things more, which :func:`fitted`
gives every Redis backend (``RedisCache``, ``RedisSentinelCache``,
``RedisClusterCache``) without touching the one the app configured:

* **its own writes, read back at once.** ``RedisSentinelCache`` reads from
  a replica, which has not yet seen what the master just took: the session
  ``initialize`` made is "not found" on the next request. Every read goes
  to the master (the replicas are there for failover).
* **``add`` in one command.** cachelib's ``add`` is ``SETNX`` then
  ``EXPIRE``: a process that dies, or a master that fails over, between
  the two leaves a lock that never expires. Here it is ``SET NX EX``.
* **the session's read, cheap.** The one ``MGET`` every request of a
  session makes goes past redis-py's per-command machinery (:mod:`.hot_reads`),
  and its values may be kept in the process while Redis reports them
  unchanged (:func:`track_reads`, :mod:`.tracked_reads`).
* **reads of several keys on a cluster.** ``MGET`` of keys in different
  slots is refused; keys of one session, task or caller share a slot
  (:mod:`flask_mcp.policies.store_keys`), and the few reads that span
  several (a session with the shared registry's record, the keys the
  waker watches) go to each slot's node, one round trip per node
  (``mget_nonatomic``).

A cluster backend built at its first use (:mod:`.deferred`: the cluster was
away at start) is fitted when it is built. Other backends (SimpleCache,
NullCache, ...) are returned as they are.
"""

from __future__ import annotations

import typing as t

from .deferred import DeferredRedisClusterCache
from .hot_reads import HotReads, hot_reads_for
from .tracked_reads import TrackedReads

__all__ = ["fitted", "is_cluster", "primaries", "track_reads"]


def is_cluster(client: t.Any) -> bool:
    """Whether *client* is a Redis Cluster client (``redis.cluster.RedisCluster``)."""
    try:
        from redis.cluster import RedisCluster
    except ImportError:  # no redis-py: no cluster either
        return False
    return isinstance(client, RedisCluster)


def primaries(client: t.Any) -> list[t.Any]:
    """The masters *client* writes to: each node of a cluster's, else *client* itself."""
    if is_cluster(client):
        return [client.get_redis_connection(node) for node in client.get_primaries()]
    return [client]


class _StoreSemantics:
    """What a Redis backend does differently for flask_mcp (mixed in before the backend's class)."""

    _write_client: t.Any
    _read_client: t.Any
    serializer: t.Any
    #: Reads every request makes, past the client's per-command machinery (:mod:`.hot_reads`).
    _hot_reads: HotReads | None = None

    if t.TYPE_CHECKING:  # the backend's own, found after this class in the fitted one's order

        def _get_prefix(self) -> str: ...
        def _normalize_timeout(self, timeout: t.Any) -> int: ...

    def add(self, key: str, value: t.Any, timeout: t.Any = None) -> bool:
        """Store *value* under *key* only if the key is absent, with its expiry, in one command."""
        seconds = self._normalize_timeout(timeout)
        return bool(
            self._write_client.set(
                name=f"{self._get_prefix()}{key}",
                value=self.serializer.dumps(value),
                nx=True,
                ex=None if seconds == -1 else seconds,
            )
        )

    def expire_within(self, keys: t.Iterable[str], seconds: int) -> None:
        """Let each of *keys* live *seconds* more, in one round trip (``EXPIRE`` in a pipeline)."""
        prefix = self._get_prefix()
        pipeline = self._write_client.pipeline(transaction=False)
        for key in keys:
            pipeline.expire(f"{prefix}{key}", seconds)
        pipeline.execute()

    def get_many(self, *keys: str) -> list[t.Any]:
        """The values of *keys*, in order; on a cluster, one ``MGET`` per slot, batched per node."""
        if not keys:
            return []
        prefix = self._get_prefix()
        names = [f"{prefix}{key}" for key in keys]
        hot = self._hot_reads
        if hot is not None:
            values = hot.mget(names)
        else:
            client = self._read_client
            values = client.mget_nonatomic(names) if is_cluster(client) else client.mget(names)
        loads = self.serializer.loads
        return [loads(value) for value in values]


#: The fitted class of each backend class, made once.
_FITTED: dict[type, type] = {}


def _fitted_class(base: type) -> type:
    found = _FITTED.get(base)
    if found is None:
        found = _FITTED[base] = type(base.__name__, (_StoreSemantics, base), {"__doc__": base.__doc__})
    return found


def fitted(backend: t.Any) -> t.Any:
    """*backend* (a cachelib cache) as flask_mcp's stores use it: see the module's description.

    A Redis backend is copied (the app's own object keeps behaving as
    flask-caching made it); the copy shares its connections.
    """
    if isinstance(backend, DeferredRedisClusterCache):
        return backend.then(fitted)
    write = getattr(backend, "_write_client", None)
    if write is None or isinstance(backend, _StoreSemantics):
        return backend
    copy: t.Any = object.__new__(_fitted_class(type(backend)))
    copy.__dict__.update(backend.__dict__)
    copy._read_client = write  # the master's answer: never a replica's that lags behind
    copy._hot_reads = None if is_cluster(write) else hot_reads_for(write)
    return copy


def track_reads(backend: t.Any, prefixes: t.Sequence[str], absent_kept: t.Collection[str] = ()) -> TrackedReads | None:
    """Keep the values of the keys under *prefixes* that *backend* reads, while Redis reports them unchanged.

    :param backend: a :func:`fitted` backend; only one whose reads go past the client
        (:mod:`.hot_reads`: one node or Sentinel, not a cluster) keeps anything.
    :param prefixes: key prefixes without the backend's own prefix (which is added).
    :param absent_kept: keys (without the prefix) whose absence is kept too.
    :returns: what keeps them (:mod:`.tracked_reads`), or ``None`` when *backend* cannot.
    """
    hot: HotReads | None = getattr(backend, "_hot_reads", None)
    if hot is None:
        return None
    prefix = backend._get_prefix()
    hot.tracked = TrackedReads(
        hot.client.connection_pool,
        [prefix + key for key in prefixes],
        absent_kept=[prefix + key for key in absent_kept],
        keep=hot.keep,
    )
    return hot.tracked
