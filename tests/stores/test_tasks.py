"""Task records in the cache: created durably, owned, bounded, updated under a lock, flagged to stop."""

from __future__ import annotations

import time
import typing as t

import pytest
from flask_caching import Cache

from flask_mcp import MCPError
from flask_mcp.core.heartbeats import Heartbeats
from flask_mcp.core.tasks import TaskLimit, TaskLimits, TaskRecord, Tasks, owner_of
from flask_mcp.policies.principal import Principal
from flask_mcp.stores.tasks import CacheTaskStore

NO_LIMITS = TaskLimits(None, None, None, None, None)


class Recorder:
    """A runner that only notes what it was given: these tests run nothing."""

    def __init__(self) -> None:
        self.submitted: list[str] = []

    def submit(self, task_id: str, account: str = "") -> None:
        self.submitted.append(task_id)


def record(task_id: str, owner: str = "ada\x00", **fields: t.Any) -> TaskRecord:
    base = {"era": "modern", "tool": "crunch", "arguments": {}, "client": {}, "principal": None,
            "created_at": time.time(), "ttl_ms": 60_000, "poll_interval_ms": 500}  # fmt: skip
    return TaskRecord(task_id=task_id, owner=owner, **{**base, **fields})


def test_a_record_is_readable_once_created_and_listed_for_its_owner(cache: Cache) -> None:
    store = CacheTaskStore(cache)
    store.create(record("one"), NO_LIMITS)
    store.create(record("two"), NO_LIMITS)
    store.create(record("other", owner="eve\x00"), NO_LIMITS)
    loaded = store.load("one")
    assert loaded is not None and loaded.tool == "crunch" and loaded.status == "working"
    assert [found.task_id for found in store.owned("o:ada\x00", "ada\x00")] == ["one", "two"]
    assert store.load("never") is None


def finish(found: TaskRecord) -> bool:
    found.result = {"content": [{"type": "text", "text": "done"}]}
    found.moved("completed")
    return True


def returned(found: TaskRecord) -> bool:
    found.runs = 0
    return True


def test_an_ended_task_sheds_what_it_no_longer_needs(cache: Cache) -> None:
    store = CacheTaskStore(cache)
    big = {"blob": "x" * 100_000}
    store.create(record("one", arguments=big, answers={"k": big}, meta={"progressToken": 1}), NO_LIMITS)
    created = store.load("one")
    assert created is not None and created.arguments == big and created.charge["bytes"] > 200_000
    store.update("one", finish)
    ended = store.load("one")
    assert ended is not None and ended.result is not None
    assert (ended.arguments, ended.answers, ended.client, ended.meta, ended.principal) == ({}, {}, {}, {}, None)
    assert ended.charge["bytes"] < 2_000


def test_an_account_keeps_its_newest_tasks_and_lets_its_oldest_ended_ones_go(cache: Cache) -> None:
    store = CacheTaskStore(cache)
    limits = TaskLimits(max_live=None, max_kept=3, max_kept_bytes=None, max_total=None, max_total_bytes=None)
    ids = [f"task-{number}" for number in range(5)]
    for task_id in ids:
        store.create(record(task_id), limits)
        store.update(task_id, finish)
    assert [found.task_id for found in store.owned("o:ada\x00", "ada\x00")] == ids[-3:]
    assert store.load(ids[0]) is None and store.load(ids[1]) is None
    # Another account's tasks are neither counted nor let go.
    store.create(record("eve-1", owner="eve\x00"), limits)
    assert [found.task_id for found in store.owned("o:ada\x00", "ada\x00")] == ids[-3:]


def test_an_account_whose_live_tasks_fill_its_bounds_is_refused(cache: Cache) -> None:
    store = CacheTaskStore(cache)
    limits = TaskLimits(max_live=None, max_kept=None, max_kept_bytes=50_000, max_total=None, max_total_bytes=None)
    arguments = {"blob": "x" * 20_000}
    store.create(record("one", arguments=arguments), limits)
    store.create(record("two", arguments=arguments), limits)
    with pytest.raises(TaskLimit, match="none of them has ended"):
        store.create(record("three", arguments=arguments), limits)
    # Once one has ended (and shed its arguments), there is room again, and it stays.
    store.update("one", finish)
    store.create(record("three", arguments=arguments), limits)
    assert [found.task_id for found in store.owned("o:ada\x00", "ada\x00")] == ["one", "two", "three"]


def test_the_store_refuses_new_tasks_at_its_total_and_lets_nobodys_go(cache: Cache) -> None:
    store = CacheTaskStore(cache)
    limits = TaskLimits(max_live=None, max_kept=None, max_kept_bytes=None, max_total=2, max_total_bytes=None)
    store.create(record("ada-1"), limits)
    store.create(record("eve-1", owner="eve\x00"), limits)
    store.update("ada-1", finish)
    with pytest.raises(MCPError) as refused:
        store.create(record("mallory-1", owner="mallory\x00"), limits)
    assert refused.value.code == -31503 and refused.value.data == {"retryAfter": 30}
    assert store.load("ada-1") is not None and store.load("eve-1") is not None
    by_bytes = TaskLimits(max_live=None, max_kept=None, max_kept_bytes=None, max_total=None, max_total_bytes=10_000)
    with pytest.raises(MCPError, match="keeps as many tasks"):
        store.create(record("mallory-2", owner="mallory\x00", arguments={"blob": "x" * 20_000}), by_bytes)


def test_a_task_whose_tool_runs_is_kept_and_counted_past_its_ttl(cache: Cache, cache_clock: t.Any) -> None:
    store = CacheTaskStore(cache, clock=cache_clock, lost_after=30, heartbeat=5)
    limits = TaskLimits(max_live=1, max_kept=None, max_kept_bytes=None, max_total=None, max_total_bytes=None)
    store.create(record("running", created_at=cache_clock.now, ttl_ms=1, runs=1), limits)
    store.create(record("idle", owner="eve\x00", created_at=cache_clock.now, ttl_ms=1), limits)

    def beat(found: TaskRecord) -> bool:
        found.heartbeat_at = cache_clock.now
        return True

    for _ in range(10):  # ten minutes of a running tool, a sign of life every 20 s
        for _ in range(3):
            cache_clock.advance(20)
            store.update("running", beat)
    assert store.load("idle") is None  # an idle task is let go after its ttl...
    running = store.load("running")  # ... a running one is not, and still counts
    assert running is not None and running.in_use(cache_clock.now, 30)
    assert not running.expired(cache_clock.now, 30)
    with pytest.raises(TaskLimit):
        store.create(record("another", created_at=cache_clock.now), limits)
    # Once its tool has returned it is let go in its turn.
    store.update("running", returned)
    cache_clock.advance(200)
    assert store.load("running") is None
    store.create(record("another", created_at=cache_clock.now), limits)


def test_live_tasks_per_owner_are_capped_and_ended_ones_do_not_count(cache: Cache) -> None:
    store = CacheTaskStore(cache)
    store.create(record("one"), TaskLimits(max_live=1))
    with pytest.raises(TaskLimit):
        store.create(record("two"), TaskLimits(max_live=1))

    def end(found: TaskRecord) -> bool:
        found.moved("completed")
        return True

    store.update("one", end)
    store.create(record("two"), TaskLimits(max_live=1))


def test_an_update_is_kept_only_when_the_change_says_so(cache: Cache) -> None:
    store = CacheTaskStore(cache)
    store.create(record("one"), NO_LIMITS)
    assert store.update("one", lambda found: False) is not None
    unchanged = store.load("one")
    assert unchanged is not None and unchanged.status == "working"

    def wait(found: TaskRecord) -> bool:
        found.input_requests = {"confirm": {"method": "elicitation/create"}}
        found.moved("input_required", "waiting")
        return True

    store.update("one", wait)
    changed = store.load("one")
    assert changed is not None and changed.status == "input_required" and changed.status_message == "waiting"
    assert store.update("never", wait) is None


def test_a_result_larger_than_the_bound_fails_the_task_saying_why(cache: Cache) -> None:
    store = CacheTaskStore(cache, max_bytes=2_000)
    store.create(record("big"), NO_LIMITS)

    def finish(found: TaskRecord) -> bool:
        found.result = {"content": [{"type": "text", "text": "x" * 5_000}]}
        found.moved("completed")
        return True

    store.update("big", finish)
    kept = store.load("big")
    assert kept is not None and kept.status == "failed" and kept.result is None
    assert kept.error is not None and "MCP_TASK_MAX_BYTES" in kept.error["message"]


def test_the_stop_flag(cache: Cache) -> None:
    store = CacheTaskStore(cache)
    store.create(record("one"), NO_LIMITS)
    assert store.cancel_requested("one") is False
    store.request_cancel("one")
    assert store.cancel_requested("one") is True


def test_a_task_past_its_ttl_is_not_found_and_another_callers_neither(cache: Cache) -> None:
    store = CacheTaskStore(cache)
    tasks = Tasks(store, Recorder())
    ada = Principal("ada")
    created = tasks.new_record(
        era="modern", tool="crunch", arguments={}, client={}, principal=ada, session_id=None, ttl_ms=1
    )
    assert t.cast(Recorder, tasks.runner).submitted == [created.task_id]
    assert created.owner == owner_of(ada, None) and len(created.task_id) >= 32

    def age(found: TaskRecord) -> bool:
        found.created_at -= 10  # created ten seconds ago, with a ttl of 1 ms
        return True

    store.update(created.task_id, age)
    # Its run has not returned (it waits for a worker): it is still its caller's to read and cancel.
    assert tasks.owned_record(created.task_id, ada, None).status == "working"
    store.update(created.task_id, returned)
    for principal in (ada, Principal("eve")):
        with pytest.raises(MCPError, match="Task not found"):
            tasks.owned_record(created.task_id, principal, None)


def test_a_clients_ttl_is_capped_by_the_servers(cache: Cache) -> None:
    tasks = Tasks(CacheTaskStore(cache), Recorder(), ttl_ms=10_000)
    longer = tasks.new_record(
        era="handshake", tool="t", arguments={}, client={}, principal=None, session_id="s", ttl_ms=99_000
    )
    shorter = tasks.new_record(
        era="handshake", tool="t", arguments={}, client={}, principal=None, session_id="s", ttl_ms=5_000
    )
    assert (longer.ttl_ms, shorter.ttl_ms) == (10_000, 5_000)
    assert longer.handshake_task()["ttl"] == 10_000 and longer.modern_task()["ttlMs"] == 10_000


def test_a_running_task_without_signs_of_life_is_failed_as_lost(cache: Cache) -> None:
    store = CacheTaskStore(cache)
    tasks = Tasks(store, Recorder(), lost_after=2)
    created = tasks.new_record(era="modern", tool="t", arguments={}, client={}, principal=None, session_id=None)
    # Not started yet (no heartbeat): it waits, however long.
    assert tasks.owned_record(created.task_id, None, None).status == "working"

    def last_beat_long_ago(found: TaskRecord) -> bool:
        found.heartbeat_at = time.time() - 10
        return True

    store.update(created.task_id, last_beat_long_ago)
    lost = tasks.owned_record(created.task_id, None, None)
    assert lost.status == "failed" and lost.error is not None
    assert "stopped answering for 2 s" in lost.error["message"] and lost.status_message == lost.error["message"]


def test_a_recent_heartbeat_keeps_a_task_working(cache: Cache) -> None:
    store = CacheTaskStore(cache)
    tasks = Tasks(store, Recorder(), lost_after=2)
    created = tasks.new_record(era="modern", tool="t", arguments={}, client={}, principal=None, session_id=None)

    def beat(found: TaskRecord) -> bool:
        found.heartbeat_at = time.time()
        return True

    store.update(created.task_id, beat)
    assert tasks.owned_record(created.task_id, None, None).status == "working"


def test_a_watched_task_is_stamped_until_forgotten(cache: Cache) -> None:
    store = CacheTaskStore(cache)
    store.create(record("beating", heartbeat_at=1.0, runs=1), NO_LIMITS)
    beats = Heartbeats()
    beats.watch(store, "beating", 0.01)
    deadline = time.monotonic() + 10
    while (found := store.load("beating")) is not None and found.heartbeat_at == 1.0:
        assert time.monotonic() < deadline, "the heartbeat never stamped the task"
        time.sleep(0.01)
    beats.forget("beating")
    assert found is not None and found.heartbeat_at is not None and found.heartbeat_at > 1.0
