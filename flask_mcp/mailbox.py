"""Cross-request messages of a session: answers, cancellations, in-flight ids.

A handler that sent the client a request waits for the answer here; the
answer arrives on another POST, possibly in another thread, process or host.
Everything is kept in the session cache, never in process memory.
"""

from __future__ import annotations

import time
import typing as t

from flask_caching import Cache

__all__ = ["Mailbox"]


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
