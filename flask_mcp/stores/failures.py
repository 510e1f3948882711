"""What a store that does not answer looks like, and what the client is told then.

A Redis that is down, restarting or unreachable makes every cache call
raise. Those errors must not become HTTP 500s: the request did nothing wrong,
and the same request will work once the store is back. Transports catch the
errors named here and answer HTTP 503 with ``Retry-After`` and the JSON-RPC
error :data:`~flask_mcp.protocol.jsonrpc.SERVICE_UNAVAILABLE`; the protocol core lets
them through to the transport instead of turning them into -32603.
"""

from __future__ import annotations

import logging
import typing as t

from ..protocol.jsonrpc import SERVICE_UNAVAILABLE, MCPError
from .deferred import DeferredRedisClusterCache

__all__ = ["RETRY_AFTER", "store_errors", "unavailable", "warn_store_unreachable"]

logger = logging.getLogger("flask_mcp")

#: Seconds a client is told to wait before retrying while the store is down.
RETRY_AFTER = 1


def store_errors(*backends: t.Any) -> tuple[type[BaseException], ...]:
    """The exceptions that mean one of *backends* (cachelib caches) did not answer.

    Only the store's own error classes: a tool's bug must still be a bug.
    Redis Cluster's client raises a few of its own that are no
    ``RedisError`` (a slot with no node while the cluster changes, a
    cluster that cannot be reached): they mean the same. A cluster backend
    still to be built (:mod:`.deferred`) raises them too.
    """
    errors: list[type[BaseException]] = []
    for backend in backends:
        is_redis = getattr(backend, "_write_client", None) is not None  # RedisCache and its kin
        if is_redis or isinstance(backend, DeferredRedisClusterCache):
            from redis.exceptions import RedisClusterException, RedisError

            errors += [RedisError, RedisClusterException]
    return tuple(dict.fromkeys(errors))


def unavailable(exc: BaseException) -> MCPError:
    """The error a client gets while the store is down; it names the cause, not the store's address.

    The full detail (address included) goes to the server's log, once per answer.
    """
    logger.warning("MCP store unavailable: %s: %s", type(exc).__name__, exc)
    return MCPError(
        SERVICE_UNAVAILABLE,
        f"Service Unavailable: the session store did not answer ({type(exc).__name__}); retry in {RETRY_AFTER} s",
        {"retryAfter": RETRY_AFTER},
    )


def warn_store_unreachable(exc: BaseException, what: str = "the store") -> None:
    """Say, once when the app is set up, that *what* did not answer and the process starts anyway.

    A store that is away at start (a restart, a failover, the app coming up before its Redis)
    is no reason to fail the worker's import: gunicorn would take a worker that fails to boot
    as the whole server's failure. Requests that need the store are answered 503 with
    ``Retry-After`` until it answers, and served normally from then on.
    """
    logger.warning(
        "MCP: %s could not be reached while the app was set up (%s: %s); this process starts anyway, "
        "answers 503 with Retry-After while it is away, and serves normally as soon as it answers",
        what,
        type(exc).__name__,
        exc,
    )
