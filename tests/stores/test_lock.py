"""The store lock: one writer at a time across threads (and processes), never held for good."""

from __future__ import annotations

import threading
import time

import pytest
from flask_caching import Cache

from flask_mcp.stores import lock as store_lock_module
from flask_mcp.stores.lock import LockTimeout, store_lock


def test_writers_take_turns(cache: Cache) -> None:
    inside: list[int] = []
    most: list[int] = []
    count = threading.Lock()

    def write_many() -> None:
        for _ in range(30):
            with store_lock(cache, "record"):
                with count:
                    inside.append(1)
                    most.append(len(inside))
                time.sleep(0.0005)  # a write that takes a while: the others must wait for it
                with count:
                    inside.pop()

    writers = [threading.Thread(target=write_many) for _ in range(4)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    assert len(most) == 120 and max(most) == 1
    assert cache.get("record:lock") is None


def test_a_lock_held_too_long_times_out(cache: Cache, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_lock_module, "LOCK_WAIT", 0.01)
    cache.add("record:lock", "someone else's", timeout=60)
    with pytest.raises(LockTimeout, match="'record' stayed locked"), store_lock(cache, "record"):
        pass


def test_a_lock_that_expired_and_was_taken_is_left_to_its_new_holder(
    cache: Cache, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [100.0]
    monkeypatch.setattr(store_lock_module, "monotonic", lambda: now[0])
    with store_lock(cache, "record"):
        now[0] += store_lock_module.LOCK_TTL  # held past its lifetime: it expired, and another writer took it
        cache.set("record:lock", "the new holder's")
    assert cache.get("record:lock") == "the new holder's"
    with store_lock(cache, "other"):
        now[0] += 0.001
    assert cache.get("other:lock") is None
