"""The values handlers keep with :attr:`ctx.state <flask_mcp.Context.state>`, in the cache.

One record per scope (a session, or a principal's subject) holds every key
of that scope with its JSON text and its expiry; the record lives as long
as its longest-lived key. Writers take the scope's :func:`store_lock`, so
two requests of one scope on different processes (a shared Redis) never
lose each other's keys. The record's size is bounded: a ``set`` that would
make the keys and their texts longer than ``max_bytes`` is refused. Each
record also counts against its writer's quota of ``"state"``
(:class:`~flask_mcp.stores.quota.StoreGuard`): past it, or with the store
full, a ``set`` is refused with HTTP 429 before anything is stored.
"""

from __future__ import annotations

import hashlib
import math
import time
import typing as t

from ..policies.store_keys import key as store_key
from .lock import store_lock

if t.TYPE_CHECKING:
    from .quota import StoreGuard

__all__ = ["CacheStateStore"]

_KEY = "ctxstate"


class CacheStateStore:
    """A :class:`~flask_mcp.core.context.StateStore` in a flask-caching cache (shared by every worker on Redis).

    :param cache: the flask-caching ``Cache``.
    :param ttl: seconds a value lives when set without its own (``MCP_CONTEXT_STATE_TTL``).
    :param max_bytes: the most one scope may hold, keys and texts in UTF-8 (``MCP_CONTEXT_STATE_MAX_BYTES``).
    :param clock: seconds since the epoch; tests pass their own.
    :param guard: the quotas and room of the store; ``None``: only *max_bytes* bounds a write.
    """

    #: The kind of entry ``ctx.state`` records are in the :class:`~flask_mcp.stores.quota.StoreGuard`.
    KIND = "state"

    def __init__(
        self,
        cache: t.Any,
        ttl: int,
        max_bytes: int,
        clock: t.Callable[[], float] = time.time,
        *,
        guard: StoreGuard | None = None,
    ) -> None:
        self.cache = cache
        self.ttl = ttl
        self.max_bytes = max_bytes
        self.clock = clock
        self.guard = guard

    def _record_key(self, scope: str) -> str:
        # Hashed: a subject may be long, or hold characters a backend dislikes in keys.
        return store_key(_KEY, hashlib.sha256(scope.encode("utf-8")).hexdigest()[:40])

    def _load(self, record_key: str) -> dict[str, list[t.Any]]:
        record = self.cache.get(record_key)
        if not isinstance(record, dict):
            return {}
        now = self.clock()
        return {
            key: entry
            for key, entry in record.items()
            if isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str) and entry[1] > now
        }

    def get(self, scope: str, key: str) -> str | None:
        """The text under *key*, unless it expired."""
        entry = self._load(self._record_key(scope)).get(key)
        return None if entry is None else t.cast(str, entry[0])

    def set(self, scope: str, key: str, text: str, ttl: int | None, caller: str | None = None) -> None:
        """Keep *text* under *key* for *ttl* seconds (``None``: :attr:`ttl`).

        :param caller: whose quota the record counts against; ``None``: nobody's (a write the server makes).
        :raises ValueError: the scope would hold more than :attr:`max_bytes`.
        :raises ~flask_mcp.protocol.errors.StoreRefused: past the caller's quota, or the store is full.
        """
        record_key = self._record_key(scope)
        with store_lock(self.cache, record_key):
            record = self._load(record_key)
            record[key] = [text, self.clock() + (self.ttl if ttl is None else ttl)]
            size = _size(record)
            if size > self.max_bytes:
                raise ValueError(
                    f"ctx.state would hold {size} bytes, more than MCP_CONTEXT_STATE_MAX_BYTES ({self.max_bytes}); "
                    "delete keys or keep less"
                )
            self._save(record_key, record, caller)

    def delete(self, scope: str, key: str, caller: str | None = None) -> None:
        """Forget *key*."""
        record_key = self._record_key(scope)
        with store_lock(self.cache, record_key):
            record = self._load(record_key)
            if record.pop(key, None) is not None:
                self._save(record_key, record, caller)

    def _save(self, record_key: str, record: dict[str, list[t.Any]], caller: str | None) -> None:
        guard = self.guard if caller is not None else None
        if not record:
            self.cache.delete(record_key)
            if guard is not None:
                guard.release(t.cast(str, caller), self.KIND, record_key)
            return
        # The record lives as long as its longest-lived key; a key's own expiry is checked on reading.
        timeout = max(1, math.ceil(max(entry[1] for entry in record.values()) - self.clock()))
        if guard is not None:
            # Counted before it is stored: a refusal leaves the store as it was.
            guard.reserve(t.cast(str, caller), self.KIND, record_key, _size(record), timeout)
        self.cache.set(record_key, record, timeout=timeout)


def _size(record: dict[str, list[t.Any]]) -> int:
    """Bytes of a record's keys and texts, in UTF-8."""
    return sum(len(name.encode("utf-8")) + len(entry[0].encode("utf-8")) for name, entry in record.items())
