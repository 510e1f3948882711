"""The process-local cache that never evicts a live entry, and the limiter's counters kept in one."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from flask_mcp.policies import keeping_cache
from flask_mcp.policies.keeping_cache import KeepingSimpleCache, sweep_expired
from flask_mcp.policies.ratelimit import CacheRateLimiter, FixedWindow
from tests.conftest import START, Clock


def test_past_its_threshold_it_drops_expired_entries_only(memory_clock: Clock) -> None:
    cache = KeepingSimpleCache(threshold=10)
    cache.set("forever", 1, timeout=0)
    for n in range(5):
        cache.set(f"short:{n}", n, timeout=10)
    for n in range(50):
        cache.set(f"live:{n}", n, timeout=3600)
    assert all(cache.get(f"live:{n}") == n for n in range(50)) and cache.get("forever") == 1
    memory_clock.advance(11)
    cache.set("one-more", 1, timeout=3600)
    assert not any(f"short:{n}" in cache._cache for n in range(5))
    assert cache.get("forever") == 1 and len(cache._cache) == 52


def test_sweeping_spares_entries_without_a_timeout(memory_clock: Clock) -> None:
    cache = KeepingSimpleCache()
    cache.set("forever", 1, timeout=0)
    cache.set("short", 1, timeout=1)
    memory_clock.advance(2)
    sweep_expired(cache)
    assert set(cache._cache) == {"forever"}


def test_a_counter_keeps_its_expiry_when_counted(memory_clock: Clock) -> None:
    cache = KeepingSimpleCache(default_timeout=0)
    cache.add("counter", 0, timeout=10)
    assert cache.inc("counter") == 1 and cache.inc("counter", 2) == 3 and cache.dec("counter") == 2
    memory_clock.advance(11)
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


@settings(max_examples=40, deadline=None)
@given(
    count=st.integers(1, 1200),
    pattern=st.lists(st.sampled_from([0, 5, 10, 3600]), min_size=1, max_size=6),
    later=st.integers(0, 20),
)
@example(count=1000, pattern=[5], later=10)  # four steps' worth of expired entries
def test_past_its_threshold_writes_sweep_what_expired_a_step_at_a_time(
    count: int, pattern: list[int], later: int
) -> None:
    """No live entry is ever dropped; a write drops SWEEP_STEP expired entries at most; the writes that
    follow drop every expired one."""
    lives = [pattern[number % len(pattern)] for number in range(count)]
    clock = Clock(START)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("cachelib.simple.time", clock.time)
        patch.setattr(keeping_cache.time, "time", clock.time)
        cache = KeepingSimpleCache(threshold=10, default_timeout=0)
        for number, life in enumerate(lives):
            cache.set(f"k{number}", number, timeout=life)
        clock.advance(later)
        expired = {f"k{n}" for n, life in enumerate(lives) if life and START + life < clock.now}
        live = {f"k{n}" for n in range(len(lives))} - expired
        writes = len(expired) // keeping_cache.SWEEP_STEP + 1
        for write in range(writes):
            held = set(cache._cache)
            cache.set(f"w{write}", write, timeout=0)
            assert len(held - set(cache._cache)) <= keeping_cache.SWEEP_STEP
            assert live <= set(cache._cache)
        if len(lives) > 10:  # past the threshold from the first write on
            assert not expired & set(cache._cache)


def test_a_life_can_be_shortened_never_lengthened(memory_clock: Clock) -> None:
    cache = KeepingSimpleCache(default_timeout=0)
    cache.set("forever", 1, timeout=0)
    cache.set("long", 1, timeout=3600)
    cache.set("short", 1, timeout=5)
    cache.expire_within(["forever", "long", "short", "absent"], 30)
    assert cache._cache["forever"][0] == cache._cache["long"][0] == int(START) + 30
    assert cache._cache["short"][0] == int(START) + 5 and "absent" not in cache._cache
    memory_clock.advance(31)
    assert cache.get("forever") is None and cache.get("long") is None


def test_its_notes_never_outnumber_its_keys(memory_clock: Clock) -> None:
    """A key rewritten every second for an hour is noted once, not 3,600 times; a deleted one is forgotten."""
    cache = KeepingSimpleCache(threshold=100, default_timeout=0)
    for second in range(3600):
        cache.set("counter", second, timeout=60)
        cache.add(f"in-flight:{second}", True, timeout=60)
        cache.delete(f"in-flight:{second}")  # below the threshold: nothing a sweep drops, only notes
        cache.set(f"once:{second}", second, timeout=5)
        memory_clock.advance(1)
    noted = cache._noted or {}
    notes = sum(len(keys) for keys in (cache._expiring or {}).values()) + len(cache._lingering or ())
    assert len(noted) <= len(cache._cache) + 2 * keeping_cache.SWEEP_STEP
    assert notes <= len(cache._cache) + 2 * keeping_cache.SWEEP_STEP
    assert len(cache._cache) <= 100 + keeping_cache.SWEEP_STEP  # past the threshold, the expired ones went
    assert cache.get("counter") == 3599


def test_an_entry_made_to_expire_sooner_is_swept_then(memory_clock: Clock) -> None:
    cache = KeepingSimpleCache(threshold=1, default_timeout=0)
    cache.set("event", 1, timeout=300)
    cache.set("other", 1, timeout=300)  # past the threshold
    cache.expire_within(["event"], 30)
    memory_clock.advance(31)
    cache.set("next", 1, timeout=300)  # a write: the sweep under way drops what expired
    assert set(cache._cache) == {"other", "next"}
