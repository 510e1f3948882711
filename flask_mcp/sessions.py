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


class Mailbox:
    """Cross-request messages of one session, kept in the same cache.

    A handler that sent the client a request (``sampling/createMessage``, ...)
    waits for the answer here; the answer arrives on another POST, possibly
    in another thread, process or host, and is dropped here. The same goes
    for cancellations and for the ids of requests in flight.

    :param cache: the session cache.
    :param ttl: how long an undelivered entry is kept, in seconds.
    :param poll_interval: how often a waiting handler looks for its answer.
    """

    def __init__(self, cache: Cache, ttl: int, poll_interval: float = 0.02) -> None:
        self.cache = cache
        self.ttl = ttl
        self.poll_interval = poll_interval

    def expect(self, session_id: str, request_id: str) -> None:
        """Announce that *request_id* awaits an answer (only expected answers are kept)."""
        self.cache.set(f"await:{session_id}:{request_id}", True, timeout=self.ttl)

    def deliver(self, session_id: str, request_id: t.Any, message: dict[str, t.Any]) -> bool:
        """Store the client's answer; ``False`` when nobody waits for it."""
        if not isinstance(request_id, str) or not self.cache.get(f"await:{session_id}:{request_id}"):
            return False
        self.cache.set(f"answer:{session_id}:{request_id}", message, timeout=self.ttl)
        return True

    def wait(
        self, session_id: str, request_id: str, timeout: float, cancelled: t.Callable[[], bool]
    ) -> dict[str, t.Any] | None:
        """The client's answer, or ``None`` after *timeout* seconds or a cancellation."""
        key = f"answer:{session_id}:{request_id}"
        deadline = time.monotonic() + timeout
        try:
            while True:
                answer = self.cache.get(key)
                if answer is not None:
                    return t.cast(dict[str, t.Any], answer)
                if time.monotonic() >= deadline or cancelled():
                    return None
                # The answer may land in another process: the shared cache is
                # the only place to look, so look again shortly.
                time.sleep(self.poll_interval)
        finally:
            self.cache.delete_many(key, f"await:{session_id}:{request_id}")

    def cancel(self, session_id: str, request_id: t.Any) -> None:
        """Record ``notifications/cancelled`` for a request of the session."""
        self.cache.set(f"cancel:{session_id}:{request_id!r}", True, timeout=self.ttl)

    def is_cancelled(self, session_id: str, request_id: t.Any) -> bool:
        """Whether the client cancelled that request."""
        return bool(self.cache.get(f"cancel:{session_id}:{request_id!r}"))

    def claim(self, session_id: str, request_id: t.Any) -> bool:
        """Mark a request id in flight; ``False`` if the session already has one with that id."""
        return bool(self.cache.add(f"inflight:{session_id}:{request_id!r}", True, timeout=self.ttl))

    def release(self, session_id: str, request_id: t.Any) -> None:
        """The request is answered: its id may be used again."""
        self.cache.delete_many(f"inflight:{session_id}:{request_id!r}", f"cancel:{session_id}:{request_id!r}")
