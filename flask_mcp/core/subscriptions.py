"""The resource URIs a client subscribed to, and where they are kept.

The protocol core changes subscriptions through :class:`Subscriptions`; a
transport supplies the implementation: :class:`LocalSubscriptions` in
process memory for a connection that lives in one process (stdio), or a
store-backed set for sessions (:class:`flask_mcp.stores.sessions.CacheSubscriptions`).
"""

from __future__ import annotations

import threading
import typing as t

__all__ = ["LocalSubscriptions", "Subscriptions"]


class Subscriptions(t.Protocol):
    """The resource URIs one client subscribed to, wherever the transport keeps them.

    Kept apart from the rest of :class:`ClientState`: a session's
    subscriptions are read only when an update is sent, not on every
    request, and changing them must be atomic however many requests of the
    session run at once.
    """

    def add(self, uri: str, limit: int | None) -> bool:
        """Subscribe to *uri*; ``False`` (and nothing changed) when *limit* URIs are subscribed already."""
        ...

    def discard(self, uri: str) -> None:
        """Unsubscribe from *uri*, if subscribed."""
        ...

    def __contains__(self, uri: object) -> bool: ...


_LOCK = threading.Lock()


class LocalSubscriptions:
    """:class:`Subscriptions` in process memory, for a connection that lives in one process (stdio)."""

    def __init__(self, uris: t.Iterable[str] = ()) -> None:
        self._uris: dict[str, None] = dict.fromkeys(uris)
        # One lock for every instance: a client state is made for each stateless request, and
        # almost never subscribes; a lock of its own would be made (and paid for) each time.
        self._lock = _LOCK

    def add(self, uri: str, limit: int | None) -> bool:
        """Subscribe to *uri* unless *limit* others are subscribed."""
        with self._lock:
            if uri not in self._uris and limit is not None and len(self._uris) >= limit:
                return False
            self._uris[uri] = None
            return True

    def discard(self, uri: str) -> None:
        """Unsubscribe from *uri*."""
        with self._lock:
            self._uris.pop(uri, None)

    def __contains__(self, uri: object) -> bool:
        return uri in self._uris

    def __iter__(self) -> t.Iterator[str]:
        return iter(list(self._uris))
