"""Sessions of the handshake era, kept in a flask-caching cache.

Every piece of cross-request state lives in the cache, never in process
memory, so any worker process or host sharing the cache (Redis in
production) can serve any request of a session.
"""

from __future__ import annotations

import secrets
import time
import typing as t

from flask_caching import Cache

from .server import ClientState

__all__ = ["SessionStore"]

_KEY = "session:"


class SessionStore:
    """Create, load, save and delete sessions.

    :param cache: a flask-caching :class:`~flask_caching.Cache` bound to the app.
    :param ttl: idle lifetime in seconds; every use extends it.
    """

    def __init__(self, cache: Cache, ttl: int) -> None:
        self.cache = cache
        self.ttl = ttl
        # Re-storing the session on every request just to push its expiry
        # back would double the cache round trips; refreshing once a tenth
        # of the lifetime has passed keeps it alive at a fraction of the cost.
        self._refresh_after = max(1.0, ttl / 10)

    def create(self, state: ClientState) -> str:
        """Store *state* under a new random id and return the id.

        The id is 32 bytes from :mod:`secrets`, URL-safe base64 (visible
        ASCII, as the spec requires). ``cache.add`` stores only if the key is
        free, atomically on Redis, so two workers can never share an id.
        """
        for _ in range(3):
            session_id = secrets.token_urlsafe(32)
            if self.cache.add(_KEY + session_id, self._record(state), timeout=self.ttl):
                return session_id
        raise RuntimeError("could not store a new MCP session; is the session cache reachable?")

    def load(self, session_id: str) -> ClientState | None:
        """The state of a live session, or ``None`` if unknown, expired or deleted."""
        record = self.cache.get(_KEY + session_id)
        if not isinstance(record, dict):
            return None
        state = ClientState.from_dict(record)
        if time.time() - record.get("t", 0) > self._refresh_after:
            self.save(session_id, state)
        return state

    def save(self, session_id: str, state: ClientState) -> None:
        """Store *state* again, which also restarts the idle timeout."""
        self.cache.set(_KEY + session_id, self._record(state), timeout=self.ttl)

    def delete(self, session_id: str) -> bool:
        """End a session; ``False`` if it did not exist."""
        key = _KEY + session_id
        if self.cache.get(key) is None:
            return False
        self.cache.delete(key)
        return True

    @staticmethod
    def _record(state: ClientState) -> dict[str, t.Any]:
        record = state.to_dict()
        record["t"] = time.time()
        return record
