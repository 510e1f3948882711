"""The two flask-caching caches an app's MCP state lives in: sessions, and short-lived entries.

The session cache holds handshake sessions; the ephemeral cache, configured
the same way unless ``MCP_EPHEMERAL_CACHE_*`` says otherwise, holds what
comes and goes with requests (answers, cancellations, stream events,
counters, spilled results). Kept apart, no number of short-lived entries can
push a session out (SimpleCache evicts per instance), and on Redis a key
prefix of their own keeps them apart.

An ephemeral cache in process memory is a :class:`KeepingCache`: past its
threshold it drops expired entries only, never a live one, so no flood of
short-lived entries can evict another caller's ``ctx.state`` or counters;
the writes a client can cause are refused before the threshold
(:mod:`flask_mcp.stores.quota`).

A Redis Cluster cache is built as a
:class:`~flask_mcp.stores.deferred.DeferredRedisClusterCache`: flask-caching's
``RedisClusterCache`` connects while ``init_app`` runs, and the app must set
up even while the cluster is away.
"""

from __future__ import annotations

import typing as t

from cachelib import BaseCache
from flask_caching import Cache
from flask_caching.backends import NullCache
from flask_caching.backends import SimpleCache as FlaskSimpleCache

from ..policies.keeping_cache import KeepingSimpleCache
from ..policies.tool import ConfigurationError
from ..stores.deferred import cluster_type
from ..stores.topology import fitted

if t.TYPE_CHECKING:
    from flask import Flask
    from flask_caching.backends import SimpleCache

    from ..config.settings import Settings

__all__ = ["KEEPING_CACHE", "BoundCache", "KeepingCache", "bound", "checked_cache", "ephemeral_cache", "session_cache"]

#: ``CACHE_TYPE`` of :class:`KeepingCache`, as flask-caching imports it.
KEEPING_CACHE = "flask_mcp.binding.caches.KeepingCache"
#: The ``CACHE_TYPE`` spellings of flask-caching's SimpleCache; an ephemeral cache is a :class:`KeepingCache` instead.
_SIMPLE_CACHE_TYPES = {
    "SimpleCache",
    "flask_caching.backends.SimpleCache",
    "flask_caching.backends.simplecache.SimpleCache",
}


class KeepingCache(FlaskSimpleCache, KeepingSimpleCache):
    """flask-caching's SimpleCache, never evicting a live entry (a :class:`~.keeping_cache.KeepingSimpleCache`)."""


def session_cache(app: Flask, settings: Settings, given: Cache | None) -> Cache:
    """The cache of *app*'s sessions: *given* (``MCP(cache=...)``), or one built from ``MCP_CACHE_*``.

    :raises ~flask_mcp.ConfigurationError: a configuration that can never work, naming its key:
        an unknown cache type, a malformed Redis URL, a Cluster or Sentinel cache without its
        nodes. A store that is only unreachable is no such error (see :mod:`flask_mcp.stores.failures`).
    """
    cache = given
    if cache is None:
        cache = Cache()
        config = settings.cache_config
        prefix = f"{settings.config_prefix}_CACHE_"
        _check_nodes(config, prefix)
        try:
            cache.init_app(app, config=_built_when_reachable(config))
        except (ImportError, AttributeError) as exc:
            raise ConfigurationError(
                f"{prefix}TYPE = {config.get('CACHE_TYPE')!r} is not a cache type flask-caching knows "
                "(SimpleCache, RedisCache, RedisClusterCache, RedisSentinelCache, ...)"
            ) from exc
        except (ValueError, TypeError) as exc:
            given_keys = ", ".join(sorted(prefix + key.removeprefix("CACHE_") for key in config if key != "CACHE_TYPE"))
            raise ConfigurationError(
                f"{prefix}TYPE = {config.get('CACHE_TYPE')!r} cannot use its settings ({given_keys}): {exc}"
            ) from exc
    return checked_cache(app, cache, settings.stateless)


#: The key a Redis Cluster or Sentinel cache cannot work without: where its nodes are.
_NODES = {"RedisClusterCache": "REDIS_CLUSTER", "RedisSentinelCache": "REDIS_SENTINELS"}


def _check_nodes(config: t.Mapping[str, t.Any], prefix: str) -> None:
    kind = str(config.get("CACHE_TYPE", "")).rpartition(".")[2]
    key = _NODES.get(kind)
    if key is not None and not config.get(f"CACHE_{key}"):
        raise ConfigurationError(
            f"{prefix}TYPE = {kind!r} needs {prefix}{key}: the nodes it connects to "
            + ("(host1:port1,host2:port2,...)" if kind == "RedisClusterCache" else "([(host, port), ...])")
        )


def checked_cache(app: Flask, cache: Cache, stateless: bool = False) -> Cache:
    """*cache*, once it is known to be set up on *app* and able to hold sessions when they are needed.

    :raises RuntimeError: the cache is not set up on the app, or is a NullCache for a server with sessions.
    """
    backend = app.extensions.get("cache", {}).get(cache)
    if backend is None:
        raise RuntimeError("the Cache passed to MCP(cache=...) must be set up on the app first (cache.init_app)")
    if isinstance(backend, NullCache) and not stateless:
        raise RuntimeError(
            "MCP sessions cannot live in a NullCache: set MCP_CACHE_TYPE (SimpleCache, RedisCache, ...) "
            "or MCP_STATELESS = True"
        )
    return cache


def ephemeral_cache(app: Flask, settings: Settings, session: Cache, *, given: Cache | None, own: Cache | None) -> Cache:
    """The cache of short-lived entries: *own* (``MCP(ephemeral_cache=...)``), or one configured like *session*.

    :param given: the session cache the app passed (``MCP(cache=...)``), whose
        configuration the ephemeral one then follows.
    """
    if own is not None:
        return checked_cache(app, own, settings.stateless)
    if given is None:
        config = dict(settings.cache_config)
    else:
        # A cache the app built: what init_app gave it, as flask-caching merges it.
        config = {key: value for key, value in app.config.items() if key.startswith("CACHE_")}
        config.update(getattr(session, "config", None) or {})
    config["CACHE_KEY_PREFIX"] = str(config.get("CACHE_KEY_PREFIX") or "") + "e:"
    config.update(settings.ephemeral_cache_overrides)
    if config.get("CACHE_TYPE") in _SIMPLE_CACHE_TYPES or config.get("CACHE_TYPE") is FlaskSimpleCache:
        config["CACHE_TYPE"] = KEEPING_CACHE
    cache = Cache()
    cache.init_app(app, config=_built_when_reachable(config))
    return cache


def _built_when_reachable(config: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    # A cluster that is away must not fail init_app: its backend is then built at its first use.
    if "CACHE_TYPE" not in config:
        return dict(config)
    return {**config, "CACHE_TYPE": cluster_type(config["CACHE_TYPE"])}


class BoundCache(Cache):
    """A flask-caching :class:`~flask_caching.Cache` whose backend is that of one app, resolved once.

    ``Cache`` looks its backend up in ``current_app`` at every call (about a
    microsecond, and an app context needed); the stores of one app's state
    call it several times a request, so they get this one, which behaves
    the same without the lookup.

    :param backend: the backend ``init_app`` made for the app.
    """

    def __init__(self, backend: BaseCache) -> None:
        super().__init__()
        self._backend = backend

    @property
    def cache(self) -> SimpleCache:
        """The backend (typed as flask-caching types it)."""
        return self._backend  # type: ignore[return-value]

    # The calls of every request, straight to the backend (``Cache`` goes through :attr:`cache`).

    def get(self, key: str) -> t.Any:
        """The backend's ``get``."""
        return self._backend.get(key)

    def get_many(self, *keys: str) -> list[t.Any]:
        """The backend's ``get_many``."""
        return self._backend.get_many(*keys)


def bound(app: Flask, cache: Cache) -> Cache:
    """*cache* with its backend on *app* resolved once (:class:`BoundCache`), also known to *app* as a cache.

    A Redis backend is :func:`~flask_mcp.stores.topology.fitted` to the stores: it reads
    from the master, adds in one command and reads several keys slot by slot on a cluster.
    """
    backend = fitted(app.extensions["cache"][cache])
    found = BoundCache(backend)
    app.extensions["cache"][found] = backend
    return found
