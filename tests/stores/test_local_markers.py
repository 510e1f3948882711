"""Markers written straight into a store in this process's memory: what the cache's own calls would see and do."""

from __future__ import annotations

import threading

import pytest
from cachelib import SimpleCache
from flask_caching.backends import NullCache
from flask_caching.backends import SimpleCache as FlaskSimpleCache

from flask_mcp.binding.caches import KeepingCache
from flask_mcp.stores.local_markers import LocalMarkers, local_markers_for
from tests.conftest import START, Clock


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    clock = Clock(START)
    monkeypatch.setattr("cachelib.simple.time", clock.time)
    return clock


@pytest.mark.parametrize("kind", [SimpleCache, FlaskSimpleCache, KeepingCache])
def test_only_a_cache_in_process_memory_gets_local_markers(kind: type[SimpleCache]) -> None:
    assert isinstance(local_markers_for(kind()), LocalMarkers)
    assert local_markers_for(NullCache()) is None
    assert local_markers_for(object()) is None


def test_a_marker_is_what_the_caches_add_writes_without_a_timeout(clock: Clock) -> None:
    """Read back by ``get`` as True, refused by ``add``, never expiring; ``add`` refuses it too."""
    backend = KeepingCache()
    markers = local_markers_for(backend)
    assert markers is not None
    assert markers.add("m")
    assert backend.get("m") is True and not backend.add("m", 1)
    assert not markers.add("m")
    clock.advance(10**6)
    assert markers.holds("m") and backend.get("m") is True


def test_a_marker_takes_the_place_of_an_expired_entry_only(clock: Clock) -> None:
    backend = SimpleCache()
    markers = local_markers_for(backend)
    assert markers is not None
    backend.set("k", "live", timeout=5)
    assert markers.holds("k") and not markers.add("k")
    assert backend.get("k") == "live"  # untouched
    clock.advance(6)
    assert not markers.holds("k")
    assert markers.add("k") and backend.get("k") is True


def test_drop_deletes_whoever_wrote_the_entries() -> None:
    backend = SimpleCache()
    markers = local_markers_for(backend)
    assert markers is not None
    markers.add("m")
    backend.set("c", True, timeout=60)
    markers.drop("m", "c", "absent")
    assert backend.get("m") is None and backend.get("c") is None
    assert not markers.holds("m") and markers.add("m")


def race(markers: LocalMarkers, key: str, threads: int) -> list[bool]:
    """What each of *threads* threads, set off together, got from ``markers.add(key)``."""
    start = threading.Barrier(threads)
    won: list[bool] = []

    def take() -> None:
        start.wait()
        won.append(markers.add(key))

    runs = [threading.Thread(target=take) for _ in range(threads)]
    for run in runs:
        run.start()
    for run in runs:
        run.join()
    return won


def test_one_of_many_threads_takes_a_marker() -> None:
    """The check and the write are one step under the cache's lock: of threads racing for a key, one wins."""
    markers = local_markers_for(SimpleCache())
    assert markers is not None
    for round_ in range(50):
        assert race(markers, f"m{round_}", 8).count(True) == 1
