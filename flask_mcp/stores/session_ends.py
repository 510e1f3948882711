"""When handshake sessions end with nobody there to see it, kept in the store so that each is measured once.

A session ends by ``DELETE`` (or by stdin closing, over stdio) in a request
that sees it end. Most end otherwise: the client goes away and the record
idles out of the store, or it passes ``MCP_SESSION_MAX_AGE``. No process is
there at that moment, so the store keeps the moment ahead of time:

* every time a session's record is written (created, refreshed, changed),
  an entry ``[id, created, expires, reason, attributes, tries]`` is put in
  the *window* of its expiry (``expires // window``): ``sess-end:{W}:n``
  (one hash tag per window: a window is read in one ``MGET``). Its number
  ``n`` is kept in the session's record, so that a write whose expiry stays
  in the same window overwrites the same entry: one ``SET`` a write. A
  process takes numbers from the window's counter (``sess-end-n:{W}``, the
  backend's atomic increment) a block at a time, so that a new window costs
  it one more command (two the first time it writes to that window) every
  :data:`BLOCK` sessions;
* once per window, the first process with a message to handle claims the
  window two before the current one (``sess-sweep:{W}``, an ``add``: ``SET
  NX``), reads every window since the last one swept (``sess-sweep-at``),
  and settles each session found there: still alive and written again
  since, it waits in a later window; gone, its end is claimed
  (``sess-ended:{id}``, an ``add`` again) and its duration recorded;
* a session that ends where a request sees it (``DELETE``, its maximum age,
  eviction for its owner's cap) claims the same ``sess-ended`` key, so that
  no sweep measures it again.

The keys are made by :mod:`flask_mcp.policies.store_keys`. A process
remembers only the last window it tried to claim, so that it asks the store
once a window, and the numbers it holds; losing either costs one more
command. Nothing here ever fails a request: a store error is logged and the
measurement lost.
"""

from __future__ import annotations

import logging
import math
import os
import threading
import typing as t

from ..policies.store_keys import (
    SESSION_SWEEP_CURSOR,
    session_end_count,
    session_end_entry,
    session_ended,
    session_sweep_claim,
)

if t.TYPE_CHECKING:
    from flask_caching import Cache

    from ..core.client import ClientState
    from .sessions import SessionStore

__all__ = ["BLOCK", "LOOKBACK", "EndRecorder", "Noted", "SessionEnds", "noted_of"]

logger = logging.getLogger("flask_mcp")

#: Where a session's entry is: its window and its number there (kept in the session's record).
Noted = tuple[int, int]
#: Entry numbers a process takes from a window's counter at once.
BLOCK = 32
#: Windows a sweep looks back at most: a session whose end no message follows for longer is not measured.
LOOKBACK = 60
#: Times an entry whose session should be gone but is not is looked at again (clocks that disagree).
_TRIES = 3
#: Keys read or deleted in one command at most.
_CHUNK = 500
#: ``error.type`` of a session that idled out, passed its maximum age, or was ended for its owner's cap.
TIMEOUT = "timeout"
MAX_AGE = "max_age"
EVICTED = "evicted"


class EndRecorder(t.Protocol):
    """Where the durations go (the telemetry's ``mcp.server.session.duration``)."""

    @property
    def measuring(self) -> bool:
        """Whether durations are recorded now: nothing is written to the store otherwise."""
        ...  # pragma: no cover - a protocol

    def describe(self, state: ClientState) -> dict[str, t.Any]:
        """The attributes of the session's duration, read in one of its own requests."""
        ...  # pragma: no cover - a protocol

    def record(self, duration: float, attributes: t.Mapping[str, t.Any], error_type: str | None) -> None:
        """Record one session's *duration* in seconds."""
        ...  # pragma: no cover - a protocol


class _Entry(t.NamedTuple):
    id: str
    created: float
    expires: float
    reason: str
    attributes: dict[str, t.Any]
    tries: int = 0

    @classmethod
    def parse(cls, value: t.Any) -> _Entry | None:
        if not isinstance(value, list) or len(value) != 6:
            return None
        try:
            return cls(str(value[0]), float(value[1]), float(value[2]), str(value[3]), dict(value[4]), int(value[5]))
        except (TypeError, ValueError):
            return None


def noted_of(value: t.Any) -> Noted | None:
    """The :data:`Noted` a session's record holds, if it holds a well-formed one."""
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(type(part) is int for part in value):
        return (value[0], value[1])
    return None


def _chunks(items: t.Sequence[str]) -> t.Iterator[t.Sequence[str]]:
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]


class SessionEnds:
    """The ends of one session store's sessions, awaited in *cache* (see the module's description).

    :param sessions: the store whose sessions are measured (its clock, lifetimes and records).
    :param cache: where the windows live: the short-lived store, so that they never evict a session.
    :param recorder: where durations go.
    :param window: seconds of one window (``MCP_OTEL_SESSION_SWEEP_INTERVAL``): a session's end is
        measured two to three windows after it.
    """

    def __init__(self, sessions: SessionStore, cache: Cache, recorder: EndRecorder, window: int) -> None:
        self.sessions = sessions
        self.cache = cache
        self.recorder = recorder
        self.window = window
        #: Seconds a window's entries, a claim and the cursor are kept: as long as a sweep looks back.
        self._retain = LOOKBACK * window
        #: The last window this process tried to claim (only to ask the store once a window).
        self._tried = -1
        #: The entry numbers this process holds in each window: the next one, the last one.
        self._held: dict[int, tuple[int, int]] = {}
        #: The process they were taken by: a forked worker starts without its parent's.
        self._holder = os.getpid()
        self._lock = threading.Lock()

    # -- a request sees a session written, or ended --------------------------------------------------

    def place(self, expires: float, noted: Noted | None) -> Noted | None:
        """Where the entry of a session whose record is being written, to end at *expires*, goes.

        The entry it had (*noted*, from its record) when that is in the same
        window; else a new number. ``None``: nothing is measured (no meter,
        or the store failed: the session is written all the same).
        """
        try:
            if not self.recorder.measuring:
                return None
            window = self._window_of(expires)
            if noted is not None and noted[0] == window:
                return noted
            return (window, self._number(window))
        except Exception:  # never fail a request for a measurement
            logger.warning("could not note when MCP session ends; its duration may not be measured", exc_info=True)
            return None

    def expect(self, noted: Noted, session_id: str, created: float, expires: float, state: ClientState) -> None:
        """The record of a session was just written, with *noted* (:meth:`place`): it ends at *expires*."""
        try:
            max_age = self.sessions.max_age
            # The record's lifetime was cut to what was left of the maximum age: that is how it ends.
            reason = MAX_AGE if max_age is not None and expires >= created + max_age - 1e-6 else TIMEOUT
            entry = _Entry(session_id, created, expires, reason, self.recorder.describe(state))
            self._put(noted, entry)
        except Exception:  # never fail a request for a measurement
            logger.warning("could not note when MCP session ends; its duration may not be measured", exc_info=True)

    def ended(self, session_id: str, created: float, ended: float, state: ClientState, error_type: str | None) -> None:
        """A request saw a session end: measure it, unless something else already did."""
        try:
            if self.recorder.measuring and self.claim(session_id):
                self.recorder.record(max(0.0, ended - created), self.recorder.describe(state), error_type)
        except Exception:
            logger.warning("could not measure the end of an MCP session", exc_info=True)

    def claim(self, session_id: str) -> bool:
        """Whether this caller is the one that measures the end of *session_id* (atomic: ``add``)."""
        timeout = self.sessions.ttl + self._retain
        return bool(self.cache.add(session_ended(session_id), 1, timeout=timeout))

    # -- once a window, some process sweeps --------------------------------------------------------

    def poll(self) -> None:
        """Sweep the windows now due, if this process has not tried yet in this window and wins the claim."""
        try:
            if not self.recorder.measuring:
                return
            now = self.sessions.clock()
            due = self._window_of(now) - 2  # a whole window of grace after the last expiry it holds
            if due <= self._tried:
                return
            self._tried = due
            if self.cache.add(session_sweep_claim(due), 1, timeout=self._retain):
                self._sweep(due, now)
        except Exception:
            logger.warning("could not measure the MCP sessions that ended unseen", exc_info=True)

    def _sweep(self, due: int, now: float) -> None:
        cursor = self.cache.get(SESSION_SWEEP_CURSOR)
        first = due - LOOKBACK + 1
        if isinstance(cursor, int) and not isinstance(cursor, bool):
            first = max(first, cursor + 1)
        latest: dict[str, _Entry] = {}
        swept: list[list[str]] = []
        for window in range(first, due + 1):
            count_key = session_end_count(window)
            count = self.cache.get(count_key)
            if not isinstance(count, int) or count <= 0:
                continue
            # Numbers a process held but did not use read as nothing.
            keys = [session_end_entry(window, number) for number in range(1, count + 1)]
            for chunk in _chunks(keys):
                for value in self.cache.get_many(*chunk):
                    entry = _Entry.parse(value)
                    if entry is not None and (entry.id not in latest or entry.expires > latest[entry.id].expires):
                        latest[entry.id] = entry
            swept.append([*keys, count_key])
        self._settle(list(latest.values()), now)
        self.cache.set(SESSION_SWEEP_CURSOR, due, timeout=self._retain)
        for keys in swept:  # each window's keys share a tag: one command per chunk
            for chunk in _chunks(keys):
                self.cache.delete_many(*chunk)

    def _settle(self, entries: list[_Entry], now: float) -> None:
        """Measure the sessions of *entries* that are gone; look again later at those that should be."""
        expiries = self.sessions.expiries([entry.id for entry in entries])
        for entry, expiry in zip(entries, expiries, strict=True):
            if expiry is None:
                if self.claim(entry.id):
                    self.recorder.record(max(0.0, entry.expires - entry.created), entry.attributes, entry.reason)
            elif expiry <= entry.expires + 1 and entry.tries < _TRIES:
                # Not written again, yet still there: the store's clock is behind ours. Look again later.
                window = self._window_of(max(now, expiry))
                self._put((window, self._number(window)), entry._replace(tries=entry.tries + 1))
            # Otherwise it was written again since, and a later window holds it.

    # -- the windows -------------------------------------------------------------------------------

    def _window_of(self, moment: float) -> int:
        return math.floor(moment / self.window)

    def _keep(self, window: int) -> int:
        """Seconds the keys of *window* are kept: until a sweep can no longer look back at it."""
        return max(1, math.ceil((window + 1) * self.window - self.sessions.clock())) + self._retain

    def _put(self, noted: Noted, entry: _Entry) -> None:
        self.cache.set(session_end_entry(*noted), list(entry), timeout=self._keep(noted[0]))

    def _number(self, window: int) -> int:
        """A number of *window* for a new entry: one this process holds, else the first of a new block."""
        with self._lock:
            if self._holder != os.getpid():  # forked: the numbers held are the parent's, which uses them
                self._held.clear()
                self._holder = os.getpid()
            held = self._held.get(window)
            if held is not None and held[0] <= held[1]:
                self._held[window] = (held[0] + 1, held[1])
                return held[0]
        count_key = session_end_count(window)
        if held is None:  # the counter expires with its window's entries, whoever made it
            self.cache.add(count_key, 0, timeout=self._keep(window))
        last = self.cache.cache.inc(count_key, BLOCK)  # the backend's atomic increment (INCRBY on Redis)
        if not isinstance(last, int) or last < BLOCK:
            raise RuntimeError(f"the store did not count {count_key!r}")
        with self._lock:
            current = self._window_of(self.sessions.clock())
            for past in [held_window for held_window in self._held if held_window < current]:
                del self._held[past]
            self._held[window] = (last - BLOCK + 2, last)
        return last - BLOCK + 1
