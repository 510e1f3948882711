"""Server-to-client messages kept in the session cache, for event streams and resumption.

Every message sent on an event stream is appended here under an id
``<stream>:<n>``, scoped to its session. Any process sharing the cache can
then replay a stream after the last id a client saw (``Last-Event-ID``), or
keep tailing it, which is how a client resumes a stream that broke or that
the server closed on purpose (SSE polling).

Messages for every session (``notifications/*/list_changed``, resource
updates) go to one shared stream, :data:`BROADCAST`; each session's GET
stream reads it and keeps what concerns that session.

The stream of a request also says which request it carries
(with its first events, :meth:`EventLog.write_many`), and whether it ended without a response (a
cancelled request, :meth:`EventLog.end`): a client resuming it in another
process can then tell a request still running from one lost with its worker.
"""

from __future__ import annotations

import functools
import json
import re
import typing as t

from flask_caching import Cache

from ..policies.store_keys import key as store_key
from ..policies.store_keys import tag
from ..protocol.numerals import parse_numeral

__all__ = [
    "BROADCAST",
    "DELIVERED_GRACE",
    "GAP_GRACE",
    "MAX_EVENT_NUMBER",
    "MAX_STREAM_NAME",
    "EventLog",
    "Reader",
    "event_count",
    "parse_event_id",
]

#: The stream that carries messages for every session.
BROADCAST = "all"
_EVERYONE = "*"

#: Largest event number in an event id: numbers count up from 1 per stream.
MAX_EVENT_NUMBER = 2**53
#: Longest stream name in an event id (the server's are 13 to 32 characters).
MAX_STREAM_NAME = 64
#: Seconds the log of a request's stream stays once the stream reached its client whole:
#: long enough for a client that lost the last bytes on the way to resume (it retries
#: within seconds), short enough that busy streaming does not fill the store.
DELIVERED_GRACE = 30
#: Seconds a reader waits for an event that was counted but is not stored yet
#: (another process is between the two writes) before it gives the event up.
GAP_GRACE = 1.0
# The alphabet of the server's stream names (secrets.token_urlsafe and a count, BROADCAST):
# the name becomes part of cache keys, where some backends refuse spaces.
_STREAM_NAME = re.compile(rf"[A-Za-z0-9_:-]{{1,{MAX_STREAM_NAME}}}")


def parse_event_id(event_id: str) -> tuple[str, int] | None:
    """``("stream", n)`` from ``"stream:n"``, or ``None`` for anything else.

    The stream is 1 to :data:`MAX_STREAM_NAME` ASCII letters, digits,
    ``-``, ``_`` or ``:``; *n* is a plain ASCII number no larger than
    :data:`MAX_EVENT_NUMBER` (:func:`~flask_mcp.protocol.numerals.parse_numeral`).
    """
    stream, _, number = event_id.strip().rpartition(":")
    if _STREAM_NAME.fullmatch(stream) is None:
        return None
    try:
        return stream, parse_numeral(number, MAX_EVENT_NUMBER)
    except ValueError:
        return None


class EventLog:
    """Append-only logs of messages per session and stream, with a TTL.

    :param cache: the ephemeral cache.
    :param ttl: seconds an event stays available for replay (``MCP_SSE_REPLAY_AGE``).
    """

    def __init__(self, cache: Cache, ttl: int) -> None:
        self.cache = cache
        self.ttl = ttl

    @staticmethod
    def _key(family: str, session_id: str | None, stream: str, *rest: object) -> str:
        # Tagged by session: a session's streams live on one node of a cluster. The broadcast
        # stream is everybody's; a request without a session has its stream to itself.
        owner = _EVERYONE if stream == BROADCAST else session_id if session_id is not None else stream
        return store_key(family, owner, stream, *rest)

    def append(self, session_id: str | None, stream: str, message: dict[str, t.Any]) -> str:
        """Store *message* as the next event of the stream; returns its event id."""
        counter = self.counter_key(session_id, stream)
        # The backend's atomic increment (INCR on Redis) numbers the events.
        # A request's stream counter is created with its events' lifetime, so it
        # does not outlive them for long; the broadcast counter never expires:
        # readers hold their place in it for hours, and numbering that started
        # over would look to them like events already delivered.
        self.cache.add(counter, 0, timeout=0 if stream == BROADCAST else self.ttl)
        number = int(self.cache.cache.inc(counter) or 0)
        self.cache.set(self._key("ev", session_id, stream, number), message, timeout=self.ttl)
        return f"{stream}:{number}"

    def write(self, session_id: str | None, stream: str, number: int, message: t.Any, carries: t.Any = None) -> str:
        """Store *message* as event *number* of a request's stream (:meth:`write_many` of one event).

        :returns: the event id.
        """
        self.write_many(session_id, stream, [(number, message)], carries)
        return f"{stream}:{number}"

    def write_many(
        self,
        session_id: str | None,
        stream: str,
        events: t.Sequence[tuple[int, t.Any]],
        carries: t.Any = None,
        timeout: int | None = None,
        *,
        ends: bool = False,
    ) -> None:
        """Store *events*, ``(number, message)`` pairs in order, in a request's stream, which only its handler writes.

        The handler numbers its events itself, so no counter needs an atomic
        increment: the events and then the counter (what readers and the
        watcher look at) go in one ``set_many``, one round trip on Redis. A
        message is its JSON as sent (bytes) or a dict; readers get a dict.

        :param carries: the request the stream carries, noted with these events (what
            :meth:`carried` reads, and a resumed stream tells a lost request by), or ``None``
            when already noted.
        :param timeout: seconds the entries live (the events' lifetime when not given).
        :param ends: the last of *events* is the stream's response: they are kept in one entry,
            the stream's tail, which is its count too (most streams are written once, whole), and
            noted nowhere, since a stream that ends with its response cannot have lost its request.
        """
        keys, carried, counter = _stream_keys(session_id, stream)
        if ends and events:
            # Under the counter's key: what a reader and the watcher look at changes with it.
            kept = {"n": events[-1][0], "first": events[0][0], "events": [message for _, message in events]}
            entries: dict[str, t.Any] = {counter: kept}
        else:
            entries = {f"{keys}{number}": message for number, message in events}
            if carries is not None:
                entries[carried] = {"request": carries}
            if events:
                entries[counter] = events[-1][0]
        if entries:
            self.cache.set_many(entries, timeout=self.ttl if timeout is None else timeout)

    def delivered(self, session_id: str | None, stream: str, last: int) -> None:
        """Stream *stream*, events 1 to *last*, reached its client whole: keep it :data:`DELIVERED_GRACE` seconds only.

        A backend that cannot shorten an entry's life (neither process memory
        nor Redis) keeps it for the events' lifetime, as written.
        """
        shorten = getattr(self.cache.cache, "expire_within", None)
        if shorten is None:
            return
        events, carried, counter = _stream_keys(session_id, stream)
        shorten([*(f"{events}{number}" for number in range(1, last + 1)), carried, counter], DELIVERED_GRACE)

    def end(self, session_id: str | None, stream: str) -> None:
        """Note that *stream* ended without a response (its request was cancelled)."""
        key = self._key("evq", session_id, stream)
        record = self.cache.get(key)
        if isinstance(record, dict):
            self.cache.set(key, {**record, "ended": True}, timeout=self.ttl)

    def carried(self, session_id: str | None, stream: str) -> dict[str, t.Any] | None:
        """What :meth:`write_many` and :meth:`end` noted of *stream*: ``{"request": id, "ended": bool}``, if any."""
        record = self.cache.get(self._key("evq", session_id, stream))
        return record if isinstance(record, dict) and "request" in record else None

    def counter_key(self, session_id: str | None, stream: str) -> str:
        """The key of the stream's event counter: it changes with every event appended.

        Its value is the count, or the stream's tail holding the count (read it with :func:`event_count`).
        """
        return self._key("evn", session_id, stream)

    def last(self, session_id: str | None, stream: str) -> int:
        """The number of the newest event of the stream (0 for none)."""
        return event_count(self.cache.get(self.counter_key(session_id, stream)))

    def reader(self, session_id: str | None, stream: str, number: int) -> Reader:
        """A :class:`Reader` of the stream, placed after event *number*."""
        return Reader(self, session_id, stream, number)

    def after(
        self, session_id: str | None, stream: str, number: int, top: int | None = None
    ) -> list[tuple[str, dict[str, t.Any]]]:
        """The events of the stream after event *number*, oldest first.

        :param top: the stream's count, when known: its tail is looked for only
            where an event up to it is not found on its own.
        """
        found: list[tuple[str, dict[str, t.Any]]] = []
        while True:
            number += 1
            message = self.cache.get(self._key("ev", session_id, stream, number))
            if message is None:
                if top is None or number <= top:
                    found += self._from_tail(session_id, stream, number)
                return found
            # A request's events are kept as the JSON they were sent as.
            found.append((f"{stream}:{number}", json.loads(message) if type(message) is bytes else message))

    def _from_tail(self, session_id: str | None, stream: str, number: int) -> list[tuple[str, dict[str, t.Any]]]:
        # The events from *number* on that the stream's tail holds (write_many with ``ends``).
        tail = self.cache.get(self.counter_key(session_id, stream))
        if not isinstance(tail, dict) or not isinstance(tail.get("first"), int) or tail["first"] > number:
            return []
        kept = tail.get("events") or []
        return [
            (f"{stream}:{at}", json.loads(message) if type(message) is bytes else message)
            for at, message in enumerate(kept[number - tail["first"] :], start=number)
        ]


def event_count(counter: t.Any) -> int:
    """The number of the newest event of a stream, from its counter's value (:meth:`EventLog.counter_key`):
    a count, or the stream's tail holding one; 0 for none."""
    if isinstance(counter, dict):
        count = counter.get("n")
        return count if type(count) is int else 0
    return int(counter or 0)


@functools.lru_cache(maxsize=1024)
def _stream_keys(session_id: str | None, stream: str) -> tuple[str, str, str]:
    """The keys of a stream being written: its events' (a prefix, the number after it), its note, its counter.

    Kept for the streams written lately: a stream's handler may write its events in several batches.
    Never the broadcast stream's (:meth:`EventLog.append` writes that).
    """
    # EventLog._key of each family, the owner's tag found once.
    owner = tag(session_id if session_id is not None else stream)
    return f"ev:{owner}:{stream}:", f"evq:{owner}:{stream}", f"evn:{owner}:{stream}"


class Reader:
    """One reader's place in a stream: every event delivered once, in order, none skipped silently.

    Appending counts an event before it stores it, so a reader may see the
    count move before the event can be read (another process is between its
    two writes): the reader then stays before it, and gives it up only after
    :data:`GAP_GRACE` seconds (the event was lost, or expired). A count lower
    than the reader's place means the counter started over (it was evicted):
    the reader starts over with it.

    :param log: the event log.
    :param number: the number of the last event already delivered.
    """

    def __init__(self, log: EventLog, session_id: str | None, stream: str, number: int) -> None:
        self.log = log
        self.session_id = session_id
        self.stream = stream
        self.number = number
        self._gap_since: float | None = None

    @property
    def behind(self) -> bool:
        """Whether an event was counted but could not be read yet: look again soon, not at the next count."""
        return self._gap_since is not None

    def read(self, top: int, now: float, replay_max: int | None = None) -> list[tuple[str, dict[str, t.Any]]]:
        """The events after the reader's place, up to the count *top* (the counter's value now).

        :param now: a monotonic time, for the grace of a gap.
        :param replay_max: deliver at most this many of the newest events when far behind.
        """
        if top < self.number:
            self.number = 0
        if replay_max is not None:
            self.number = max(self.number, top - replay_max)
        found = self.log.after(self.session_id, self.stream, self.number, top) if top > self.number else []
        if found:
            self.number = int(found[-1][0].rpartition(":")[2])
        if self.number >= top:
            self._gap_since = None
        elif self._gap_since is None:
            self._gap_since = now
        elif now - self._gap_since >= GAP_GRACE:
            # Still missing after the grace: lost or expired. Step over it, and read on at the next look.
            self.number += 1
            self._gap_since = now if self.number < top else None
        return found
