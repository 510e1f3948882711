"""Cross-request messages of a session: answers, cancellations, in-flight ids.

A handler that sent the client a request waits for the answer here; the
answer arrives on another POST, possibly in another thread, process or host.
Everything is kept in the (ephemeral) cache, never in process memory.

Nothing a client sends can make the mailbox keep more than the server asked
for: answers are kept only for requests the server sent, cancellations only
for requests in flight. In-flight markers live as long as the worker that
holds them: a heartbeat renews them every third of :attr:`Mailbox.inflight_ttl`,
so a worker that dies frees its ids within that time instead of locking them.
The heartbeat's thread runs only while the process holds markers, and
:data:`LINGER` after the last is released (a busy process would otherwise
start a thread a request); it ends at once when the app is shut down
(:meth:`Mailbox.stop`). In a store in this process's memory, whose markers
cannot outlive their worker, markers have no expiry and no heartbeat
(:mod:`~flask_mcp.stores.local_markers`).
"""

from __future__ import annotations

import logging
import threading
import time
import typing as t

from flask_caching import Cache

from ..policies.store_keys import key as store_key
from .local_markers import LocalMarkers
from .waker import Waker

__all__ = ["LINGER", "InFlight", "Mailbox"]

#: Seconds the heartbeat's thread outlives the last marker released, for the next request's claim.
LINGER = 1.0

logger = logging.getLogger("flask_mcp")


class InFlight(t.NamedTuple):
    """A request this process holds in flight (:meth:`Mailbox.claim`): its marker's key and its cancellation's."""

    marker: str
    cancel: str


class Mailbox:
    """Cross-request messages of one session, kept in the same cache.

    A handler that sent the client a request (``sampling/createMessage``, ...)
    waits for the answer here; the answer arrives on another POST, possibly
    in another thread, process or host, and is dropped here. The same goes
    for cancellations and for the ids of requests in flight.

    :param cache: the ephemeral cache.
    :param ttl: how long an undelivered entry is kept, in seconds.
    :param poll_interval: how often the store is looked at for answers, when no *waker* is given.
    :param inflight_ttl: seconds an in-flight marker outlives the last
        heartbeat of the worker holding it.
    :param waker: the process's watcher of the store.
    :param local: the markers of *cache*'s backend when it lives in this process's memory
        (:func:`~flask_mcp.stores.local_markers.local_markers_for`): they are then kept there
        without expiry or heartbeat.
    """

    def __init__(
        self,
        cache: Cache,
        ttl: int,
        poll_interval: float = 0.05,
        *,
        inflight_ttl: int = 60,
        waker: Waker | None = None,
        local: LocalMarkers | None = None,
    ) -> None:
        self.cache = cache
        self._local = local
        self.ttl = ttl
        #: Wakes waiting handlers; one per process, shared with the event streams.
        self.waker = waker or Waker(poll_interval)
        self.inflight_ttl = inflight_ttl
        # In-flight markers this process holds, with the backend to renew them
        # in (the heartbeat runs outside any app context, where ``cache`` is unusable).
        self._held: dict[str, t.Any] = {}
        self._held_lock = threading.Lock()
        # Wakes the heartbeat when the app is shut down, so that it ends at once.
        self._stopping = threading.Condition(self._held_lock)
        self._stopped = False
        # When the last marker held was released (monotonic): LINGER later, the heartbeat ends.
        self._idle_since = 0.0
        self._heartbeat: threading.Thread | None = None

    def expect(self, session_id: str, request_id: str) -> None:
        """Announce that *request_id* awaits an answer (only expected answers are kept)."""
        self.cache.set(_awaited(session_id, request_id), True, timeout=self.ttl)

    def deliver(self, session_id: str, request_id: t.Any, message: dict[str, t.Any]) -> bool:
        """Store the client's answer; ``False`` when nobody waits for it."""
        if not isinstance(request_id, str) or not self.cache.get(_awaited(session_id, request_id)):
            return False
        self.cache.set(_answer(session_id, request_id), message, timeout=self.ttl)
        return True

    def wait(
        self,
        session_id: str,
        request_id: str,
        timeout: float,
        cancelled: t.Callable[[], bool],
        owner: t.Any = None,
        idle: t.Callable[[], None] | None = None,
    ) -> dict[str, t.Any] | None:
        """The client's answer, or ``None`` after *timeout* seconds or a cancellation.

        :param owner: the id of the request whose handler waits: its
            cancellation is watched too, so it ends the wait at once.
        :param idle: called between two looks at the store (a few times a
            second at most): a stream sends its keep-alives meanwhile.
        """
        key = _answer(session_id, request_id)
        watched = {key: None}
        if owner is not None:
            watched[_cancel(session_id, owner)] = None
        deadline = time.monotonic() + timeout
        try:
            while True:
                answer = self.cache.get(key)
                if answer is not None:
                    return t.cast(dict[str, t.Any], answer)
                remaining = deadline - time.monotonic()
                if remaining <= 0 or cancelled() or self.waker.closed:  # closed: the app is shut down
                    return None
                if idle is not None:
                    idle()
                # The answer may land in another process: the shared cache is
                # the only place to look. The process's one watcher looks for
                # every waiter at once and wakes this one when its key changes.
                # A quarter of a second at most: *cancelled* may look at more than the watched keys.
                self.waker.wait(self.cache.cache, watched, min(remaining, 0.25))
        finally:
            self.cache.delete_many(key, _awaited(session_id, request_id))

    def cancel(self, session_id: str, request_id: t.Any) -> bool:
        """Record ``notifications/cancelled`` for a request of the session in flight.

        A cancellation of an unknown or finished request writes nothing, so a
        client cannot fill the cache by cancelling ids it never sent.

        :returns: whether the request was in flight.
        """
        if not self.cache.get(_inflight(session_id, request_id)):
            return False
        self.cache.set(_cancel(session_id, request_id), True, timeout=self.ttl)
        return True

    def is_cancelled(self, session_id: str, request_id: t.Any) -> bool:
        """Whether the client cancelled that request."""
        return bool(self.cache.get(_cancel(session_id, request_id)))

    def cancelled(self, held: InFlight) -> bool:
        """Whether the client cancelled the request *held*."""
        if self._local is not None:
            return self._local.holds(held.cancel)  # a cancellation's value is always True
        return bool(self.cache.get(held.cancel))

    def claim(self, session_id: str, request_id: t.Any) -> InFlight | None:
        """Mark a request id in flight; ``None`` if the session already has one with that id.

        :returns: the request held, to hand to :meth:`cancelled` and :meth:`give_back`.
        """
        key = _inflight(session_id, request_id)
        if self._local is not None:
            return InFlight(key, _cancel_of(key)) if self._local.add(key) else None
        if not self.cache.add(key, True, timeout=self.inflight_ttl):
            return None
        with self._held_lock:
            self._held[key] = self.cache.cache
            if self._heartbeat is None:
                self._stopped = False
                self._heartbeat = threading.Thread(target=self._beat_while_held, name="mcp-inflight", daemon=True)
                self._heartbeat.start()
        return InFlight(key, _cancel_of(key))

    def inflight_key(self, session_id: str, request_id: t.Any) -> str:
        """The key of the request's in-flight marker: present while a live worker runs it."""
        return _inflight(session_id, request_id)

    def release(self, session_id: str, request_id: t.Any) -> None:
        """The request is answered: its id may be used again."""
        self.give_back(InFlight(_inflight(session_id, request_id), _cancel(session_id, request_id)))

    def give_back(self, held: InFlight) -> None:
        """The request *held* is answered: its id may be used again (:meth:`release`)."""
        if self._local is not None:
            self._local.drop(held.marker, held.cancel)
            return
        with self._held_lock:
            self._held.pop(held.marker, None)
            if not self._held:
                self._idle_since = time.monotonic()
        self.cache.delete_many(held.marker, held.cancel)

    def stop(self, timeout: float | None = None) -> None:
        """Stop renewing this process's markers (they expire on their own) and end the heartbeat.

        Called when the app is shut down (:meth:`flask_mcp.MCP.shutdown`).

        :param timeout: seconds to wait for the heartbeat's thread to end; ``None``: as long as it takes.
        """
        with self._held_lock:
            self._held.clear()
            self._stopped = True
            self._stopping.notify_all()
            thread = self._heartbeat
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def beat(self) -> None:
        """Renew every in-flight marker this process holds (the heartbeat's one step)."""
        with self._held_lock:
            held = list(self._held.items())
        for key, backend in held:
            try:
                backend.set(key, True, timeout=self.inflight_ttl)
                with self._held_lock:
                    released = key not in self._held
                if released:  # released while being renewed: do not leave it behind
                    backend.delete(key)
            except Exception:  # the store is down: the next beat tries again
                logger.warning("could not renew the in-flight marker %r", key, exc_info=True)

    def _beat_while_held(self) -> None:
        due = time.monotonic() + self.inflight_ttl / 3
        while True:
            with self._held_lock:
                now = time.monotonic()
                while not (self._held and now >= due):
                    if self._stopped or (not self._held and now - self._idle_since >= LINGER):
                        self._heartbeat = None
                        return
                    # Nobody wakes it when the last marker goes (a request's cost): it looks every LINGER.
                    self._stopping.wait(min(due - now, LINGER) if self._held else self._idle_since + LINGER - now)
                    now = time.monotonic()
            self.beat()
            due = time.monotonic() + self.inflight_ttl / 3


# Every key of a session's mailbox carries the session's tag: a wait's answer and its
# await marker are deleted together, a release deletes the marker and the cancellation.


def _awaited(session_id: str, request_id: str) -> str:
    return store_key("await", session_id, request_id)


def _answer(session_id: str, request_id: str) -> str:
    return store_key("answer", session_id, request_id)


def _inflight(session_id: str, request_id: t.Any) -> str:
    # repr: 1 and "1" are different JSON-RPC ids.
    return store_key("inflight", session_id, repr(request_id))


def _cancel(session_id: str, request_id: t.Any) -> str:
    return store_key("cancel", session_id, repr(request_id))


def _cancel_of(marker: str) -> str:
    # The cancellation of the request whose in-flight marker is *marker*: the same key
    # in the other family (what _cancel builds, without hashing the tag again).
    return "cancel" + marker[len("inflight") :]
