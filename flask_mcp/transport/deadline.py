"""Deadlines for request bodies, and a budget of threads that may wait for slow ones.

A client that sends its body one byte a second holds a server thread for as
long as it likes: each byte arrives well within any socket timeout. Only a
deadline on the whole body ends that, and a blocked read cannot be
interrupted from inside. So the watchdog, one thread per process, shuts the
reading half of a body's socket when it must stop waiting: the read returns
early, and the adapter answers.

A deadline alone still lets a few slow clients hold every thread of a
threaded server (gunicorn's gthread) until it passes. So a body gets a short
grace (``MCP_BODY_GRACE``) to arrive; one still coming in after it needs one
of the process's waiting places (``MCP_BODY_WAITERS``), and is refused (503)
when they are all taken. A body that was already in the socket's buffer is
read long before its grace ends, and never takes a place.

Registering a body costs a heap push, not a thread. The watchdog thread
starts with the first body and ends at most :data:`LINGER` seconds after the
last one was read (not at once: a busy process would start a thread per
request).
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import logging
import math
import socket
import threading
import time
import typing as t

__all__ = ["BUSY", "LATE", "BodyWatchdog", "socket_of"]

logger = logging.getLogger("flask_mcp")

#: Seconds a body deadline may be overrun by at most.
GRANULARITY = 0.25
#: Seconds the watchdog thread outlives the last body it watched (so that a
#: busy process does not start a thread per request).
LINGER = 1.0
#: Why a body was cut off: every waiting place was taken when its grace ended.
BUSY = "busy"
#: Why a body was cut off: its deadline passed.
LATE = "late"


def socket_of(environ: t.Mapping[str, t.Any]) -> socket.socket | None:
    """The client's socket, as werkzeug's and gunicorn's servers expose it; ``None`` elsewhere (CGI, tests)."""
    sock = environ.get("gunicorn.socket") or environ.get("werkzeug.socket")
    return sock if hasattr(sock, "shutdown") else None


@dataclasses.dataclass
class _Body:
    sock: socket.socket
    #: When the whole body must be in (monotonic); ``inf``: never.
    deadline: float
    #: The most bodies of the process that may wait past their grace; ``None``: any number.
    waiters: int | None
    #: Still within its grace: past it, the body needs a waiting place.
    in_grace: bool
    #: Whether it holds one of the process's waiting places.
    waiting: bool = False
    #: :data:`BUSY` or :data:`LATE` once the watchdog cut it off.
    refused: str | None = None


class BodyWatchdog:
    """Cuts off bodies past their deadline, or past their grace when no waiting place is free."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int]] = []
        self._bodies: dict[int, _Body] = {}
        self._ids = itertools.count()
        self._lock = threading.Condition()
        self._thread: threading.Thread | None = None
        #: Bodies of this process holding a waiting place (past their grace, still arriving).
        self.waiting = 0

    def watch(
        self, sock: socket.socket, seconds: float | None, grace: float | None = None, waiters: int | None = None
    ) -> int:
        """Start the clocks of the body arriving on *sock*; returns the token :meth:`done` takes.

        :param seconds: the whole body's deadline; ``None``: none.
        :param grace: seconds the body may take without a waiting place; ``None``: no grace, no places.
        :param waiters: the most bodies of the process that may be waiting past their grace at once.
        """
        now = time.monotonic()
        deadline = now + seconds if seconds is not None else math.inf
        in_grace = grace is not None and waiters is not None and now + grace < deadline
        body = _Body(sock, deadline, waiters, in_grace)
        token = next(self._ids)
        first = now + t.cast(float, grace) if in_grace else deadline
        with self._lock:
            self._bodies[token] = body
            if first < math.inf:
                heapq.heappush(self._heap, (first, token))
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name="mcp-body-deadline", daemon=True)
                    self._thread.start()
                elif self._heap[0][1] == token:
                    self._lock.notify()  # an earlier time than the one the watchdog sleeps towards
        return token

    def done(self, token: int) -> str | None:
        """The body was read (or failed): stop its clocks and give back its place.

        :returns: ``None`` when it was read in time, else why it was cut off
            (:data:`BUSY`, :data:`LATE`).
        """
        with self._lock:
            body = self._bodies.pop(token, None)
            if body is None:
                return None
            if body.waiting:
                self.waiting -= 1
            return body.refused

    @property
    def watching(self) -> int:
        """Bodies being read right now under the watchdog's clocks."""
        with self._lock:
            return len(self._bodies)

    def _run(self) -> None:
        with self._lock:
            while True:
                while self._heap and self._is_stale(self._heap[0][1]):
                    heapq.heappop(self._heap)  # read in time, or already cut off: forget it
                if not self._heap:
                    self._thread = None  # nothing left to time: the next body starts a thread again
                    return
                wait = self._heap[0][0] - time.monotonic()
                if wait > 0:
                    # At most a few wake-ups a second, however many bodies are read: a
                    # deadline is kept to within GRANULARITY seconds. Never longer than
                    # LINGER, so that the thread ends soon after the last body was read.
                    self._lock.wait(min(max(wait, GRANULARITY), LINGER))
                    continue
                _, token = heapq.heappop(self._heap)
                self._step(token, self._bodies[token])

    def _is_stale(self, token: int) -> bool:
        body = self._bodies.get(token)
        return body is None or body.refused is not None

    def _step(self, token: int, body: _Body) -> None:
        """The body's grace or deadline has come (called with the lock held)."""
        if body.in_grace:
            body.in_grace = False
            if body.waiters is None or self.waiting < body.waiters:
                body.waiting = True
                self.waiting += 1
                if body.deadline < math.inf:
                    heapq.heappush(self._heap, (body.deadline, token))
                return
            body.refused = BUSY
        else:
            body.refused = LATE
        try:
            body.sock.shutdown(socket.SHUT_RD)
        except OSError:  # already closed
            logger.debug("body deadline: socket already closed")
