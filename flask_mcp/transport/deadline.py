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

Registering a body costs a dictionary entry, not a thread. The watchdog
thread starts with the first body and ends :data:`LINGER` seconds after the
last one was registered, when none is left to time (not at once: a busy
process would start a thread a request).
"""

from __future__ import annotations

import dataclasses
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
    #: When the watchdog must look at it next: its grace's end, else its deadline (monotonic).
    due: float
    #: Whether it holds one of the process's waiting places.
    waiting: bool = False
    #: :data:`BUSY` or :data:`LATE` once the watchdog cut it off.
    refused: str | None = None


class BodyWatchdog:
    """Cuts off bodies past their deadline, or past their grace when no waiting place is free.

    Registering a body and stopping its clocks cost a dictionary entry under a
    lock: every request's body is registered, and nearly all are read at once.
    The watchdog thread looks at the bodies being read every
    :data:`GRANULARITY` seconds while there are any, so a grace or a deadline
    is kept to within that.
    """

    def __init__(self) -> None:
        self._bodies: dict[int, _Body] = {}
        self._ids = itertools.count()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        # When a body was last registered (monotonic): the thread lingers LINGER seconds past it.
        self._last_watch = 0.0
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
        now = self._last_watch = time.monotonic()
        deadline = now + seconds if seconds is not None else math.inf
        in_grace = grace is not None and waiters is not None and now + grace < deadline
        token = next(self._ids)
        body = _Body(sock, deadline, waiters, in_grace, now + (grace or 0.0) if in_grace else deadline)
        with self._lock:
            self._bodies[token] = body
            if self._thread is None and body.due < math.inf:
                self._thread = threading.Thread(target=self._run, name="mcp-body-deadline", daemon=True)
                self._thread.start()
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
        while True:
            time.sleep(GRANULARITY)
            now = time.monotonic()
            with self._lock:
                timed = False
                # Oldest first: when places are short, the body that waited longest gets one.
                for body in list(self._bodies.values()):
                    if body.refused is None and body.due < math.inf:
                        timed = True
                        if body.due <= now:
                            self._step(body)
                if not timed and now - self._last_watch >= LINGER:
                    self._thread = None  # nothing left to time: the next body starts a thread again
                    return

    def _step(self, body: _Body) -> None:
        """The body's grace or deadline has come (called with the lock held)."""
        if body.in_grace:
            body.in_grace = False
            if body.waiters is None or self.waiting < body.waiters:
                body.waiting = True
                self.waiting += 1
                body.due = body.deadline
                return
            body.refused = BUSY
        else:
            body.refused = LATE
        try:
            body.sock.shutdown(socket.SHUT_RD)
        except OSError:  # already closed
            logger.debug("body deadline: socket already closed")
