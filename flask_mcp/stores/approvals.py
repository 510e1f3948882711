"""Spent approval nonces in the shared store (:class:`~flask_mcp.core.approval.ApprovalLedger`).

A modern call's approval is answered on a retry that may reach any process;
each nonce is spent with the store's atomic ``add`` (``SET NX`` on Redis), so
of two processes seeing the same answer exactly one runs the tool.
"""

from __future__ import annotations

import math
import typing as t

from ..policies.store_keys import key as store_key

__all__ = ["CacheLedger"]

_SPENT = "approval"


class CacheLedger:
    """An :class:`~flask_mcp.core.approval.ApprovalLedger` in a flask-caching cache (the ephemeral one)."""

    def __init__(self, cache: t.Any) -> None:
        self.cache = cache

    def spend(self, nonce: str, ttl: float) -> bool:
        """``True`` the first time *nonce* is spent; the mark outlives the state that carries it."""
        return bool(self.cache.add(store_key(_SPENT, nonce), 1, timeout=max(1, math.ceil(ttl))))
