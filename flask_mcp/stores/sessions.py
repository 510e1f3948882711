"""Sessions of the handshake era, kept in a flask-caching cache.

Every piece of cross-request state lives in the cache, never in process
memory, so any worker process or host sharing the cache (Redis in
production) can serve any request of a session.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import secrets
import time
import typing as t

from flask import current_app, has_app_context
from flask_caching import Cache

from ..core.client import ClientState
from ..core.hooks import session_ended
from ..policies.store_keys import key as store_key
from ..protocol.versions import DEFAULT_NEGOTIATED_VERSION
from .lock import store_lock
from .session_ends import EVICTED, MAX_AGE, noted_of

if t.TYPE_CHECKING:
    from .local_records import LocalRecords
    from .session_ends import Noted, SessionEnds

__all__ = ["CacheSubscriptions", "Described", "Session", "SessionStore", "described"]

_KEY = "session"
#: The most session ids whose store key is remembered (all are forgotten past it).
_KEYS_KEPT = 4096
_OWNER_KEY = "owner"
_SUBSCRIPTIONS_KEY = "subs"
#: How long subscriptions outlive their session at most when sessions have no absolute lifetime.
_SUBSCRIPTIONS_TTL = 86400


def _now() -> float:
    # Looked up at each call, so ``time`` can be replaced (tests patch the module).
    return time.time()


@dataclasses.dataclass
class Session:
    """A live session as the store loaded it."""

    id: str
    state: ClientState
    #: Subject of the principal that created it; ``None`` without authentication.
    owner: str | None = None
    #: When it was created (seconds since the epoch), for ``MCP_SESSION_MAX_AGE``.
    created: float = 0.0
    #: The value of the store's ``read_along`` key, read in the same round trip.
    read_along: t.Any = None
    #: Where its end is awaited, when that is measured (:mod:`flask_mcp.stores.session_ends`).
    noted: Noted | None = None


#: A session's client as it declared itself: its name (``clientInfo.name``) and the revision agreed.
Described = tuple[str | None, str]


def described(record: dict[str, t.Any]) -> Described:
    """The declared name and the revision of the client of a session *record*."""
    info = record.get("i")
    name = info.get("name") if isinstance(info, dict) else None
    return (name if isinstance(name, str) else None), str(record.get("v", DEFAULT_NEGOTIATED_VERSION))


class SessionStore:
    """Create, load, save and delete sessions.

    A session belongs to the principal that created it: loading it on
    behalf of anybody else finds nothing, exactly as for an unknown id.

    :param cache: a flask-caching :class:`~flask_caching.Cache` bound to the app.
    :param ttl: idle lifetime in seconds; every use extends it.
    :param max_age: absolute lifetime in seconds, however active; ``None`` for none.
    :param per_owner: live sessions one owner may hold; creating one more
        ends that owner's oldest. ``None`` for no cap.
    :param clock: the time source (seconds since the epoch); ``time.time`` by default.
    :param read_along: a key read in the same round trip as every session
        :meth:`open` loads (the shared registry's record), handed over as
        :attr:`Session.read_along`.
    :param origin: set for a store only this process can see (SimpleCache):
        a mark put before every id it mints, so that an id minted by another
        process can be told from an unknown one (:meth:`minted_elsewhere`).
    """

    def __init__(
        self,
        cache: Cache,
        ttl: int,
        *,
        max_age: int | None = None,
        per_owner: int | None = None,
        clock: t.Callable[[], float] | None = None,
        read_along: str | None = None,
        origin: str | None = None,
    ) -> None:
        self.cache = cache
        self.origin = origin
        self.read_along = read_along
        self._keys: dict[str, str] = {}
        self.ttl = ttl
        self.max_age = max_age
        self.per_owner = per_owner
        #: The time source; replace it to control expiry in tests.
        self.clock: t.Callable[[], float] = clock or _now
        # Re-storing the session on every request just to push its expiry
        # back would double the cache round trips; refreshing once a tenth
        # of the lifetime has passed keeps it alive at a fraction of the cost.
        self._refresh_after = max(1.0, ttl / 10)
        #: Where the ends of sessions are awaited, to measure their durations; ``None``: not measured.
        self.ends: SessionEnds | None = None
        #: Reads of a store in this process's memory that decode a record once per write, for
        #: :meth:`check` (:mod:`.local_records`); ``None``: every read goes through the cache.
        self.local_records: LocalRecords | None = None
        # One bound method for the store's life: LocalRecords.view keeps what it derives by its identity.
        self._check_view = self._view_for_check

    def create(self, state: ClientState, owner: str | None = None) -> str:
        """Store *state* under a new random id, owned by *owner*, and return the id.

        The id is 32 bytes from :mod:`secrets`, URL-safe base64 (visible
        ASCII, as the spec requires). ``cache.add`` stores only if the key is
        free, atomically on Redis, so two workers can never share an id.
        """
        created = self.clock()
        for _ in range(3):
            session_id = secrets.token_urlsafe(32)
            if self.origin is not None:
                session_id = f"{self.origin}.{session_id}"
            session = Session(session_id, state, owner, created)
            timeout = self._timeout(session)
            expires = self.clock() + timeout
            if self.ends is not None:
                session.noted = self.ends.place(expires, None)
            if self.cache.add(store_key(_KEY, session_id), self._record(session), timeout=timeout):
                if self.ends is not None and session.noted is not None:
                    self.ends.expect(session.noted, session_id, created, expires, state)
                if owner is not None and self.per_owner is not None:
                    self._index(session)
                return session_id
        raise RuntimeError("could not store a new MCP session; is the session cache reachable?")

    def minted_elsewhere(self, session_id: str) -> bool:
        """Whether *session_id* was minted by another process's own store (so this one cannot know it)."""
        if self.origin is None:
            return False
        mark, dot, _ = session_id.partition(".")
        return bool(dot) and mark != self.origin and len(mark) == len(self.origin)

    def open(self, session_id: str, owner: str | None = None) -> Session | None:
        """The live session *session_id* of *owner*, or ``None`` if unknown, expired, deleted or not theirs."""
        found = self._live(session_id, owner)
        if found is None:
            return None
        record, along, created, now = found
        session = self._session(session_id, record, owner, created, along)
        if now - record.get("t", 0) > self._refresh_after:
            self.store(session)
        return session

    @property
    def read_keys(self) -> tuple[str, ...]:
        """The prefixes of the keys every session read fetches: the records', then the ``read_along`` key."""
        return (f"{_KEY}:", self.read_along) if self.read_along is not None else (f"{_KEY}:",)

    def check(self, session_id: str, owner: str | None = None) -> tuple[bool, t.Any, Described | None]:
        """Whether *session_id* is a live session of *owner*, the ``read_along`` value read with it, and
        the client's declared name and revision (what an audit record names).

        What :meth:`open` does (the idle timeout restarted now and then
        included) without building the session's state, for a request that
        uses nothing of it.
        """
        local = self.local_records
        if local is not None:
            key = self._keys.get(session_id)
            if key is not None:
                # What the check needs of the record as last written: its owner, and the time
                # until which nothing (a refresh, the end of its life) is due. A look at the clock.
                view = local.view(key, self._check_view)
                if view is not None and view[0] == owner and self.clock() < view[1]:
                    return True, None, view[2]
        found = self._live(session_id, owner, shared=True)
        if found is None:
            return False, None, None
        record, along, created, now = found
        if now - record.get("t", 0) > self._refresh_after:
            self.store(self._session(session_id, record, owner, created, along))
        return True, along, described(record)

    def _view_for_check(self, record: t.Any) -> tuple[str | None, float, Described] | None:
        # Whose *record* is, and until when a check of it is a look at the clock: its
        # refresh, and its end of life (MCP_SESSION_MAX_AGE), whichever comes first.
        if not isinstance(record, dict):
            return None
        until = record.get("t", 0) + self._refresh_after
        created = record.get("_c")
        if self.max_age is not None and created is not None:
            until = min(until, created + self.max_age)
        return record.get("_o"), until, described(record)

    def _live(
        self, session_id: str, owner: str | None, shared: bool = False
    ) -> tuple[dict[str, t.Any], t.Any, float, float] | None:
        # The record of a live session of *owner*, what was read along, when it was created, and now.
        # shared: the caller only looks at the record, which may then be one other readers hold.
        key = self._keys.get(session_id)
        if key is None:
            # Remembered: a session's key is worked out (its id matched against the key alphabet) once.
            if len(self._keys) >= _KEYS_KEPT:
                self._keys.clear()
            key = self._keys[session_id] = store_key(_KEY, session_id)
        if shared and self.local_records is not None:
            record, along = self.local_records.read(key), None
        elif self.read_along is None:
            record, along = self.cache.get(key), None
        else:
            record, along = self.cache.get_many(key, self.read_along)
        if not isinstance(record, dict) or record.get("_o") != owner:
            return None
        now = self.clock()
        created = record.get("_c", now)
        if self.max_age is not None and now - created > self.max_age:
            self._expire(session_id, owner, record)
            return None
        return record, along, created, now

    def _session(
        self, session_id: str, record: dict[str, t.Any], owner: str | None, created: float, along: t.Any
    ) -> Session:
        state = ClientState.from_dict(record, self.subscriptions(session_id))
        return Session(session_id, state, owner, created, along, noted_of(record.get("_e")))

    def load(self, session_id: str, owner: str | None = None) -> ClientState | None:
        """The state of a live session of *owner*, or ``None`` (see :meth:`open`)."""
        session = self.open(session_id, owner)
        return session.state if session is not None else None

    def store(self, session: Session) -> None:
        """Store *session* again, which also restarts the idle timeout."""
        timeout = self._timeout(session)
        expires = self.clock() + timeout
        if self.ends is not None:  # the same entry while the expiry stays in its window
            session.noted = self.ends.place(expires, session.noted)
        self.cache.set(store_key(_KEY, session.id), self._record(session), timeout=timeout)
        if self.ends is not None and session.noted is not None:
            self.ends.expect(session.noted, session.id, session.created, expires, session.state)

    def save(self, session_id: str, state: ClientState) -> None:
        """Replace the state of a live session (keeping its owner and age); restarts the idle timeout.

        It reads the record first; a transport that loaded the session with
        :meth:`open` calls :meth:`store` instead and saves that round trip.
        """
        record = self.cache.get(store_key(_KEY, session_id))
        if isinstance(record, dict):
            created = record.get("_c", self.clock())
            self.store(Session(session_id, state, record.get("_o"), created, noted=noted_of(record.get("_e"))))

    def delete(self, session_id: str, owner: str | None = None) -> bool:
        """End a session of *owner*; ``False`` if it did not exist or is not theirs."""
        key = store_key(_KEY, session_id)
        record = self.cache.get(key)
        if not isinstance(record, dict) or record.get("_o") != owner:
            return False
        if self.ends is not None:  # measured before it is gone, so that no sweep finds it gone first
            now = self.clock()
            self.ends.ended(session_id, record.get("_c", now), now, ClientState.from_dict(record), None)
        self.cache.delete_many(key, store_key(_SUBSCRIPTIONS_KEY, session_id))
        return True

    def expiries(self, session_ids: t.Sequence[str]) -> list[float | None]:
        """When the record of each session expires, as last written (``None``: it is gone), whoever owns it."""
        found: list[float | None] = []
        for start in range(0, len(session_ids), 500):
            keys = [store_key(_KEY, session_id) for session_id in session_ids[start : start + 500]]
            found.extend(self._expiry(record) for record in self.cache.get_many(*keys))
        return found

    def _expiry(self, record: t.Any) -> float | None:
        if not isinstance(record, dict):
            return None
        stored = float(record.get("t", 0))
        timeout: float = self.ttl
        if self.max_age is not None:  # as _timeout computed it when the record was written
            timeout = max(1, min(self.ttl, math.ceil(float(record.get("_c", stored)) + self.max_age - stored)))
        return stored + timeout

    def _expire(self, session_id: str, owner: str | None, record: dict[str, t.Any]) -> None:
        # Past MCP_SESSION_MAX_AGE: gone for good, and said once (the record goes with it).
        if self.ends is not None:
            created = record.get("_c", 0.0)
            ended = created + t.cast(int, self.max_age)
            self.ends.ended(session_id, created, ended, ClientState.from_dict(record), MAX_AGE)
        self.cache.delete_many(store_key(_KEY, session_id), store_key(_SUBSCRIPTIONS_KEY, session_id))
        if session_ended.receivers:
            sender = current_app._get_current_object() if has_app_context() else self  # type: ignore[attr-defined]
            session_ended.send(sender, session_id=session_id, principal=None, owner=owner, reason="expired")

    def subscriptions(self, session_id: str) -> CacheSubscriptions:
        """The resource subscriptions of session *session_id*, kept next to it in the cache."""
        return CacheSubscriptions(self.cache, session_id, self.max_age or _SUBSCRIPTIONS_TTL)

    def _timeout(self, session: Session) -> int:
        if self.max_age is None:
            return self.ttl
        # The cache drops the record by itself once the absolute lifetime is over.
        remaining = math.ceil(session.created + self.max_age - self.clock())
        return max(1, min(self.ttl, remaining))

    def _record(self, session: Session) -> dict[str, t.Any]:
        record = session.state.to_dict()
        record["t"] = self.clock()
        record["_c"] = session.created
        if session.owner is not None:
            record["_o"] = session.owner
        if session.noted is not None:
            record["_e"] = list(session.noted)
        return record

    def _index(self, session: Session) -> None:
        """Record *session* in its owner's index and end the oldest past the cap.

        Oldest-evicted rather than new-refused: a client that crashes without
        DELETE leaks its sessions until they idle out, and refusing would lock
        that principal out meanwhile; evicting only ever costs the principal
        its own stalest session. The index lives in the cache like the
        sessions, so every worker sees it; concurrent creates by one
        principal may let it overshoot the cap briefly (read, modify, write).
        """
        key = store_key(_OWNER_KEY, t.cast(str, session.owner))
        index = self.cache.get(key)
        entries: list[tuple[str, float]] = list(index) if isinstance(index, list) else []
        if entries:
            # Drop sessions that expired or were deleted since.
            alive = self.cache.get_many(*(store_key(_KEY, session_id) for session_id, _ in entries))
            records = {entry[0]: record for entry, record in zip(entries, alive, strict=True) if record is not None}
            entries = [entry for entry in entries if entry[0] in records]
        else:
            records = {}
        entries.append((session.id, session.created))
        entries.sort(key=lambda entry: entry[1])
        cap = t.cast(int, self.per_owner)
        evicted, entries = entries[:-cap], entries[-cap:]
        if evicted:
            if self.ends is not None:
                now = self.clock()
                for session_id, created in evicted:
                    state = ClientState.from_dict(records.get(session_id) or {})
                    self.ends.ended(session_id, created, now, state, EVICTED)
            self.cache.delete_many(*(store_key(_KEY, session_id) for session_id, _ in evicted))
        self.cache.set(key, entries, timeout=self.max_age or 0)


class CacheSubscriptions:
    """A session's :class:`~flask_mcp.core.subscriptions.Subscriptions`: one list under its own key.

    Not in the session record, which every request loads: only updates and
    (un)subscribe read it. Changes are read-modify-write under a lock taken
    in the cache itself (``add`` of a lock key: atomic on Redis), so
    concurrent subscribes from any number of threads and processes all land.

    :param cache: the session cache.
    :param session_id: whose subscriptions.
    :param ttl: seconds the list lives after its last change (at most the session's absolute lifetime).
    """

    def __init__(self, cache: Cache, session_id: str, ttl: int) -> None:
        self.cache = cache
        self.session_id = session_id
        self.ttl = ttl

    @functools.cached_property
    def key(self) -> str:
        """The list's key; made on first use, as most requests never look at their subscriptions."""
        return store_key(_SUBSCRIPTIONS_KEY, self.session_id)

    def uris(self) -> list[str]:
        """The subscribed URIs, oldest first."""
        value = self.cache.get(self.key)
        return list(value) if isinstance(value, list) else []

    def __contains__(self, uri: object) -> bool:
        return uri in self.uris()

    def add(self, uri: str, limit: int | None) -> bool:
        """Subscribe to *uri* unless *limit* others are subscribed."""
        with store_lock(self.cache, self.key):
            uris = self.uris()
            if uri in uris:
                return True
            if limit is not None and len(uris) >= limit:
                return False
            self.cache.set(self.key, [*uris, uri], timeout=self.ttl)
            return True

    def discard(self, uri: str) -> None:
        """Unsubscribe from *uri*."""
        with store_lock(self.cache, self.key):
            uris = self.uris()
            if uri in uris:
                uris.remove(uri)
                self.cache.set(self.key, uris, timeout=self.ttl)
