"""The read every request makes, straight on a Redis connection.

A handshake-era request reads its session (with the shared registry's
record) in one ``MGET``. Through redis-py's client, one command also takes a
connection from the pool and gives it back under the pool's lock, goes
through its retry wrapper and records its observability hooks: more Python
than the rest of a ``tools/call`` of a plain tool together.
:class:`HotReads` sends that ``MGET`` on a connection of its own, kept in a
deque between requests (taking and giving back are single atomic deque
operations, no lock), and reads the reply. Whenever anything goes wrong on
the way (a dropped connection, a failover, a timeout, an error reply), the
connection is dropped and the same ``MGET`` is sent again through the
client, whose retries and errors are then the answer: the fast way only ever
answers what the client would have.

The connections are made with the client pool's own class and arguments
(a Sentinel pool's connections find the current master themselves), but
are not the pool's: however many a busy process keeps, the pool's limit is
not spent on them. At most :attr:`HotReads.keep` wait between requests;
more are closed as they come back. After a fork the parent's are left alone
(closed, never shut down: the parent still uses them). A client-side cache
(RESP3 ``cache=``), a single-connection client or a cluster are read through
the client, as before. The session's reads may also be kept in the process
between changes (:attr:`HotReads.tracked`, :mod:`.tracked_reads`); those
go on the tracked connections, and here only when they cannot.
"""

from __future__ import annotations

import collections
import typing as t

from .forks import forks

if t.TYPE_CHECKING:
    from .tracked_reads import TrackedReads

__all__ = ["HotReads", "hot_reads_for"]


class HotReads:
    """``MGET`` on connections of its own (see the module).

    :param client: a ``redis.Redis`` client (not a cluster's).
    :param keep: how many connections may wait between requests.
    """

    def __init__(self, client: t.Any, keep: int = 64) -> None:
        self.client = client
        self.keep = keep
        self._pool = client.connection_pool
        self._idle: collections.deque[t.Any] = collections.deque()
        self._forks = forks()
        #: The session reads kept in this process while Redis reports no change; ``None``: none kept.
        self.tracked: TrackedReads | None = None

    def mget(self, names: list[str]) -> list[t.Any]:
        """The raw values of *names*, in order (``None`` for a missing key)."""
        tracked = self.tracked
        if tracked is not None and tracked.covers(names):
            found = tracked.read(names)
            if found is not None:
                return found
        if self._forks != forks():
            # Forked: the idle connections are the parent's; dropping them only closes this copy.
            self._idle, self._forks = collections.deque(), forks()
        try:
            connection = self._idle.pop()
        except IndexError:
            connection = self._pool.connection_class(**self._pool.connection_kwargs)
        try:
            connection.send_command("MGET", *names)
            values = connection.read_response()
        except Exception:
            connection.disconnect()
            return t.cast(list[t.Any], self.client.mget(names))
        if len(self._idle) < self.keep:
            self._idle.append(connection)
        else:
            connection.disconnect()
        return t.cast(list[t.Any], values)

    def close(self) -> None:
        """Close the waiting connections (a later read makes new ones)."""
        if self.tracked is not None:
            self.tracked.close()
        while self._idle:
            try:
                self._idle.pop().disconnect()
            except IndexError:  # taken by a request meanwhile
                break


def hot_reads_for(client: t.Any) -> HotReads | None:
    """A :class:`HotReads` for *client*, or ``None`` when its reads must go through it (see the module)."""
    pool = getattr(client, "connection_pool", None)
    if (
        pool is None
        or getattr(client, "connection", None) is not None  # single_connection_client=True
        or getattr(pool, "cache", None) is not None  # client-side caching
        or not hasattr(pool, "connection_class")
    ):
        return None
    return HotReads(client)
