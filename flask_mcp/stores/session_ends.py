"""When handshake sessions end with nobody there to see it, kept in the store so that each is measured once.

A session ends by ``DELETE`` (or by stdin closing, over stdio) in a request
that sees it end. Most end otherwise: the client goes away and the record
idles out of the store, or it passes ``MCP_SESSION_MAX_AGE``. No process is
there at that moment, so the store keeps the moment ahead of time:

* every time a session's record is written (created, refreshed, changed),
  an entry ``[id, created, expires, reason, attributes, tries]`` is put in
  the *window* of its expiry (``expires // window``), numbered by the
  backend's atomic increment: ``sess-end:{W}:n``, counted by
  ``sess-end-n:{W}`` (one hash tag per window: a window is read in one
  ``MGET``);
* once per window, the first process with a message to handle claims the
  window two before the current one (``sess-sweep:{W}``, an ``add``: ``SET
  NX``), reads every window since the last one swept (``sess-sweep-at``),
  and settles each session found there: still alive and written again
  since, it waits in a later window; gone, its end is claimed
  (``sess-ended:{id}``, an ``add`` again) and its duration recorded;
* a session that ends where a request sees it (``DELETE``, its maximum age,
  eviction for its owner's cap) claims the same ``sess-ended`` key, so that
  no sweep measures it again.

A process remembers only the last window it tried to claim, so that it asks
the store once a window; losing that costs one more ``add``. Nothing here
ever fails a request: a store error is logged and the measurement lost.
"""

from __future__ import annotations

import logging
import math
import typing as t

from ..policies.store_keys import key as store_key

if t.TYPE_CHECKING:
    from flask_caching import Cache

    from ..core.client import ClientState
    from .sessions import SessionStore

__all__ = ["LOOKBACK", "EndRecorder", "SessionEnds"]

logger = logging.getLogger("flask_mcp")

_ENTRY = "sess-end"
_COUNT = "sess-end-n"
_SWEEP = "sess-sweep"
_ENDED = "sess-ended"
#: The last window swept: one key for the whole server, read once a window.
_CURSOR = "sess-sweep-at"
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

    # -- a request sees a session written, or ended --------------------------------------------------

    def expect(self, session_id: str, created: float, expires: float, state: ClientState) -> None:
        """The record of a session was just written: it ends at *expires* unless written again."""
        try:
            if not self.recorder.measuring:
                return
            max_age = self.sessions.max_age
            # The record's lifetime was cut to what was left of the maximum age: that is how it ends.
            reason = MAX_AGE if max_age is not None and expires >= created + max_age - 1e-6 else TIMEOUT
            entry = _Entry(session_id, created, expires, reason, self.recorder.describe(state))
            self._append(self._window_of(expires), entry)
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
        return bool(self.cache.add(store_key(_ENDED, session_id), 1, timeout=timeout))

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
            if self.cache.add(store_key(_SWEEP, str(due)), 1, timeout=self._retain):
                self._sweep(due, now)
        except Exception:
            logger.warning("could not measure the MCP sessions that ended unseen", exc_info=True)

    def _sweep(self, due: int, now: float) -> None:
        cursor = self.cache.get(_CURSOR)
        first = due - LOOKBACK + 1
        if isinstance(cursor, int) and not isinstance(cursor, bool):
            first = max(first, cursor + 1)
        latest: dict[str, _Entry] = {}
        swept: list[list[str]] = []
        for window in range(first, due + 1):
            count_key = store_key(_COUNT, str(window))
            count = self.cache.get(count_key)
            if not isinstance(count, int) or count <= 0:
                continue
            keys = [store_key(_ENTRY, str(window), number) for number in range(1, count + 1)]
            for chunk in _chunks(keys):
                for value in self.cache.get_many(*chunk):
                    entry = _Entry.parse(value)
                    if entry is not None and (entry.id not in latest or entry.expires > latest[entry.id].expires):
                        latest[entry.id] = entry
            swept.append([*keys, count_key])
        self._settle(list(latest.values()), now)
        self.cache.set(_CURSOR, due, timeout=self._retain)
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
                self._append(self._window_of(max(now, expiry)), entry._replace(tries=entry.tries + 1))
            # Otherwise it was written again since, and a later window holds it.

    # -- the windows -------------------------------------------------------------------------------

    def _window_of(self, moment: float) -> int:
        return math.floor(moment / self.window)

    def _append(self, window: int, entry: _Entry) -> None:
        # Kept until a sweep can no longer look back at the window.
        timeout = max(1, math.ceil((window + 1) * self.window - self.sessions.clock())) + self._retain
        count_key = store_key(_COUNT, str(window))
        self.cache.add(count_key, 0, timeout=timeout)
        for _ in range(3):  # a counter that started over (evicted) collides with numbers still held
            number = self.cache.cache.inc(count_key)  # the backend's atomic increment (INCR on Redis)
            if not number:
                break
            if self.cache.add(store_key(_ENTRY, str(window), number), list(entry), timeout=timeout):
                return
        logger.warning("could not note when MCP session ends; its duration will not be measured")
