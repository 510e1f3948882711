"""The process-local cache that never evicts a live entry, and the limiter's counters kept in one."""

from __future__ import annotations

import pytest

from flask_mcp.policies import keeping_cache
from flask_mcp.policies.keeping_cache import KeepingSimpleCache, sweep_expired
from flask_mcp.policies.ratelimit import CacheRateLimiter, FixedWindow
from tests.conftest import START, Clock


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    clock = Clock(START)
    monkeypatch.setattr("cachelib.simple.time", clock.time)
    monkeypatch.setattr(keeping_cache.time, "time", clock.time)
    return clock


def test_past_its_threshold_it_drops_expired_entries_only(clock: Clock) -> None:
    cache = KeepingSimpleCache(threshold=10)
    cache.set("forever", 1, timeout=0)
    for n in range(5):
        cache.set(f"short:{n}", n, timeout=10)
    for n in range(50):
        cache.set(f"live:{n}", n, timeout=3600)
    assert all(cache.get(f"live:{n}") == n for n in range(50)) and cache.get("forever") == 1
    clock.advance(11)
    cache.set("one-more", 1, timeout=3600)
    assert not any(f"short:{n}" in cache._cache for n in range(5))
    assert cache.get("forever") == 1 and len(cache._cache) == 52


def test_sweeping_spares_entries_without_a_timeout(clock: Clock) -> None:
    cache = KeepingSimpleCache()
    cache.set("forever", 1, timeout=0)
    cache.set("short", 1, timeout=1)
    clock.advance(2)
    sweep_expired(cache)
    assert set(cache._cache) == {"forever"}


def test_a_counter_keeps_its_expiry_when_counted(clock: Clock) -> None:
    cache = KeepingSimpleCache(default_timeout=0)
    cache.add("counter", 0, timeout=10)
    assert cache.inc("counter") == 1 and cache.inc("counter", 2) == 3 and cache.dec("counter") == 2
    clock.advance(11)
    assert cache.get("counter") is None


def test_no_number_of_callers_brings_a_spent_budget_back() -> None:
    """Counted in this process, a flood of other callers' counters never pushes one out."""
    limiter = CacheRateLimiter.in_process()
    limit = FixedWindow(1, 3600)
    assert limiter.hit("victim", limit) is None
    assert limiter.hit("victim", limit) is not None
    for n in range(2000):
        limiter.hit(f"flood:{n}", limit)
    assert limiter.hit("victim", limit) is not None
