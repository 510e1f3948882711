"""Cached tool results in the cache (:mod:`flask_mcp.core.result_cache`), shared by every process.

Each kept result is one entry whose key holds the tool, a generation
number of the tool, the digest of the arguments, a generation number of
those arguments, and the caller. Invalidating bumps a generation: every
entry made under the old number is never looked up again, for every
caller at once, and expires on its own. The generations never expire
(two integers per tool and per set of arguments ever invalidated). Each
entry counts against the quota of ``"result"`` of the caller whose call
made it (:class:`~flask_mcp.stores.quota.StoreGuard`); past it, or with the
store full, the result is simply not kept.
"""

from __future__ import annotations

import hashlib
import logging
import typing as t

from ..policies.store_keys import key as store_key
from ..protocol import jsonrpc
from ..protocol.errors import StoreRefused

if t.TYPE_CHECKING:
    from .quota import StoreGuard

__all__ = ["CacheResultCache"]

logger = logging.getLogger("flask_mcp")

_ENTRY = "rc"
_GENERATION = "rc-gen"


class CacheResultCache:
    """A :class:`~flask_mcp.core.result_cache.ResultCache` in a flask-caching cache (the ephemeral one).

    :param cache: the flask-caching ``Cache``.
    :param guard: the quotas and room of the store; ``None``: every result is kept.
    """

    def __init__(self, cache: t.Any, guard: StoreGuard | None = None) -> None:
        self.cache = cache
        self.guard = guard

    def _generations(self, tool: str, arguments: str) -> tuple[int, int]:
        # Both generations carry the tool's tag: one read, on one node of a cluster.
        found = self.cache.get_many(store_key(_GENERATION, tool), store_key(_GENERATION, tool, arguments))
        return tuple(value if isinstance(value, int) else 0 for value in found)  # type: ignore[return-value]

    def _entry(self, tool: str, arguments: str, caller: str) -> str:
        of_tool, of_arguments = self._generations(tool, arguments)
        text = f"{tool}\x00{of_tool}\x00{arguments}\x00{of_arguments}\x00{caller}"
        return store_key(_ENTRY, hashlib.sha256(text.encode("utf-8")).hexdigest()[:40])

    def load(self, tool: str, arguments: str, caller: str) -> dict[str, t.Any] | None:
        """The kept result, or ``None``."""
        found = self.cache.get(self._entry(tool, arguments, caller))
        return found if isinstance(found, dict) else None

    def keep(
        self,
        tool: str,
        arguments: str,
        caller: str,
        result: dict[str, t.Any],
        ttl: float,
        charged_to: str | None = None,
    ) -> None:
        """Keep *result* for *ttl* seconds (at least one), unless *charged_to*'s quota or the store's room says no."""
        key, timeout = self._entry(tool, arguments, caller), max(1, round(ttl))
        if self.guard is not None and charged_to is not None:
            try:
                self.guard.reserve(charged_to, "result", key, len(jsonrpc.dumps(result).encode("utf-8")), timeout)
            except StoreRefused as refused:
                # The call has its result; only the copy for later calls is given up.
                logger.info("tool %r: result not cached: %s", tool, refused.message)
                return
        self.cache.set(key, result, timeout=timeout)

    def invalidate(self, tool: str, arguments: str | None = None) -> None:
        """Forget the results of *tool* (for *arguments* only, when given)."""
        key = store_key(_GENERATION, tool) if arguments is None else store_key(_GENERATION, tool, arguments)
        # add() then inc(): a counter that is there is bumped atomically on Redis.
        self.cache.add(key, 0, timeout=0)
        self.cache.cache.inc(key)  # the backend's own (flask-caching does not wrap inc)
