"""A deadline for request bodies, kept by one watchdog thread per process.

A client that sends its body one byte a second holds a server thread for as
long as it likes: each byte arrives well within any socket timeout. Only a
deadline on the whole body ends that, and a blocked read cannot be
interrupted from inside. So the watchdog, past a body's deadline, shuts the
reading half of its socket: the read returns early, and the adapter answers
408. Registering a body costs a heap push, not a thread.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import socket
import threading
import time
import typing as t

__all__ = ["BodyWatchdog", "socket_of"]

logger = logging.getLogger("flask_mcp")

#: Seconds a body deadline may be overrun by at most.
GRANULARITY = 0.25


def socket_of(environ: t.Mapping[str, t.Any]) -> socket.socket | None:
    """The client's socket, as werkzeug's and gunicorn's servers expose it; ``None`` elsewhere (CGI, tests)."""
    sock = environ.get("gunicorn.socket") or environ.get("werkzeug.socket")
    return sock if hasattr(sock, "shutdown") else None


class BodyWatchdog:
    """Shuts the reading half of sockets whose body is not read by their deadline."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, socket.socket]] = []
        self._live: set[int] = set()
        self._ids = itertools.count()
        self._lock = threading.Condition()
        self._thread: threading.Thread | None = None

    def watch(self, sock: socket.socket, seconds: float) -> int:
        """Start the clock for *sock*; returns the token :meth:`done` takes."""
        token = next(self._ids)
        with self._lock:
            heapq.heappush(self._heap, (time.monotonic() + seconds, token, sock))
            self._live.add(token)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="mcp-body-deadline", daemon=True)
                self._thread.start()
            elif self._heap[0][1] == token:
                self._lock.notify()  # an earlier deadline than the one the watchdog sleeps towards
        return token

    def done(self, token: int) -> bool:
        """The body was read (or failed): stop its clock. ``False`` when the deadline had passed."""
        with self._lock:
            if token in self._live:
                self._live.discard(token)
                return True
            return False

    def _run(self) -> None:
        with self._lock:
            while True:
                while self._heap and self._heap[0][1] not in self._live:
                    heapq.heappop(self._heap)  # read in time: forget it
                if not self._heap:
                    self._thread = None
                    return
                deadline, token, sock = self._heap[0]
                wait = deadline - time.monotonic()
                if wait > 0:
                    # At most a few wake-ups a second, however many bodies are read:
                    # a deadline is kept to within GRANULARITY seconds.
                    self._lock.wait(max(wait, GRANULARITY))
                    continue
                heapq.heappop(self._heap)
                self._live.discard(token)
                try:
                    sock.shutdown(socket.SHUT_RD)
                except OSError:  # already closed
                    logger.debug("body deadline: socket already closed")
