"""How many long-lived event streams this process holds open.

Under a threaded server every open stream holds a thread for as long as it
lasts; a handful of idle clients would otherwise take every thread, and the
server would stop answering anybody. A process therefore serves at most
``MCP_MAX_STREAMS`` GET streams at once and answers the next one with 503
and ``Retry-After``. This is a count of this process's own threads, so it
lives in process memory: no other process's threads are at stake.

A stream learns that its client has gone only when it next writes (a
keep-alive, every ``MCP_SSE_KEEPALIVE``), so a client that left keeps its slot
until then. When every slot is taken, a new stream therefore first looks at the
sockets of the streams held (where the server exposes them: werkzeug's and
gunicorn's): one whose client closed its end gives its slot up at once, and its
socket is shut down, so that its thread ends at its next write.
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading

__all__ = ["StreamSlots", "client_gone"]


def client_gone(sock: socket.socket) -> bool:
    """Whether the client at the other end of *sock* has closed it (or it is closed here).

    Asks without waiting and without reading: a socket with nothing to read is
    a live idle client; one readable with nothing to peek at has had its end
    closed. What cannot be asked (no ``poll``, say) counts as a live client.
    """
    try:
        fd = sock.fileno()
    except OSError:
        return True
    if fd < 0:
        return True
    try:
        readable = _readable(fd)
    except (OSError, ValueError):  # not a socket this process may ask about: leave it be
        return False
    if not readable:
        return False
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except OSError:  # reset by the client
        return True


def _readable(fd: int) -> bool:
    # poll has no limit on descriptor numbers (select stops at 1024, which a gevent worker passes).
    poller = getattr(select, "poll", None)
    if poller is None:
        return bool(select.select([fd], [], [], 0)[0])
    watch = poller()
    watch.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
    return bool(watch.poll(0))


class StreamSlots:
    """A thread-safe count of open streams against a limit.

    :param limit: the most streams open at once.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.open = 0
        self._lock = threading.Lock()
        #: The client sockets of the streams held, where known: looked at when every slot is taken.
        self._sockets: set[socket.socket] = set()

    def take(self, sock: socket.socket | None = None) -> bool:
        """Take a slot for a stream to the client at *sock*; ``False`` when all are taken.

        When all are, the streams whose client has gone give theirs up first.
        """
        with self._lock:
            if self.open >= self.limit:
                self._reap()
            if self.open >= self.limit:
                return False
            self.open += 1
            if sock is not None:
                self._sockets.add(sock)
            return True

    def give_back(self, sock: socket.socket | None = None) -> None:
        """Return a slot taken with :meth:`take` (with the same *sock*); a no-op for a slot already reaped."""
        with self._lock:
            if sock is not None:
                if sock not in self._sockets:
                    return  # given up when its client was found gone
                self._sockets.discard(sock)
            self.open = max(0, self.open - 1)

    def _reap(self) -> None:
        # Under the lock: at most ``limit`` sockets, each asked without waiting.
        for sock in [sock for sock in self._sockets if client_gone(sock)]:
            self._sockets.discard(sock)
            self.open = max(0, self.open - 1)
            with contextlib.suppress(OSError):  # already shut
                sock.shutdown(socket.SHUT_RDWR)  # its stream's next write fails, and its thread ends
