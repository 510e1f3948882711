"""The session records every request reads, kept in this process while Redis says they did not change.

A handshake-era request reads its session record (with the shared
registry's) from the store: one round trip, which on a small host costs
as much as a third of a plain ``tools/call`` (the kernel's work for the
socket, and the wait for Redis's turn on a CPU). The records change
rarely (when a session starts, is refreshed, saved or deleted), so each
process keeps the ones it read, and Redis tells it when any changes
(client tracking, Redis 6 or later): the reads go on connections of their
own that ask for it (``CLIENT TRACKING ON REDIRECT``), and Redis pushes
the name of every key they read that is then written, deleted, expired or
evicted, by any client, to one connection per process (RESP3). Before a
kept value is used, the pushes that have arrived are applied (one ``poll``
of that connection's socket when none has); a value that changed is read
from the store again. Redis sends one push per key read, so what waits
for an idle process is bounded by the keys it read.

What keeps a kept value right:

* a read whose reply may predate a change (a push was applied while it
  was on the way) is not kept;
* nothing is kept, and every read goes to the store, while the push
  connection is down: when it is made again, everything kept before is
  dropped, as pushes may have been lost in between, and so are the read
  connections that named the old one;
* a value is kept at most :attr:`TrackedReads.max_age` seconds whatever
  Redis says, so a key expiring in Redis is not served past that, and at
  most :attr:`TrackedReads.max_entries` values are kept (the longest kept
  go first);
* a missing key is kept only for the names given as ``absent_kept`` (the
  registry record, absent until the first run-time change): a caller
  sending unknown session ids makes nothing kept.

A change made on another host reaches this process as fast as Redis's push
does; a request this process takes in the meantime sees the record as it
was, as it would have had it arrived a moment earlier. After a fork the
child keeps nothing of its parent's and opens its own connections.
"""

from __future__ import annotations

import collections
import logging
import select
import threading
import time
import typing as t

from .forks import forks

__all__ = ["RETRY_AFTER", "TrackedReads"]

logger = logging.getLogger("flask_mcp")

#: Seconds between attempts to open the tracking connection after one failed.
RETRY_AFTER = 5.0


class TrackedReads:
    """Values of the keys under *prefixes*, kept while Redis reports no change (see the module).

    :param pool: the client's connection pool; the connections are made with
        its connection class and arguments (so a Sentinel pool's find the
        master), the push connection speaking RESP3.
    :param prefixes: the key prefixes (the store's prefix included) whose values are kept.
    :param absent_kept: names whose absence is kept too.
    :param max_entries: the most values kept.
    :param max_age: the most seconds a value is kept.
    :param keep: the most read connections waiting between requests.
    :param clock: monotonic seconds (tests pass their own).
    """

    def __init__(
        self,
        pool: t.Any,
        prefixes: t.Sequence[str],
        absent_kept: t.Collection[str] = (),
        max_entries: int = 4096,
        max_age: float = 1.0,
        keep: int = 64,
        clock: t.Callable[[], float] = time.monotonic,
    ) -> None:
        self.prefixes = tuple(prefixes)
        self.absent_kept = frozenset(absent_kept)
        self.max_entries = max_entries
        self.max_age = max_age
        self.keep = keep
        self._pool = pool
        self._clock = clock
        self._values: collections.OrderedDict[str, tuple[float, t.Any]] = collections.OrderedDict()
        self._lock = threading.Lock()
        self._listener: t.Any = None
        self._listener_id = 0
        self._poller = select.poll()
        #: Which push connection the read connections name: they are of no use past it.
        self._generation = 0
        #: Read connections between requests, each with the generation it was made in.
        self._idle: collections.deque[tuple[t.Any, int]] = collections.deque()
        #: Pushes applied so far: a read that saw this number change on its way is not kept.
        self._changes = 0
        self._retry_at = 0.0
        #: Whether making the push connection failed before (said once at INFO).
        self._refused = False
        self._forks = forks()

    def covers(self, names: t.Sequence[str]) -> bool:
        """Whether every one of *names* is under the tracked prefixes."""
        prefixes = self.prefixes
        for name in names:  # noqa: SIM110 - a loop, not all(): this runs on every request
            if not name.startswith(prefixes):
                return False
        return True

    def read(self, names: t.Sequence[str]) -> list[t.Any] | None:
        """The raw values of *names*, kept or read on a tracked connection; ``None``: read them another way.

        ``None`` comes while there is no push connection, or when the read failed
        (the caller's own read then answers, with its retries and errors).
        """
        with self._lock:
            if not self._in_step():
                return None
            found = self._kept(names)
            if found is not None:
                return found
            ticket, generation, listener_id = self._changes, self._generation, self._listener_id
        connection = self._take(generation, listener_id)
        if connection is None:
            return None
        try:
            connection.send_command("MGET", *names)
            values = connection.read_response()
        except Exception:  # the caller's read answers, with the client's retries and errors
            connection.disconnect()
            return None
        self._give_back(connection, generation)
        self.store(ticket, names, values)
        return t.cast(list[t.Any], values)

    def ticket(self) -> int:
        """The number of pushes applied so far: give it to :meth:`store` with the reply of a read sent after."""
        return self._changes

    def store(self, ticket: int, names: t.Sequence[str], values: t.Sequence[t.Any]) -> None:
        """Keep the *values* of *names*, read on a tracked connection after :meth:`ticket` gave *ticket*.

        Nothing is kept when a push was applied since, or while there is no push connection.
        """
        with self._lock:
            if ticket != self._changes or self._listener is None:
                return
            expires = self._clock() + self.max_age
            kept = self._values
            for name, value in zip(names, values, strict=True):
                if value is None and name not in self.absent_kept:
                    kept.pop(name, None)
                    continue
                kept[name] = (expires, value)
                kept.move_to_end(name)
            while len(kept) > self.max_entries:
                kept.popitem(last=False)

    def close(self) -> None:
        """Close the connections and drop what is kept (a later read opens them again)."""
        with self._lock:
            self._drop(retry_at=0.0)

    # -- what is kept, and the push connection (called with the lock held) --------------------------

    def _kept(self, names: t.Sequence[str]) -> list[t.Any] | None:
        now = self._clock()
        values = self._values
        found = []
        for name in names:
            entry = values.get(name)
            if entry is None or entry[0] <= now:
                return None
            found.append(entry[1])
        return found

    def _in_step(self) -> bool:
        # Apply the pushes that arrived; False when there is no connection to tell of changes.
        if self._forks != forks():
            # The parent's connections: never read here; redis-py only closes this copy of a
            # socket another process made, without shutting the connection down.
            listener, idle = self._listener, self._idle
            self._listener, self._idle, self._forks = None, collections.deque(), forks()
            self._values.clear()
            for connection in [listener, *(connection for connection, _ in idle)]:
                if connection is not None:
                    connection.disconnect()
        listener = self._listener
        if listener is None:
            listener = self._connect()
            if listener is None:
                return False
        if not self._poller.poll(0):
            # Nothing arrived: no push is left in the parser's buffer either, as the loop below
            # reads until the client says there is nothing more to read.
            return True
        try:
            while listener.can_read(0):
                listener.read_response(push_request=True)
        except Exception as exc:  # the connection broke: pushes may be lost
            logger.info("store: the push connection failed (%s: %s); reading from the store", type(exc).__name__, exc)
            self._drop(retry_at=self._clock() + RETRY_AFTER)
            return False
        return True

    def _connect(self) -> t.Any:
        now = self._clock()
        if now < self._retry_at:
            return None
        pool = self._pool
        listener = pool.connection_class(**{**pool.connection_kwargs, "protocol": 3})
        try:
            if not hasattr(listener._parser, "set_invalidation_push_handler"):  # redis-py before 5.1
                raise RuntimeError("this redis-py cannot receive invalidation pushes")
            listener.connect()
            listener._parser.set_invalidation_push_handler(self._invalidated)
            listener.send_command("CLIENT", "ID")
            listener_id = int(listener.read_response())
        except Exception as exc:  # an older Redis, an ACL without CLIENT, no RESP3: nothing kept
            # Said once; the later attempts (one every RETRY_AFTER seconds) only at DEBUG.
            log = logger.debug if self._refused else logger.info
            log("store: session reads are not tracked (%s: %s)", type(exc).__name__, exc)
            self._refused = True
            listener.disconnect()
            self._retry_at = now + RETRY_AFTER
            return None
        self._values.clear()  # whatever changed while there was no connection went unreported
        self._changes += 1
        self._generation += 1
        self._poller = select.poll()
        # Readable also reports a connection the server closed, which the drain then finds broken.
        self._poller.register(listener._sock, select.POLLIN)
        self._listener, self._listener_id = listener, listener_id
        return listener

    def _drop(self, retry_at: float) -> None:
        listener, self._listener = self._listener, None
        idle, self._idle = self._idle, collections.deque()
        self._values.clear()
        self._changes += 1
        self._generation += 1  # read connections out during the drop are closed as they come back
        self._retry_at = retry_at
        for connection, _ in idle:
            connection.disconnect()
        if listener is not None:
            listener.disconnect()

    def _invalidated(self, push: t.Sequence[t.Any]) -> None:
        # [b"invalidate", [names]] for changed keys; [b"invalidate", None] when Redis drops all (FLUSHALL).
        self._changes += 1
        names = push[1] if len(push) > 1 else None
        if names is None:
            self._values.clear()
            return
        for name in names:
            self._values.pop(name.decode("utf-8", "surrogateescape") if isinstance(name, bytes) else name, None)

    # -- the read connections ---------------------------------------------------------------------

    def _take(self, generation: int, listener_id: int) -> t.Any:
        # A waiting read connection of this generation, or a new one whose reads Redis tracks.
        if generation != self._generation:
            return None  # the push connection was made again since this read began: read another way
        while True:
            try:
                connection, made_in = self._idle.pop()
            except IndexError:
                break
            if made_in == generation:
                return connection
            connection.disconnect()  # an older one: it names a push connection that is gone
        pool = self._pool
        connection = pool.connection_class(**pool.connection_kwargs)
        try:
            connection.send_command("CLIENT", "TRACKING", "ON", "REDIRECT", listener_id)
            reply = connection.read_response()
            if reply not in (b"OK", "OK"):
                raise RuntimeError(f"CLIENT TRACKING answered {reply!r}")
        except Exception as exc:
            logger.info("store: a tracked read connection failed (%s: %s)", type(exc).__name__, exc)
            connection.disconnect()
            return None
        return connection

    def _give_back(self, connection: t.Any, generation: int) -> None:
        if generation == self._generation and len(self._idle) < self.keep:
            self._idle.append((connection, generation))
        else:
            connection.disconnect()
