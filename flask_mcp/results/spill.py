"""Oversized tool results kept for a while and read back as resources.

A tool registered with ``max_result_bytes`` and ``spill_to_resource=True``
answers an oversized call with a ``resource_link`` instead of the result;
the full text waits in the cache until the client reads it with
``resources/read`` or its time is up. The link's token is 32 random bytes,
and the result is bound to the caller whose call made it
(:func:`spill_owner`): the authenticated subject, and the handshake session
when there is one. A link made in a session is read in that session only; a
modern-era link (no session) by the same principal only, whoever else holds it.
Each kept text counts against the quota of ``"spill"`` of the caller whose
call made it, when the store is given a way to count (:class:`Reserve`).
"""

from __future__ import annotations

import secrets
import typing as t

from ..policies.store_keys import key as store_key

if t.TYPE_CHECKING:
    from ..policies.principal import Principal

__all__ = ["SPILL_URI_PREFIX", "CacheResultStore", "Reserve", "ResultStore", "spill_owner", "spill_token", "spill_uri"]

#: URIs of spilled results; ``resources/read`` serves them from the store.
SPILL_URI_PREFIX = "mcp-result://"

_KEY = "spill"


class ResultStore(t.Protocol):
    """Where spilled results wait to be read."""

    def put(self, text: str, mime_type: str, ttl: int, owner: str | None, caller: str | None = None) -> str:
        """Keep *text* for *ttl* seconds and return its token; *caller* is whose quota it spends.

        :raises ~flask_mcp.protocol.errors.StoreRefused: the caller's quota is spent, or the store is full.
        """
        ...

    def get(self, token: str, owner: str | None) -> tuple[str, str] | None:
        """The text and MIME type stored under *token* for *owner*, or ``None``."""
        ...


class Reserve(t.Protocol):
    """Counts an item against a caller's quota before it is stored (:meth:`.StoreGuard.reserve`)."""

    def __call__(self, caller: str, kind: str, item: str, size: int, ttl: float) -> None: ...


class CacheResultStore:
    """A :class:`ResultStore` in a flask-caching cache (shared by every worker on Redis).

    :param cache: the flask-caching ``Cache``.
    :param reserve: counts each result against its caller's quota of ``"spill"``; ``None``: nothing is counted.
    """

    def __init__(self, cache: t.Any, reserve: Reserve | None = None) -> None:
        self.cache = cache
        self.reserve = reserve

    def put(self, text: str, mime_type: str, ttl: int, owner: str | None, caller: str | None = None) -> str:
        """Store under a fresh random token; ``cache.add`` never overwrites another result."""
        for _ in range(3):
            token = secrets.token_urlsafe(32)
            key = store_key(_KEY, token)
            if self.reserve is not None and caller is not None:
                self.reserve(caller, "spill", key, len(text.encode("utf-8", "surrogatepass")), ttl)
            if self.cache.add(key, {"text": text, "mime": mime_type, "owner": owner}, timeout=ttl):
                return token
        raise RuntimeError("could not store a spilled tool result; is the cache reachable?")

    def get(self, token: str, owner: str | None) -> tuple[str, str] | None:
        """The stored result, unless it expired or belongs to another caller (or session)."""
        record = self.cache.get(store_key(_KEY, token))
        if not isinstance(record, dict) or record.get("owner") != owner:
            return None
        return record["text"], record["mime"]


def spill_uri(token: str) -> str:
    """The resource URI of a spilled result."""
    return f"{SPILL_URI_PREFIX}{token}"


def spill_token(uri: str) -> str | None:
    """The token of a spilled-result URI, or ``None`` for any other URI."""
    return uri[len(SPILL_URI_PREFIX) :] or None if uri.startswith(SPILL_URI_PREFIX) else None


def spill_owner(principal: Principal | None, session_id: str | None) -> str:
    """Whose a spilled result is: the caller's subject, and its handshake session when there is one.

    Both eras bind a result to its caller: the handshake era through the
    session (itself bound to its principal), the modern era, which has no
    session, through the authenticated subject. Callers without
    authentication are one anonymous caller to the server, in the modern era
    as everywhere else.
    """
    subject = principal.subject if principal is not None else ""
    return f"{subject}\x00{session_id or ''}"
