"""What each caller may make the shared short-lived store keep, per kind, and whether it has room.

Sessions are bounded by :mod:`flask_mcp.stores.admission`. Everything else a
client can make the server keep for a while (``ctx.state``, spilled
results, cached results, task records) goes to the ephemeral cache, which
one caller could otherwise fill until it evicts what it kept for everybody
else. :class:`StoreGuard` is asked before each such write:

* every caller (:attr:`Call.caller <flask_mcp.core.client.Call.caller>`: the
  principal, else the remote address) has a quota per *kind* of entry, in
  entries and in bytes (``MCP_STORE_QUOTA_ENTRIES``, ``MCP_STORE_QUOTA_BYTES``);
* the store must have room (:func:`~flask_mcp.stores.capacity.threshold_capacity_of`,
  ``MCP_STORE_HIGH_WATER``).

Either refusal is :class:`~flask_mcp.protocol.errors.StoreRefused`: HTTP 429
(-31429) with ``Retry-After``, and nothing of anybody else is touched.

What a caller holds is kept in a *ledger* per caller and kind, one entry of
the same store: each item it keeps, with its size and expiry. Expired items
drop out of the ledger as they drop out of the store, so the quota counts
what is live, not what was ever written. Ledgers change under
:func:`~flask_mcp.stores.lock.store_lock`, so concurrent writes from several
processes (a shared Redis) never both take the last place.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import time
import typing as t

from ..policies.store_keys import key as store_key
from ..protocol.errors import StoreRefused
from .lock import store_lock

if t.TYPE_CHECKING:
    from .capacity import Capacity

__all__ = ["KINDS", "Quota", "StoreGuard"]

#: The kinds of client-driven entries the extension itself keeps (a store may name others).
KINDS = ("state", "spill", "result", "task")

_KEY = "quota"


@dataclasses.dataclass(frozen=True)
class Quota:
    """How much of one kind one caller may keep at once; ``None``: no bound of that measure."""

    entries: int | None
    max_bytes: int | None


class StoreGuard:
    """Per-caller, per-kind quotas of the short-lived store, and its room.

    A store calls :meth:`reserve` before it keeps an item for a caller and
    :meth:`release` when it deletes one early; items that expire need nothing.

    :param cache: the flask-caching ``Cache`` of the short-lived store (the ledgers live there too).
    :param quota: each caller's quota of every kind not named in *quotas*.
    :param capacity: the store's probe (``None`` when the backend has none).
    :param quotas: quotas of particular kinds.
    :param retry_after: seconds a caller refused for lack of room is told to wait.
    :param clock: seconds since the epoch; tests pass their own.
    """

    def __init__(
        self,
        cache: t.Any,
        quota: Quota,
        capacity: Capacity | None,
        *,
        quotas: t.Mapping[str, Quota] | None = None,
        retry_after: int = 30,
        clock: t.Callable[[], float] = time.time,
    ) -> None:
        self.cache = cache
        self.quota = quota
        self.capacity = capacity
        self.quotas = dict(quotas or {})
        self.retry_after = retry_after
        self.clock = clock

    def quota_of(self, kind: str) -> Quota:
        """Each caller's quota of *kind*."""
        return self.quotas.get(kind, self.quota)

    def reserve(self, caller: str, kind: str, item: str, size: int, ttl: float) -> None:
        """Count *item* (*size* bytes, kept *ttl* seconds) as held by *caller*; call it before storing the item.

        Keeping an item again (a new value under the same name) replaces its
        count. An item that is new or grows needs room in the caller's quota
        and in the store; one that shrinks is always counted.

        :param caller: whose quota it spends (:func:`~flask_mcp.policies.ratelimit.caller_key`).
        :param kind: what it is (``"state"``, ``"spill"``, ``"result"``, ``"task"``...), each with its own quota.
        :param item: its name, unique within the kind (the store's key, a token, a task id).
        :raises StoreRefused: the caller's quota of *kind* would be exceeded, or the store has no room.
        """
        quota = self.quota_of(kind)
        ledger_key = self._ledger_key(caller, kind)
        with store_lock(self.cache, ledger_key):
            now = self.clock()
            ledger = self._load(ledger_key, now)
            previous = ledger.get(item)
            grows = previous is None or size > previous[0]
            if grows:
                others = [entry for name, entry in ledger.items() if name != item]
                self._check_quota(kind, quota, others, size, now)
                self._check_room(f"no more {kind}", size)
            ledger[item] = [size, now + ttl]
            self._save(ledger_key, ledger, now)

    def release(self, caller: str, kind: str, item: str) -> None:
        """Stop counting *item*, which the store no longer keeps."""
        ledger_key = self._ledger_key(caller, kind)
        with store_lock(self.cache, ledger_key):
            now = self.clock()
            ledger = self._load(ledger_key, now)
            if ledger.pop(item, None) is not None:
                self._save(ledger_key, ledger, now)

    def usage(self, caller: str, kind: str) -> tuple[int, int]:
        """How many items of *kind*, and how many bytes, *caller* holds now."""
        ledger = self._load(self._ledger_key(caller, kind), self.clock())
        return len(ledger), int(sum(entry[0] for entry in ledger.values()))

    def check_room(self, size: int = 0) -> None:
        """Refuse when the store has no room for *size* more bytes, whoever asks.

        For stores that bound their callers themselves (task records) and
        need only the store's room.

        :raises StoreRefused: the store is at its high-water mark.
        """
        self._check_room("nothing more", size)

    def _check_quota(self, kind: str, quota: Quota, others: list[list[float]], size: int, now: float) -> None:
        over = None
        if quota.entries is not None and len(others) + 1 > quota.entries:
            over = f"{quota.entries} entries"
        elif quota.max_bytes is not None and sum(entry[0] for entry in others) + size > quota.max_bytes:
            over = f"{quota.max_bytes} bytes"
        if over is None:
            return
        # The quota frees up as the caller's items expire: the soonest one says when to come back.
        soonest = min((entry[1] for entry in others), default=now + self.retry_after)
        raise StoreRefused(
            f"Rate limit exceeded: this caller keeps as much {kind} as it may ({over}); "
            f"retry when some expires, or delete some",
            math.ceil(soonest - now),
        )

    def _check_room(self, what: str, size: int = 0) -> None:
        if self.capacity is not None and not self.capacity.has_room(size):
            raise StoreRefused(
                f"Rate limit exceeded: the server's short-lived store is full, {what} is kept; "
                f"retry in {self.retry_after} s",
                self.retry_after,
            )

    def _ledger_key(self, caller: str, kind: str) -> str:
        # Hashed: a caller is a subject or an address, of any length and alphabet.
        return store_key(_KEY, hashlib.sha256(caller.encode("utf-8")).hexdigest()[:40], kind)

    def _load(self, ledger_key: str, now: float) -> dict[str, list[float]]:
        ledger = self.cache.get(ledger_key)
        if not isinstance(ledger, dict):
            return {}
        return {
            name: entry
            for name, entry in ledger.items()
            if isinstance(entry, list) and len(entry) == 2 and entry[1] > now
        }

    def _save(self, ledger_key: str, ledger: dict[str, list[float]], now: float) -> None:
        if not ledger:
            self.cache.delete(ledger_key)
            return
        # The ledger lives as long as the longest-lived item it counts.
        self.cache.set(ledger_key, ledger, timeout=max(1, math.ceil(max(entry[1] for entry in ledger.values()) - now)))
