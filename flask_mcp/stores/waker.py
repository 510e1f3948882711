"""One watcher per process for everything that waits on the store.

An event stream waits for the next event of its log, a handler for the
client's answer. Each of them looking at the store on its own would cost
the store reads in proportion to the number of open streams, idle or not:
at a thousand streams, thousands of reads a second per process. Instead,
waiters register the keys they wait on here, and one thread per process
reads all of them in one batched request (``get_many``: one ``MGET`` on
Redis) per tick, waking exactly the waiters whose key changed. The store's
load then grows with the number of distinct keys watched (every GET stream
of a process watches the same broadcast counter), not with the number of
waiters.
"""

from __future__ import annotations

import logging
import threading
import time
import typing as t

__all__ = ["Waker"]

logger = logging.getLogger("flask_mcp")


class _Waiter:
    __slots__ = ("event", "seen")

    def __init__(self, seen: dict[str, t.Any]) -> None:
        self.seen = seen
        self.event = threading.Event()


class Waker:
    """Wakes threads waiting for keys of a cache to change, from one poller thread.

    :param interval: seconds between two looks at the watched keys.
    """

    def __init__(self, interval: float = 0.05) -> None:
        self.interval = interval
        self._lock = threading.Lock()
        self._waiters: list[_Waiter] = []
        self._backend: t.Any = None
        self._thread: threading.Thread | None = None
        #: Batched reads made so far (for measurements of the store's load).
        self.reads = 0
        #: Set by :meth:`close`: the app is shut down, and whatever waits here stops waiting.
        self.closed = False

    def close(self) -> None:
        """Wake every waiter now, and every later one at once: the streams and handlers of the app end.

        Called when the app is shut down (:meth:`flask_mcp.MCP.shutdown`), so that
        no stream goes on waiting, holding its thread, for a store the app left.
        """
        with self._lock:
            self.closed = True
            for waiter in self._waiters:
                waiter.event.set()

    def wait(self, backend: t.Any, seen: dict[str, t.Any], timeout: float) -> bool:
        """Block until one of the keys in *seen* holds another value than the one given, or *timeout* passes.

        :param backend: the cachelib cache the keys live in (``Cache.cache``:
            the poller runs outside any app context).
        :param seen: each key with the value the caller last saw.
        :returns: whether a key changed (``False`` on time-out); ``True`` at once once :meth:`close` was called.
        """
        waiter = _Waiter(seen)
        with self._lock:
            if self.closed:
                return True
            self._backend = backend
            self._waiters.append(waiter)
            if self._thread is None:
                self._thread = threading.Thread(target=self._poll, name="mcp-waker", daemon=True)
                self._thread.start()
        try:
            return waiter.event.wait(timeout)
        finally:
            with self._lock:
                self._waiters.remove(waiter)

    def _poll(self) -> None:
        while True:
            with self._lock:
                waiters = list(self._waiters)
                backend = self._backend
                if not waiters:
                    self._thread = None
                    return
            keys = sorted({key for waiter in waiters for key in waiter.seen})
            try:
                values = dict(zip(keys, backend.get_many(*keys), strict=True))
                self.reads += 1
            except Exception:  # the store is down: let every waiter look for itself, and fail there
                logger.warning("the store did not answer the waker", exc_info=True)
                values = None
            for waiter in waiters:
                if values is None or any(values[key] != seen for key, seen in waiter.seen.items()):
                    waiter.event.set()
            time.sleep(self.interval)
