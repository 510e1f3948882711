"""Tokens this process has verified, kept until they expire: a client's token is checked once, not per call.

A signed token (a JWT) says who it is for and until when; checking its
signature and claims gives the same answer on every call until it expires,
so a process keeps the :class:`~flask_mcp.Principal` it made and answers the
token's next calls from memory. What can change meanwhile is checked on each
hit all the same: the entry ends at the token's ``exp`` (plus the backend's
leeway), and a backend may say that a key it was verified with is gone.

Threat model. The entries are keyed by the whole token: only a caller who
holds the token reaches its entry, as the verification itself would have
allowed. The table is bounded (:data:`MAX_VERIFIED`), so a flood of distinct
valid tokens costs memory that does not grow; the oldest entry is dropped
first, and a dropped token is simply verified again. Invalid tokens are never
kept: every one of them pays the full verification.
"""

from __future__ import annotations

import threading
import typing as t

from ..policies.principal import Principal

__all__ = ["MAX_VERIFIED", "VerifiedTokens"]

#: The most tokens one table keeps (a process's distinct clients, roughly).
MAX_VERIFIED = 4096


class VerifiedTokens:
    """Verified tokens by their text, each with its principal and what it was verified with.

    :param size: the most entries kept; the oldest goes first.
    :param leeway: seconds a token is still accepted past its ``exp``.
    """

    def __init__(self, size: int = MAX_VERIFIED, leeway: float = 0) -> None:
        if size < 1:
            raise ValueError("a table of verified tokens needs room for one at least")
        self.size = size
        self.leeway = leeway
        self._entries: dict[str, tuple[Principal, t.Any]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, token: str, now: float) -> tuple[Principal, t.Any] | None:
        """The principal of *token* and what it was verified with, while it has not expired at *now*."""
        entry = self._entries.get(token)
        if entry is None:
            return None
        expires_at = entry[0].expires_at
        if expires_at is not None and now >= expires_at + self.leeway:
            self.drop(token)
            return None
        return entry

    def put(self, token: str, principal: Principal, verified_with: t.Any = None) -> None:
        """Keep *principal* for *token* (a token without ``exp`` is not kept: nothing would end it)."""
        if principal.expires_at is None:
            return
        with self._lock:
            entries = self._entries
            entries.pop(token, None)
            while len(entries) >= self.size:
                del entries[next(iter(entries))]  # the oldest: dicts keep their insertion order
            entries[token] = (principal, verified_with)

    def drop(self, token: str) -> None:
        """Forget *token*: its next call is verified again."""
        with self._lock:
            self._entries.pop(token, None)

    def clear(self) -> None:
        """Forget every token."""
        with self._lock:
            self._entries.clear()
