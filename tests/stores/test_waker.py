"""The one watcher per process: waiters wake when their key changes, and only then."""

from __future__ import annotations

import threading
import typing as t

from cachelib import SimpleCache

from flask_mcp.stores.waker import Waker
from flask_mcp.transport.stream_slots import StreamSlots


class Broken:
    """A store that no longer answers."""

    def get_many(self, *keys: str) -> list[t.Any]:
        raise ConnectionError("store down")


def waiting(waker: Waker, backend: t.Any, seen: dict[str, t.Any], timeout: float = 10) -> tuple[threading.Thread, list]:
    outcome: list[bool] = []
    thread = threading.Thread(target=lambda: outcome.append(waker.wait(backend, seen, timeout)))
    thread.start()
    return thread, outcome


def test_a_waiter_wakes_when_its_key_changes() -> None:
    backend, waker = SimpleCache(), Waker(0.001)
    backend.set("counter", 1)
    thread, outcome = waiting(waker, backend, {"counter": 1})
    backend.set("counter", 2)
    thread.join(10)
    assert outcome == [True]


def test_a_waiter_whose_key_stays_times_out() -> None:
    backend, waker = SimpleCache(), Waker(0.001)
    assert waker.wait(backend, {"missing": None}, 0.05) is False


def test_many_waiters_on_one_key_cost_one_read_per_tick() -> None:
    backend, waker = SimpleCache(), Waker(0.001)
    reads: list[tuple[str, ...]] = []
    original = backend.get_many
    backend.get_many = lambda *keys: (reads.append(keys), original(*keys))[1]  # type: ignore[method-assign]
    threads = [waiting(waker, backend, {"counter": None}, 0.2)[0] for _ in range(50)]
    for thread in threads:
        thread.join(10)
    assert reads and all(keys == ("counter",) for keys in reads)
    assert waker.reads == len(reads)


def test_a_store_that_stops_answering_wakes_everybody() -> None:
    """Waiters then look for themselves and meet the error there: nobody waits out a dead store."""
    waker = Waker(0.001)
    thread, outcome = waiting(waker, Broken(), {"a": 1})
    thread.join(10)
    assert outcome == [True]


def test_stream_slots_count_against_their_limit() -> None:
    slots = StreamSlots(2)
    assert slots.take() and slots.take() and not slots.take()
    slots.give_back()
    assert slots.take() and slots.open == 2
    for _ in range(5):
        slots.give_back()
    assert slots.open == 0


def test_closing_wakes_every_waiter_and_the_poller_ends() -> None:
    """An app shut down leaves nothing waiting on its store: its streams end, and so does the watcher's thread."""
    backend, waker = SimpleCache(), Waker(0.001)
    backend.set("counter", 1)
    threads = [waiting(waker, backend, {"counter": 1}, timeout=60) for _ in range(3)]
    waker.close()
    for thread, outcome in threads:
        thread.join(10)
        assert outcome == [True]
    assert waker.wait(backend, {"counter": 1}, 60) is True  # at once: nothing waits on a closed watcher
    poller = waker._thread
    if poller is not None:
        poller.join(10)
    assert waker._thread is None
