"""In-flight markers of a store in this process's memory, kept without the cache's bookkeeping.

A streamed request holds a marker while it runs (:class:`~flask_mcp.stores.mailbox.Mailbox`):
its id is taken, a cancellation of it is recorded, a resumed stream tells a
lost request by the marker's absence. In a store in another process (Redis)
the marker expires unless its worker's heartbeat renews it, so that a worker
that dies frees its ids.

A cachelib SimpleCache lives and dies with the one process that holds every
marker in it: a marker there cannot outlive its worker, so it needs no expiry
and no heartbeat. :class:`LocalMarkers` writes it straight into the cache's
table, under the cache's lock, as the entry the cache's own ``add`` would
have written without a timeout. Nothing is pickled per request, no expiry is
noted for a sweep, and the heartbeat's thread never starts. Every reader
(``get``, the waker, a resumed stream) sees the entry as it sees any other.
"""

from __future__ import annotations

import typing as t

from cachelib import simple

from .simple_entries import Entry, has_table, live_entry

__all__ = ["LocalMarkers", "local_markers_for"]


class LocalMarkers:
    """Markers and their lookups straight in a SimpleCache's table (see the module).

    :param backend: a cachelib :class:`~cachelib.simple.SimpleCache` (flask-caching's included).
    """

    def __init__(self, backend: simple.SimpleCache) -> None:
        # cachelib's own table of entries, (expires, pickled value) per key, and the lock of its writes.
        self._entries: dict[str, Entry] = backend._cache
        self._lock = backend._lock
        # The entry of a marker: no expiry (0), and the value True as the cache's readers decode it.
        self._marker = (0, backend.serializer.dumps(True))

    def add(self, key: str) -> bool:
        """Set a marker under *key* unless an entry lives there; whether it was set."""
        with self._lock:
            if self.holds(key):
                return False
            self._entries[key] = self._marker
            return True

    def holds(self, key: str) -> bool:
        """Whether an entry lives under *key* (set and not expired)."""
        return live_entry(self._entries, key) is not None

    def drop(self, *keys: str) -> None:
        """Delete the entries under *keys*, whoever wrote them."""
        with self._lock:
            for key in keys:
                self._entries.pop(key, None)


def local_markers_for(backend: t.Any) -> LocalMarkers | None:
    """A :class:`LocalMarkers` for *backend* when it is a cachelib SimpleCache; ``None`` otherwise."""
    if has_table(backend):
        return LocalMarkers(backend)
    return None
