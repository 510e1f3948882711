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


#: A body's deadline, its grace and the process's waiting places (as :meth:`BodyWatchdog.watch` takes them).
_Limits = tuple[float | None, float | None, int | None]


class _Body:
    """One body being read, and where its clocks stand.

    A request notes only its socket, when its reading began and its limits;
    the watchdog thread works the clocks out when it first looks at it
    (:func:`_clock`), which nearly no body lives to see.
    """

    __slots__ = ("deadline", "due", "in_grace", "limits", "refused", "since", "sock", "stepped", "waiters", "waiting")
    #: When the whole body must be in (monotonic); ``inf``: never.
    deadline: float
    #: Still within its grace: past it, the body needs a waiting place.
    in_grace: bool
    #: The most bodies of the process that may wait past their grace; ``None``: any number.
    waiters: int | None
    #: Whether it holds one of the process's waiting places.
    waiting: bool
    #: :data:`BUSY` or :data:`LATE` once the watchdog cut it off.
    refused: str | None

    def __init__(self, sock: socket.socket, since: float, limits: _Limits) -> None:
        self.sock = sock
        #: When its reading began (monotonic).
        self.since = since
        self.limits = limits
        #: Set by the watchdog before it first changes anything of the body (see :meth:`BodyWatchdog.done`).
        self.stepped = False
        #: When the watchdog must look at it next: its grace's end, else its deadline (monotonic);
        #: ``None`` until the thread first looked.
        self.due: float | None = None


def _clock(body: _Body) -> float:
    """Work out the clocks of a body the watchdog looks at for the first time; when it is due."""
    seconds, grace, waiters = body.limits
    body.deadline = body.since + seconds if seconds is not None else math.inf
    body.waiters = waiters
    body.in_grace = grace is not None and waiters is not None and body.since + grace < body.deadline
    body.waiting = False
    body.refused = None
    body.due = due = body.since + t.cast(float, grace) if body.in_grace else body.deadline
    return due


class BodyWatchdog:
    """Cuts off bodies past their deadline, or past their grace when no waiting place is free.

    Every request's body is registered, and nearly all are read at once, so
    registering one and stopping its clocks take no lock: a dictionary entry
    in, the same entry out (each a single step for the interpreter). The
    lock orders only what the watchdog thread changes against :meth:`done`
    for the bodies it has stepped. The thread looks at the bodies being read
    every :data:`GRANULARITY` seconds while there are any, so a grace or a
    deadline is kept to within that.
    """

    def __init__(self) -> None:
        # The bodies being read, oldest first (a dictionary used as an ordered set).
        self._bodies: dict[_Body, None] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        # When a body was last registered (monotonic): the thread lingers LINGER seconds past it.
        self._last_watch = 0.0
        #: Bodies of this process holding a waiting place (past their grace, still arriving).
        self.waiting = 0

    def watch(
        self, sock: socket.socket, seconds: float | None, grace: float | None = None, waiters: int | None = None
    ) -> t.Any:
        """Start the clocks of the body arriving on *sock*; returns the token :meth:`done` takes.

        :param seconds: the whole body's deadline; ``None``: none.
        :param grace: seconds the body may take without a waiting place; ``None``: no grace, no places.
        :param waiters: the most bodies of the process that may be waiting past their grace at once.
        """
        body = _Body(sock, time.monotonic(), (seconds, grace, waiters))
        self._last_watch = body.since
        self._bodies[body] = None
        # Read after the body is in: a thread that stopped before this sees it (see _run).
        if self._thread is None and (seconds is not None or (grace is not None and waiters is not None)):
            self._start()
        return body

    def done(self, token: t.Any) -> str | None:
        """The body was read (or failed): stop its clocks and give back its place.

        :returns: ``None`` when it was read in time, else why it was cut off
            (:data:`BUSY`, :data:`LATE`).
        """
        body: _Body = token
        self._bodies.pop(body, None)
        # The thread marks a body before it looks whether the body is still in, and changes it
        # only then: a body it never marked (nearly all) is out before the thread could change it.
        if not body.stepped:
            return None
        with self._lock:  # whatever the thread was changing of it is done
            if body.waiting:
                body.waiting = False
                self.waiting -= 1
            return body.refused

    @property
    def watching(self) -> int:
        """Bodies being read right now under the watchdog's clocks."""
        return len(self._bodies)

    def _start(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="mcp-body-deadline", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            time.sleep(GRANULARITY)
            now = time.monotonic()
            with self._lock:
                if self._look(now) or now - self._last_watch < LINGER:
                    continue
                # Nothing left to time: the next body starts a thread again. A body registered
                # meanwhile read the thread as still running, so look once more now that it is not.
                self._thread = None
                if self._look(now):
                    self._thread = threading.current_thread()
                    continue
                return

    def _look(self, now: float) -> bool:
        """Step every body whose grace or deadline has come (lock held); whether any is still timed."""
        timed = False
        # Oldest first: when places are short, the body that waited longest gets one.
        for body in list(self._bodies):
            due = body.due if body.due is not None else _clock(body)
            if body.refused is None and due < math.inf:
                timed = True
                if due <= now:
                    body.stepped = True
                    if body in self._bodies:  # not read meanwhile (done() looks at stepped after)
                        self._step(body)
        return timed

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
