"""Task records in the cache: created durably, owned, bounded, updated under a lock, flagged to stop."""

from __future__ import annotations

import time
import typing as t

import pytest
from flask_caching import Cache

from flask_mcp import MCPError
from flask_mcp.core.heartbeats import Heartbeats
from flask_mcp.core.tasks import TaskLimit, TaskRecord, Tasks, owner_of
from flask_mcp.policies.principal import Principal
from flask_mcp.stores import tasks as task_store
from flask_mcp.stores.tasks import CacheTaskStore


class Recorder:
    """A runner that only notes what it was given: these tests run nothing."""

    def __init__(self) -> None:
        self.submitted: list[str] = []

    def submit(self, task_id: str) -> None:
        self.submitted.append(task_id)


def record(task_id: str, owner: str = "ada\x00", **fields: t.Any) -> TaskRecord:
    base = {"era": "modern", "tool": "crunch", "arguments": {}, "client": {}, "principal": None}
    return TaskRecord(task_id=task_id, owner=owner, created_at=time.time(), ttl_ms=60_000, poll_interval_ms=500,
                      **{**base, **fields})  # fmt: skip


def test_a_record_is_readable_once_created_and_listed_for_its_owner(cache: Cache) -> None:
    store = CacheTaskStore(cache)
    store.create(record("one"), max_live=None)
    store.create(record("two"), max_live=None)
    store.create(record("other", owner="eve\x00"), max_live=None)
    loaded = store.load("one")
    assert loaded is not None and loaded.tool == "crunch" and loaded.status == "working"
    assert [found.task_id for found in store.owned("ada\x00")] == ["one", "two"]
    assert store.load("never") is None


def test_the_listing_keeps_the_newest_ids_in_order_and_writes_little_per_task(
    cache: Cache, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(task_store, "CHUNK", 3)
    monkeypatch.setattr(task_store, "INDEX_SIZE", 9)
    store = CacheTaskStore(cache)
    ids = [f"task-{number:02}" for number in range(14)]
    for task_id in ids:
        store.create(record(task_id), max_live=None)
    # The newest (at most nine), oldest first: two whole chunks, and the newest ids the index holds itself.
    assert [found.task_id for found in store.owned("ada\x00")] == ids[-8:]
    index = cache.get(CacheTaskStore._index_key("ada\x00"))
    assert len(index["recent"]) <= 3 and len(index["chunks"]) == 2


def test_live_tasks_per_owner_are_capped_and_ended_ones_do_not_count(cache: Cache) -> None:
    store = CacheTaskStore(cache)
    store.create(record("one"), max_live=1)
    with pytest.raises(TaskLimit):
        store.create(record("two"), max_live=1)

    def end(found: TaskRecord) -> bool:
        found.moved("completed")
        return True

    store.update("one", end)
    store.create(record("two"), max_live=1)


def test_an_update_is_kept_only_when_the_change_says_so(cache: Cache) -> None:
    store = CacheTaskStore(cache)
    store.create(record("one"), max_live=None)
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
    store.create(record("big"), max_live=None)

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
    store.create(record("one"), max_live=None)
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
    store.create(record("beating", heartbeat_at=1.0), max_live=None)
    beats = Heartbeats()
    beats.watch(store, "beating", 0.01)
    deadline = time.monotonic() + 10
    while (found := store.load("beating")) is not None and found.heartbeat_at == 1.0:
        assert time.monotonic() < deadline, "the heartbeat never stamped the task"
        time.sleep(0.01)
    beats.forget("beating")
    assert found is not None and found.heartbeat_at is not None and found.heartbeat_at > 1.0
