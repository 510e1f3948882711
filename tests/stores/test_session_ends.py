"""Sessions measured however they end: awaited in windows of the store, swept once a window, each measured once."""

from __future__ import annotations

import time
import typing as t

import pytest
import redis
from flask import Flask
from flask_caching import Cache

from flask_mcp.binding.caches import KEEPING_CACHE
from flask_mcp.core.client import ClientState
from flask_mcp.stores import sessions as sessions_module
from flask_mcp.stores.session_ends import LOOKBACK, SessionEnds
from flask_mcp.stores.sessions import SessionStore
from tests.conftest import Clock, worker_app

TTL = 600
WINDOW = 60


class Recorder:
    """An :class:`~flask_mcp.stores.session_ends.EndRecorder` that keeps what it is given."""

    def __init__(self) -> None:
        self.measuring = True
        self.recorded: list[tuple[float, dict[str, t.Any], str | None]] = []

    def describe(self, state: ClientState) -> dict[str, t.Any]:
        return {"mcp.protocol.version": state.protocol_version}

    def record(self, duration: float, attributes: t.Mapping[str, t.Any], error_type: str | None) -> None:
        self.recorded.append((duration, dict(attributes), error_type))


@pytest.fixture
def cache() -> t.Iterator[Cache]:
    """The short-lived store as flask_mcp builds it in process memory (its counters keep their expiry)."""
    app = Flask("session_ends")
    cache = Cache(app, config={"CACHE_TYPE": KEEPING_CACHE, "CACHE_THRESHOLD": 10_000})
    with app.app_context():
        yield cache


@pytest.fixture
def clock(cache_clock: Clock, monkeypatch: pytest.MonkeyPatch) -> Clock:
    """One fake clock for the store and for the cache backend's expiry checks."""
    monkeypatch.setattr(sessions_module, "time", cache_clock)
    return cache_clock


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


def measured(cache: Cache, recorder: Recorder, **options: t.Any) -> SessionStore:
    store = SessionStore(cache, ttl=TTL, **options)
    store.ends = SessionEnds(store, cache, recorder, WINDOW)
    return store


@pytest.fixture
def store(cache: Cache, clock: Clock, recorder: Recorder) -> SessionStore:
    return measured(cache, recorder)


def sweep(store: SessionStore) -> None:
    assert store.ends is not None
    store.ends.poll()


def test_a_session_that_idles_out_is_measured_once_by_a_later_sweep(
    store: SessionStore, clock: Clock, recorder: Recorder
) -> None:
    store.create(ClientState(protocol_version="2025-06-18"))
    clock.advance(TTL + WINDOW)
    sweep(store)  # its window is not due yet: a whole window of grace
    assert recorder.recorded == []
    clock.advance(2 * WINDOW)
    sweep(store)
    assert recorder.recorded == [(TTL, {"mcp.protocol.version": "2025-06-18"}, "timeout")]
    clock.advance(5 * WINDOW)
    sweep(store)
    assert len(recorder.recorded) == 1


def test_a_session_in_use_is_not_measured_and_ends_at_its_last_use(
    store: SessionStore, clock: Clock, recorder: Recorder
) -> None:
    session_id = store.create(ClientState())
    for _ in range(4):  # every use past a tenth of the lifetime writes the record again
        clock.advance(TTL / 2)
        assert store.open(session_id) is not None
        sweep(store)
    assert recorder.recorded == []
    clock.advance(TTL + 3 * WINDOW)
    sweep(store)
    ((duration, _, error_type),) = recorder.recorded
    assert (duration, error_type) == (4 * TTL / 2 + TTL, "timeout")


def test_a_session_past_its_maximum_age_is_measured_as_such(cache: Cache, clock: Clock, recorder: Recorder) -> None:
    store = measured(cache, recorder, max_age=TTL + TTL // 2)
    session_id = store.create(ClientState())
    clock.advance(TTL - 100)
    assert store.open(session_id) is not None  # its record now lives only until the maximum age
    clock.advance(TTL + 3 * WINDOW)
    sweep(store)
    assert [(duration, error_type) for duration, _, error_type in recorder.recorded] == [(TTL + TTL // 2, "max_age")]


def test_a_request_that_finds_its_session_past_its_maximum_age_measures_it_once(
    cache: Cache, clock: Clock, recorder: Recorder
) -> None:
    store = measured(cache, recorder, max_age=TTL)
    session_id = store.create(ClientState())
    store.clock = lambda: clock.now + TTL + 1  # the store's clock is ahead of the cache's: the record is still there
    assert store.open(session_id) is None
    assert [(duration, error_type) for duration, _, error_type in recorder.recorded] == [(TTL, "max_age")]
    store.clock = sessions_module._now
    clock.advance(TTL + 3 * WINDOW)
    sweep(store)
    assert len(recorder.recorded) == 1


def test_a_deleted_session_is_measured_by_the_delete_and_never_by_a_sweep(
    store: SessionStore, clock: Clock, recorder: Recorder
) -> None:
    session_id = store.create(ClientState())
    clock.advance(30)
    assert store.delete(session_id)
    assert [(duration, error_type) for duration, _, error_type in recorder.recorded] == [(30, None)]
    assert not store.delete(session_id)
    clock.advance(TTL + 3 * WINDOW)
    sweep(store)
    assert len(recorder.recorded) == 1


def test_a_session_ended_for_its_owner_s_cap_is_measured_as_evicted(
    cache: Cache, clock: Clock, recorder: Recorder
) -> None:
    store = measured(cache, recorder, per_owner=1)
    store.create(ClientState(), owner="alice")
    clock.advance(10)
    store.create(ClientState(), owner="alice")
    assert [(duration, error_type) for duration, _, error_type in recorder.recorded] == [(10, "evicted")]
    clock.advance(TTL + 3 * WINDOW)
    sweep(store)
    assert [error_type for _, _, error_type in recorder.recorded] == ["evicted", "timeout"]


def test_one_sweep_a_window_whoever_polls(store: SessionStore, clock: Clock, recorder: Recorder, cache: Cache) -> None:
    other = SessionEnds(store, cache, recorder, WINDOW)  # another process's, on the same store
    for _ in range(3):
        store.create(ClientState())
    clock.advance(TTL + 3 * WINDOW)
    reads: list[str] = []
    original = cache.get

    def counted(key: str) -> t.Any:
        reads.append(key)
        return original(key)

    cache.get = counted  # type: ignore[method-assign]
    sweep(store)
    other.poll()
    sweep(store)
    assert len(recorder.recorded) == 3
    # The second poller lost the claim and read nothing; the first poller asked once this window.
    assert [key for key in reads if key == "sess-sweep-at"] == ["sess-sweep-at"]


def test_a_sweep_after_a_long_silence_looks_back_so_far_only(
    store: SessionStore, clock: Clock, recorder: Recorder
) -> None:
    store.create(ClientState())
    clock.advance(TTL + (LOOKBACK + 5) * WINDOW)  # its window, and the entry, are gone
    sweep(store)
    assert recorder.recorded == []


def test_nothing_is_written_while_nothing_measures(
    store: SessionStore, clock: Clock, recorder: Recorder, cache: Cache
) -> None:
    recorder.measuring = False
    writes: list[str] = []
    for name in ("add", "set"):
        original = getattr(cache, name)

        def spy(key: str, *args: t.Any, _original: t.Any = original, **kwargs: t.Any) -> t.Any:
            writes.append(key)
            return _original(key, *args, **kwargs)

        setattr(cache, name, spy)
    session_id = store.create(ClientState())
    store.delete(session_id)
    sweep(store)
    assert all(key.startswith("session:") for key in writes), writes
    assert recorder.recorded == []


def test_a_store_that_fails_never_fails_the_session(
    store: SessionStore, clock: Clock, recorder: Recorder, cache: Cache, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*args: t.Any, **kwargs: t.Any) -> t.Any:
        raise ConnectionError("store down")

    assert store.ends is not None
    store.ends.cache = t.cast(Cache, type("Broken", (), {"add": broken, "get": broken, "cache": None})())
    session_id = store.create(ClientState())
    assert store.load(session_id) is not None
    sweep(store)
    assert store.delete(session_id)
    assert recorder.recorded == []
    assert "store down" in caplog.text


def test_a_session_the_store_still_holds_past_its_end_is_looked_at_again(
    store: SessionStore, clock: Clock, recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    session_id, end = store.create(ClientState()), clock.now + TTL
    clock.advance(TTL + 3 * WINDOW)
    expiries = store.expiries
    # The store's clock is behind ours: it still holds the record, as written when it was created.
    monkeypatch.setattr(store, "expiries", lambda ids: [end if i == session_id else None for i in ids])
    sweep(store)
    assert recorder.recorded == []
    monkeypatch.setattr(store, "expiries", expiries)
    clock.advance(3 * WINDOW)
    sweep(store)
    assert [(duration, error_type) for duration, _, error_type in recorder.recorded] == [(TTL, "timeout")]


def _commands(redis_url: str) -> int:
    """How many commands the redis-server has run so far (not counting the ``INFO`` that asks)."""
    with redis.Redis.from_url(redis_url) as client:
        stats = client.info("commandstats")
    return sum(int(found["calls"]) for name, found in stats.items() if name != "cmdstat_info")


def test_a_session_write_costs_at_most_one_more_command_on_redis(redis_url: str, prefix: str) -> None:
    """Counted by the server (``INFO commandstats``): one ``SET`` of the entry a write, and a few to take numbers."""
    app = worker_app(redis_url, prefix)
    state = app.extensions["mcp"]
    store: SessionStore = state.sessions
    now = time.time()
    store.clock = lambda: now  # every expiry in one window
    sessions = 40

    def write_sessions() -> int:
        before = _commands(redis_url)
        for _ in range(sessions):
            session = store.open(store.create(ClientState()))
            assert session is not None
            store.store(session)  # written again, its expiry in the same window
        return _commands(redis_url) - before

    with app.app_context():
        state.ephemeral_cache.get("warm")  # its connection is open before anything is counted
        unmeasured = write_sessions()
        store.ends = SessionEnds(store, state.ephemeral_cache, Recorder(), WINDOW)
        measured = write_sessions()
    writes = 2 * sessions
    # One block of numbers taken with an add and an increment, a second one with an increment.
    assert measured - unmeasured <= writes + 3, (measured, unmeasured)


def test_a_write_in_the_same_window_moves_the_end_it_awaits(
    store: SessionStore, clock: Clock, recorder: Recorder
) -> None:
    """The entry of the window is overwritten, not left as it was: the end measured is the last write's."""
    session_id = store.create(ClientState())
    room = (store.clock() + TTL) % WINDOW
    step = (WINDOW - room) / 2  # the new expiry stays in the window of the first
    clock.advance(step)
    session = store.open(session_id)
    assert session is not None
    store.store(session)
    clock.advance(TTL + 3 * WINDOW)
    sweep(store)
    assert [(duration, error_type) for duration, _, error_type in recorder.recorded] == [(TTL + step, "timeout")]


def test_a_forked_worker_takes_numbers_of_its_own(
    store: SessionStore, clock: Clock, recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Numbers held before a fork are the parent's: the child's sessions never overwrite its entries."""
    from flask_mcp.stores import session_ends

    parent = store.open(store.create(ClientState()))
    assert parent is not None and parent.noted is not None
    monkeypatch.setattr(session_ends.os, "getpid", lambda: -1)  # now in the child
    child = store.open(store.create(ClientState()))
    assert child is not None and child.noted is not None
    assert child.noted[0] == parent.noted[0] and child.noted[1] > parent.noted[1] + 1
    clock.advance(TTL + 3 * WINDOW)
    sweep(store)
    assert len(recorder.recorded) == 2
