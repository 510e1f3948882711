"""The session store: unit tests on SimpleCache, and shared sessions across workers on Redis."""

from __future__ import annotations

import pickle
import secrets
import threading
import types
import typing as t
from concurrent.futures import ThreadPoolExecutor

import pytest
from flask import Flask
from flask_caching import Cache

from flask_mcp.core.client import ClientState
from flask_mcp.stores import sessions as sessions_module
from flask_mcp.stores.local_records import local_records_for
from flask_mcp.stores.sessions import SessionStore
from flask_mcp.testing import MCPTestClient
from tests.conftest import START, Clock, worker_app

TTL = 600


@pytest.fixture
def clock(cache_clock: Clock, monkeypatch: pytest.MonkeyPatch) -> Clock:
    """One fake clock for the store and for the cache backend's expiry checks."""
    monkeypatch.setattr(sessions_module, "time", cache_clock)
    return cache_clock


@pytest.fixture
def store(cache: Cache, clock: Clock) -> SessionStore:
    return SessionStore(cache, ttl=TTL)


def typical_state() -> ClientState:
    return ClientState(
        protocol_version="2025-06-18",
        client_info={"name": "claude-desktop", "title": "Claude", "version": "0.12.3"},
        capabilities={"roots": {"listChanged": True}, "sampling": {}, "elicitation": {}},
        log_level="warning",
    )


@pytest.fixture
def recorded(store: SessionStore, monkeypatch: pytest.MonkeyPatch) -> list[t.Any]:
    """Every value the store writes to its cache (add and set)."""
    values: list[t.Any] = []
    for name in ("add", "set"):
        original = getattr(store.cache, name)

        def spy(key: str, value: t.Any, *args: t.Any, _original: t.Any = original, **kwargs: t.Any) -> t.Any:
            values.append(value)
            return _original(key, value, *args, **kwargs)

        monkeypatch.setattr(store.cache, name, spy)
    return values


# -- SimpleCache unit tests -----------------------------------------------------


def test_create_returns_distinct_visible_ascii_ids(store: SessionStore) -> None:
    """Ids never repeat and are visible ASCII."""
    ids = [store.create(ClientState()) for _ in range(200)]
    assert len(set(ids)) == len(ids)
    assert all(session_id and all(0x21 <= ord(c) <= 0x7E for c in session_id) for session_id in ids)


@pytest.mark.parametrize(
    "state",
    [ClientState(), typical_state(), ClientState(protocol_version="2024-11-05", log_level="debug")],
    ids=["empty", "typical", "partial"],
)
def test_load_returns_saved_state(store: SessionStore, state: ClientState) -> None:
    """What create stored comes back equal, and not marked changed."""
    session_id = store.create(state)
    loaded = store.load(session_id)
    assert loaded == state
    assert loaded is not state
    assert loaded.changed is False


def test_save_replaces_state(store: SessionStore) -> None:
    """save overwrites the stored state of a session only."""
    first, second = store.create(ClientState()), store.create(ClientState())
    store.save(first, typical_state())
    assert store.load(first) == typical_state()
    assert store.load(second) == ClientState()


def test_delete(store: SessionStore) -> None:
    """delete is True once, then False; the session is gone."""
    session_id = store.create(typical_state())
    assert store.delete(session_id) is True
    assert store.load(session_id) is None
    assert store.delete(session_id) is False


@pytest.mark.parametrize("session_id", ["", "unknown", "x" * 43, "../session:", "a b", "é"])
def test_unknown_id(store: SessionStore, session_id: str) -> None:
    """Ids never issued load as None and do not delete."""
    store.create(ClientState())
    assert store.load(session_id) is None
    assert store.delete(session_id) is False


@pytest.mark.parametrize(("idle", "alive"), [(1, True), (TTL - 1, True), (TTL + 1, False), (10 * TTL, False)])
def test_idle_session_expires(store: SessionStore, clock: Clock, idle: float, alive: bool) -> None:
    """A session untouched for longer than the TTL is gone."""
    session_id = store.create(typical_state())
    clock.advance(idle)
    assert (store.load(session_id) is not None) is alive


def test_use_extends_lifetime(store: SessionStore, clock: Clock) -> None:
    """Loading a session well into its TTL pushes its expiry back."""
    session_id = store.create(ClientState())
    clock.advance(TTL * 0.6)
    assert store.load(session_id) is not None
    clock.advance(TTL * 0.6)  # 1.2 TTL after creation, 0.6 TTL after last use
    assert store.load(session_id) is not None
    clock.advance(TTL + 1)
    assert store.load(session_id) is None


def test_save_extends_lifetime(store: SessionStore, clock: Clock) -> None:
    """save restarts the idle timeout."""
    session_id = store.create(ClientState())
    clock.advance(TTL - 10)
    store.save(session_id, typical_state())
    clock.advance(TTL - 10)
    assert store.load(session_id) == typical_state()


def test_expired_session_cannot_be_deleted(store: SessionStore, clock: Clock) -> None:
    """An expired session counts as unknown for delete too."""
    session_id = store.create(ClientState())
    clock.advance(TTL + 1)
    assert store.delete(session_id) is False


def test_load_does_not_rewrite_fresh_session(store: SessionStore, clock: Clock, recorded: list[t.Any]) -> None:
    """Loading right after a write does not store the session again."""
    session_id = store.create(ClientState())
    assert len(recorded) == 1
    clock.advance(1)
    for _ in range(5):
        assert store.load(session_id) is not None
    assert len(recorded) == 1


def test_stored_record_is_small(store: SessionStore, recorded: list[t.Any]) -> None:
    """A typical client's record pickles to a few hundred bytes at most."""
    session_id = store.create(typical_state())
    store.save(session_id, typical_state())
    assert len(recorded) == 2
    for record in recorded:
        assert len(pickle.dumps(record)) < 1024


def test_id_collision_retries(store: SessionStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """cache.add refuses a taken id: the store draws again and never overwrites a session."""
    tokens = iter(["taken", "taken", "fresh"])
    monkeypatch.setattr(sessions_module, "secrets", types.SimpleNamespace(token_urlsafe=lambda n: next(tokens)))
    assert store.create(typical_state()) == "taken"
    assert store.create(ClientState()) == "fresh"
    assert store.load("taken") == typical_state()


def test_persistent_collisions_raise(store: SessionStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """If no free id can be stored the store raises instead of reusing one."""
    monkeypatch.setattr(sessions_module, "secrets", types.SimpleNamespace(token_urlsafe=lambda n: "always"))
    store.create(typical_state())
    with pytest.raises(RuntimeError):
        store.create(ClientState())
    assert store.load("always") == typical_state()


# -- Redis: several workers share sessions ----------------------------------------


def test_workers_share_sessions(workers: tuple[Flask, Flask], make_client: t.Callable[..., t.Any]) -> None:
    """initialize on A, call on B; DELETE on B ends the session on A."""
    a, b = make_client(workers[0]), make_client(workers[1])
    a.initialize("2025-06-18")
    b.session_id, b.protocol_version = a.session_id, a.protocol_version
    assert b.call_tool("add", {"a": 20, "b": 22})["structuredContent"] == {"result": 42}
    assert b.request("logging/setLevel", {"level": "error"}) == {}
    with workers[0].app_context():
        state = workers[0].extensions["mcp"].sessions.load(a.session_id)
    assert (state.protocol_version, state.log_level) == ("2025-06-18", "error")
    assert b.http.delete("/mcp", headers=b.headers()).status_code == 204
    response = a.post({"jsonrpc": "2.0", "id": 5, "method": "ping"})
    assert response.status_code == 404
    assert response.get_json()["id"] == 5
    assert a.http.delete("/mcp", headers=a.headers()).status_code == 404


def test_redis_sessions_expire(
    redis_url: str, prefix: str, workers: tuple[Flask, Flask], make_client: t.Callable[..., t.Any]
) -> None:
    """Every key written to Redis carries a TTL: the store's no longer than MCP_SESSION_TTL,
    the new-session quota's no longer than its window."""
    import redis

    client = make_client(workers[0])
    client.initialize()
    assert client.request("logging/setLevel", {"level": "info"}) == {}
    ttl = workers[0].config["MCP_SESSION_TTL"]
    with redis.Redis.from_url(redis_url) as server:
        keys = list(server.scan_iter(match=prefix + "*"))
        assert keys
        window = workers[0].extensions["mcp"].settings.session_rate_limit.period
        for key in keys:
            assert 0 < server.ttl(key) <= (window + 1 if b":ratelimit:" in key else ttl), key


def _create_in_threads(app: Flask, count: int, threads: int) -> list[str]:
    store = app.extensions["mcp"].sessions
    barrier = threading.Barrier(threads)

    def create(index: int) -> str:
        with app.app_context():
            if index < threads:
                barrier.wait(timeout=30)
            return t.cast(str, store.create(ClientState(client_info={"name": f"c{index}", "version": "1"})))

    with ThreadPoolExecutor(max_workers=threads) as pool:
        return list(pool.map(create, range(count)))


def test_concurrent_creates_yield_unique_ids(workers: tuple[Flask, Flask]) -> None:
    """Many sessions created at once from threads all get distinct, loadable ids."""
    ids = _create_in_threads(workers[0], count=200, threads=16)
    assert len(set(ids)) == len(ids)
    with workers[1].app_context():
        store = workers[1].extensions["mcp"].sessions
        for index, session_id in enumerate(ids):
            assert store.load(session_id).client_info["name"] == f"c{index}"


def test_concurrent_collisions_have_one_winner(workers: tuple[Flask, Flask], monkeypatch: pytest.MonkeyPatch) -> None:
    """Threads that all draw the same id first: Redis add lets exactly one keep it."""
    local = threading.local()

    def token_urlsafe(nbytes: int) -> str:
        if not getattr(local, "drawn", False):
            local.drawn = True
            return "contested-id"
        return secrets.token_urlsafe(nbytes)

    monkeypatch.setattr(sessions_module, "secrets", types.SimpleNamespace(token_urlsafe=token_urlsafe))
    threads = 12
    ids = _create_in_threads(workers[0], count=threads, threads=threads)
    assert len(set(ids)) == threads
    assert ids.count("contested-id") == 1
    winner = ids.index("contested-id")
    with workers[1].app_context():
        state = workers[1].extensions["mcp"].sessions.load("contested-id")
    assert state.client_info["name"] == f"c{winner}"


# -- owners, the per-owner cap and the absolute lifetime -----------------------------


def test_session_belongs_to_its_owner(store: SessionStore) -> None:
    """Another owner, or none, neither loads nor deletes it; the owner does."""
    session_id = store.create(typical_state(), owner="alice")
    assert store.load(session_id) is None
    assert store.load(session_id, "bob") is None
    assert store.delete(session_id, "bob") is False
    assert store.load(session_id, "alice") == typical_state()
    store.save(session_id, ClientState(log_level="error"))  # keeps the owner
    assert store.load(session_id, "alice") == ClientState(log_level="error")
    assert store.delete(session_id, "alice") is True


def test_per_owner_cap_ends_the_oldest(cache: Cache, clock: Clock) -> None:
    store = SessionStore(cache, ttl=TTL, per_owner=3)
    ids = []
    for _ in range(5):
        ids.append(store.create(ClientState(), owner="alice"))
        clock.advance(1)
    other = store.create(ClientState(), owner="bob")
    assert [store.load(s, "alice") is not None for s in ids] == [False, False, True, True, True]
    assert store.load(other, "bob") is not None
    # Sessions that ended on their own make room again.
    assert store.delete(ids[2], "alice")
    newest = store.create(ClientState(), owner="alice")
    assert [store.load(s, "alice") is not None for s in [*ids[3:], newest]] == [True, True, True]


def test_absolute_lifetime_with_an_injected_clock(cache: Cache) -> None:
    now = [START]
    store = SessionStore(cache, ttl=TTL, max_age=TTL * 2, clock=lambda: now[0])
    session_id = store.create(ClientState())
    for _ in range(4):  # used every half TTL: never idle for long
        now[0] += TTL / 2
        assert store.load(session_id) is not None
    now[0] += 1
    assert store.load(session_id) is None


@pytest.mark.parametrize("max_age", [None, 10**9])
def test_no_absolute_lifetime(cache: Cache, clock: Clock, max_age: int | None) -> None:
    store = SessionStore(cache, ttl=TTL, max_age=max_age)
    session_id = store.create(ClientState())
    for _ in range(30):
        clock.advance(TTL / 2)
        assert store.load(session_id) is not None


# -- Subscriptions: their own key, changed atomically ------------------------------


def test_subscriptions_stay_out_of_the_session_record(store: SessionStore, recorded: list[t.Any]) -> None:
    """The record every request loads does not grow with the session's subscriptions."""
    session_id = store.create(typical_state())
    before = len(pickle.dumps(recorded[-1]))
    session = store.open(session_id)
    assert session is not None
    for n in range(50):
        assert session.state.subscriptions.add(f"docs://page-{n}-" + "x" * 1000, None)
    store.store(session)
    assert len(pickle.dumps(recorded[-1])) == before
    reopened = store.open(session_id)
    assert reopened is not None and "docs://page-7-" + "x" * 1000 in reopened.state.subscriptions


def test_subscriptions_are_capped_per_session(store: SessionStore) -> None:
    """Past the limit a new URI is refused; a URI already subscribed, or one freed by unsubscribing, is not."""
    subscriptions = store.subscriptions(store.create(ClientState()))
    assert all(subscriptions.add(f"docs://{n}", 3) for n in range(3))
    assert not subscriptions.add("docs://3", 3)
    assert subscriptions.add("docs://1", 3)
    subscriptions.discard("docs://0")
    assert subscriptions.add("docs://3", 3)
    assert subscriptions.uris() == ["docs://1", "docs://2", "docs://3"]


def test_deleting_a_session_drops_its_subscriptions(store: SessionStore) -> None:
    session_id = store.create(ClientState())
    store.subscriptions(session_id).add("docs://a", None)
    assert store.delete(session_id)
    assert store.subscriptions(session_id).uris() == []


def test_concurrent_subscribes_all_land(store: SessionStore, cache: Cache) -> None:
    """Ten threads subscribing to one session at once: every URI is kept."""
    session_id = store.create(ClientState())
    app = cache.app
    barrier = threading.Barrier(10)

    def subscribe(n: int) -> bool:
        with app.app_context():
            barrier.wait()
            return store.subscriptions(session_id).add(f"docs://{n}", None)

    with ThreadPoolExecutor(max_workers=10) as pool:
        assert all(pool.map(subscribe, range(10)))
    assert sorted(store.subscriptions(session_id).uris()) == sorted(f"docs://{n}" for n in range(10))


def _subscribe_from_process(redis_url: str, prefix: str, session_id: str, start: t.Any, name: str) -> None:
    """One process's share of the hammering: 20 subscribes over HTTP, as fast as they go."""
    app = worker_app(redis_url, prefix)
    client = MCPTestClient(app, era="handshake")
    client.session_id, client.protocol_version = session_id, "2025-11-25"
    start.wait()
    for n in range(20):
        assert client.request("resources/subscribe", {"uri": f"docs://{name}/{n}"}) == {}


def test_subscribes_from_two_processes_all_land(redis_url: str, prefix: str, workers: tuple[Flask, Flask]) -> None:
    """Two processes subscribing to one session on a shared Redis: none of the 40 URIs is lost."""
    import multiprocessing

    client = MCPTestClient(workers[0])
    client.initialize()
    session_id = t.cast(str, client.session_id)
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(2)
    processes = [
        context.Process(target=_subscribe_from_process, args=(redis_url, prefix, session_id, start, name))
        for name in ("a", "b")
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=120)
        assert process.exitcode == 0
    with workers[1].app_context():
        uris = workers[1].extensions["mcp"].sessions.subscriptions(session_id).uris()
    assert sorted(uris) == sorted(f"docs://{name}/{n}" for name in ("a", "b") for n in range(20))


# -- The check of a process-local store: a look at the clock until something is due ----------


def _checked_store(cache: Cache, max_age: int | None) -> SessionStore:
    store = SessionStore(cache, ttl=TTL, max_age=max_age)
    store.local_records = local_records_for(cache.cache)
    assert store.local_records is not None
    return store


@pytest.mark.parametrize("max_age", [None, TTL * 3])
def test_a_check_through_the_local_records_answers_as_open_does(
    cache: Cache, clock: Clock, recorded_sets: list[str], max_age: int | None
) -> None:
    """Through idle time, refreshes, the absolute lifetime and another owner, check and open agree.

    Each session is checked through the records' view (two of them, so the
    second is never the first's) while its twin, created at the same moment,
    is opened through the cache: both must be alive together, and both must
    have been stored again at the same moments.
    """
    store = _checked_store(cache, max_age)
    clock.advance(0.7)
    checked = store.create(ClientState(), owner="ann")
    opened = store.create(ClientState(), owner="ann")
    # Created at 0.7 s. At 1.7 and 31.7 s nothing is due; then refreshes; at 1799.2 s one, which
    # the cache keeps until 1801 s (it counts from the whole second), so that at 1800.85 s only the
    # absolute lifetime (when there is one, until 1800.7 s) has run out; at last the idle timeout.
    steps = [1, TTL / 20, TTL / 10, 1, TTL / 2, TTL / 2, TTL / 2, TTL / 2, TTL / 2, 206.5, 1.65, TTL + 1]
    answers = []
    for step in steps:
        clock.advance(step)
        recorded_sets.clear()
        live = store.check(checked, "ann")[0]
        assert live == store.check(checked, "ann")[0]  # the second look goes through the view
        assert not store.check(checked, "bob")[0]
        assert live == (store.open(opened, "ann") is not None)
        assert len(recorded_sets) in (0, 2), "a refresh of one and not of the other"
        answers.append(live)
    # Each case was met: alive, refreshed, ended (idle, or past its absolute lifetime).
    assert answers[0] and not answers[-1]
    assert (max_age is not None) == (answers.count(False) > 1)


def test_a_check_through_the_local_records_sees_a_delete_and_a_save_at_once(cache: Cache, clock: Clock) -> None:
    store = _checked_store(cache, None)
    session_id = store.create(ClientState(), owner="ann")
    assert store.check(session_id, "ann")[0]
    store.save(session_id, typical_state())  # a new entry: the view of the old one is not used
    assert store.check(session_id, "ann")[0] and not store.check(session_id, None)[0]
    assert store.delete(session_id, "ann")
    assert not store.check(session_id, "ann")[0]


@pytest.fixture
def recorded_sets(cache: Cache, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The keys the store writes with ``set`` (a refresh stores the session again)."""
    keys: list[str] = []
    original = cache.set

    def spy(key: str, value: t.Any, *args: t.Any, **kwargs: t.Any) -> t.Any:
        keys.append(key)
        return original(key, value, *args, **kwargs)

    monkeypatch.setattr(cache, "set", spy)
    return keys
