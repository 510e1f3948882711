"""Records of a store in this process's memory, decoded once per write: what they answer is what ``get`` does."""

from __future__ import annotations

import typing as t

import pytest
from cachelib import SimpleCache
from flask_caching.backends import NullCache
from flask_caching.backends import SimpleCache as FlaskSimpleCache

from flask_mcp import MCP
from flask_mcp.binding.caches import KeepingCache
from flask_mcp.core.client import ClientState
from flask_mcp.stores.local_records import LocalRecords, local_records_for
from tests.conftest import START, Clock, worker_app


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    clock = Clock(START)
    monkeypatch.setattr("cachelib.simple.time", clock.time)
    return clock


class CountingLoads:
    """The backend's serializer, counting what it decodes."""

    def __init__(self, backend: SimpleCache) -> None:
        self.inner = backend.serializer
        self.decoded = 0

    def dumps(self, value: t.Any) -> bytes:
        return t.cast(bytes, self.inner.dumps(value))

    def loads(self, data: bytes) -> t.Any:
        self.decoded += 1
        return self.inner.loads(data)


@pytest.fixture
def backend(clock: Clock) -> SimpleCache:
    return FlaskSimpleCache()


def test_what_it_reads_is_what_get_answers_through_writes_deletes_and_expiry(
    backend: SimpleCache, clock: Clock
) -> None:
    records = LocalRecords(backend)
    assert records.read("k") is None
    backend.set("k", {"v": 1}, timeout=10)
    assert records.read("k") == backend.get("k") == {"v": 1}
    backend.set("k", {"v": 2}, timeout=10)
    assert records.read("k") == backend.get("k") == {"v": 2}
    clock.advance(11)
    assert records.read("k") is None and backend.get("k") is None
    backend.set("k", {"v": 3}, timeout=0)  # never expires
    clock.advance(10**6)
    assert records.read("k") == backend.get("k") == {"v": 3}
    backend.delete("k")
    assert records.read("k") is None and backend.get("k") is None


def test_each_write_is_decoded_once(backend: SimpleCache) -> None:
    counting = backend.serializer = CountingLoads(backend)
    records = LocalRecords(backend)
    backend.set("k", {"v": 1})
    first = records.read("k")
    assert records.read("k") is first and counting.decoded == 1
    backend.set("k", {"v": 1})  # the same value written again: a new entry
    assert records.read("k") == first and counting.decoded == 2


def test_it_keeps_a_bounded_number_of_decoded_values(backend: SimpleCache) -> None:
    records = LocalRecords(backend, kept=3)
    for n in range(10):
        backend.set(f"k{n}", n)
        assert records.read(f"k{n}") == n
        assert len(records._decoded) <= 3


def test_a_view_is_derived_once_per_write_and_goes_with_it(backend: SimpleCache, clock: Clock) -> None:
    records = LocalRecords(backend, kept=2)
    derived: list[t.Any] = []

    def derive(value: t.Any) -> t.Any:
        derived.append(value)
        return value["v"] * 10

    assert records.view("k", derive) is None
    backend.set("k", {"v": 1}, timeout=10)
    assert records.view("k", derive) == records.view("k", derive) == 10 and len(derived) == 1
    backend.set("k", {"v": 2}, timeout=10)
    assert records.view("k", derive) == 20 and len(derived) == 2
    assert records.view("k", lambda value: "another") == "another"  # another derivation is not this one's
    clock.advance(11)
    assert records.view("k", derive) is None
    backend.set("k", {"v": 3})
    backend.delete("k")
    assert records.view("k", derive) is None
    for n in range(5):
        backend.set(f"k{n}", {"v": n})
        assert records.view(f"k{n}", derive) == n * 10
        assert len(records._views) <= 2


def test_only_a_simplecache_is_read_this_way() -> None:
    assert isinstance(local_records_for(FlaskSimpleCache()), LocalRecords)
    assert isinstance(local_records_for(KeepingCache()), LocalRecords)
    assert local_records_for(NullCache()) is None
    assert local_records_for(object()) is None


def test_a_session_check_reads_them_and_a_change_is_seen_at_once(make_app: t.Callable[..., t.Any]) -> None:
    app = make_app(MCP())
    store = app.extensions["mcp"].sessions
    assert store is not None and store.local_records is not None
    with app.app_context():
        session_id = store.create(ClientState(), owner="ann")
        assert store.check(session_id, "ann")[0] and not store.check(session_id, "bob")[0]
        assert store.delete(session_id, "ann")
        assert not store.check(session_id, "ann")[0]


def test_a_shared_store_reads_through_the_cache(redis_url: str) -> None:
    # Another process may write a record there without replacing anything this one holds.
    store = worker_app(redis_url, "local-records:").extensions["mcp"].sessions
    assert store is not None and store.local_records is None
