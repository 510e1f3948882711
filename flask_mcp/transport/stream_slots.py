"""How many long-lived event streams this process holds open.

Under a threaded server every open stream holds a thread for as long as it
lasts; a handful of idle clients would otherwise take every thread, and the
server would stop answering anybody. A process therefore serves at most
``MCP_MAX_STREAMS`` GET streams at once and answers the next one with 503
and ``Retry-After``. This is a count of this process's own threads, so it
lives in process memory: no other process's threads are at stake.
"""

from __future__ import annotations

import threading

__all__ = ["StreamSlots"]


class StreamSlots:
    """A thread-safe count of open streams against a limit.

    :param limit: the most streams open at once.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.open = 0
        self._lock = threading.Lock()

    def take(self) -> bool:
        """Take a slot; ``False`` when all are taken."""
        with self._lock:
            if self.open >= self.limit:
                return False
            self.open += 1
            return True

    def give_back(self) -> None:
        """Return a slot taken with :meth:`take`."""
        with self._lock:
            self.open = max(0, self.open - 1)
