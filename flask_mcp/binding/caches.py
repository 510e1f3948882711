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
"""

from __future__ import annotations

import typing as t

from cachelib import BaseCache
from flask_caching import Cache
from flask_caching.backends import NullCache
from flask_caching.backends import SimpleCache as FlaskSimpleCache

from ..policies.keeping_cache import KeepingSimpleCache
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
    """The cache of *app*'s sessions: *given* (``MCP(cache=...)``), or one built from ``MCP_CACHE_*``."""
    cache = given
    if cache is None:
        cache = Cache()
        cache.init_app(app, config=settings.cache_config)
    return checked_cache(app, cache, settings.stateless)


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
    cache.init_app(app, config=config)
    return cache


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
