"""The mailbox: answers, cancellations and in-flight ids, on SimpleCache and across workers on Redis."""

from __future__ import annotations

import os
import signal
import threading
import time
import typing as t
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from flask import Flask
from flask_caching import Cache

from flask_mcp import MCP
from flask_mcp.stores.mailbox import LINGER, Mailbox
from tests.conftest import Clock
from tests.transport.test_streaming import Endpoint, call, gunicorn, read_events

TTL = 600


@pytest.fixture
def mailbox(cache: Cache) -> t.Iterator[Mailbox]:
    mailbox = Mailbox(cache, ttl=TTL, poll_interval=0.001)
    yield mailbox
    mailbox.stop(timeout=10)  # its heartbeat ends with the test, whatever the test left claimed


def never() -> bool:
    return False


def test_mailbox_keeps_only_expected_answers(mailbox: Mailbox) -> None:
    """deliver is refused until expect; an answer is handed out once, then forgotten."""
    answer = {"result": {"action": "accept"}, "error": None}
    assert mailbox.deliver("s1", "srv-1", answer) is False
    mailbox.expect("s1", "srv-1")
    assert mailbox.deliver("s2", "srv-1", answer) is False  # another session's id
    assert mailbox.deliver("s1", "srv-1", answer) is True
    assert mailbox.wait("s1", "srv-1", 5, never) == answer
    assert mailbox.deliver("s1", "srv-1", answer) is False
    assert mailbox.wait("s1", "srv-1", 0, never) is None


@pytest.mark.parametrize("request_id", [1, None, ["srv-1"], {"id": "srv-1"}])
def test_mailbox_refuses_ids_it_never_sends(mailbox: Mailbox, request_id: t.Any) -> None:
    """The server's own ids are strings: anything else is never an expected answer."""
    mailbox.expect("s1", str(request_id))
    assert mailbox.deliver("s1", request_id, {"result": {}}) is False


@pytest.mark.parametrize(("timeout", "cancel_after"), [(0, None), (30, 3)])
def test_mailbox_wait_gives_up(mailbox: Mailbox, timeout: float, cancel_after: int | None) -> None:
    """No answer: None after the timeout, or as soon as the request is cancelled; the id is then retired."""
    polls = []

    def cancelled() -> bool:
        polls.append(1)
        return cancel_after is not None and len(polls) >= cancel_after

    mailbox.expect("s1", "srv-2")
    assert mailbox.wait("s1", "srv-2", timeout, cancelled) is None
    if cancel_after is not None:
        assert len(polls) == cancel_after  # it stopped at the first look that saw the cancellation
    assert mailbox.deliver("s1", "srv-2", {"result": {}}) is False


def test_mailbox_answer_from_another_thread(mailbox: Mailbox, cache: Cache) -> None:
    """A waiter in one thread receives what another thread delivers."""
    app = cache.app
    mailbox.expect("s1", "srv-3")
    started = threading.Event()

    def waiter() -> t.Any:
        with app.app_context():
            started.set()
            return mailbox.wait("s1", "srv-3", 30, never)

    with ThreadPoolExecutor(max_workers=1) as pool:
        future = pool.submit(waiter)
        assert started.wait(30)
        assert mailbox.deliver("s1", "srv-3", {"result": {"roots": []}})
        assert future.result(timeout=30) == {"result": {"roots": []}}


def test_mailbox_cancellations_are_per_session_and_id(mailbox: Mailbox) -> None:
    """1 and "1" are different JSON-RPC ids; release clears a cancellation."""
    mailbox.claim("s1", 1)
    assert mailbox.cancel("s1", 1)
    assert mailbox.is_cancelled("s1", 1)
    assert not mailbox.is_cancelled("s1", "1")
    assert not mailbox.is_cancelled("s2", 1)
    mailbox.release("s1", 1)
    assert not mailbox.is_cancelled("s1", 1)


@pytest.mark.parametrize("finished", [False, True])
def test_cancelling_what_is_not_in_flight_writes_nothing(mailbox: Mailbox, cache: Cache, finished: bool) -> None:
    """Unknown and finished requests: a flood of such cancellations leaves the cache as it was."""
    if finished:
        mailbox.claim("s1", 7)
        mailbox.release("s1", 7)
    before = dict(cache.cache._cache)
    assert not any(mailbox.cancel("s1", f"never-sent-{n}") for n in range(1000))
    assert not mailbox.cancel("s1", 7)
    assert cache.cache._cache == before


def test_a_live_worker_keeps_its_ids_and_a_dead_one_frees_them(cache: Cache, cache_clock: Clock) -> None:
    """In-flight markers outlive inflight_ttl only while their worker's heartbeat renews them."""
    live, dead = (Mailbox(cache, ttl=TTL, inflight_ttl=30) for _ in range(2))
    try:
        assert live.claim("s1", "a") and dead.claim("s1", "b")
        for _ in range(5):  # two and a half minutes, with a beat every 20 s of the live worker
            cache_clock.advance(20)
            live.beat()
        assert not live.claim("s1", "a")  # still in flight
        assert live.claim("s1", "b")  # the dead worker's id expired
        live.release("s1", "a")
        assert live.claim("s1", "a")
    finally:
        live.stop(timeout=10)
        dead.stop(timeout=10)


def test_one_heartbeat_serves_every_claim_and_ends_soon_after_the_last(mailbox: Mailbox) -> None:
    """A busy process does not start a thread a request; an idle one keeps none (LINGER, not its 20 s period)."""
    assert mailbox.claim("s1", 1) and mailbox.claim("s1", 2)
    heartbeat = mailbox._heartbeat
    assert heartbeat is not None and heartbeat.is_alive()
    mailbox.release("s1", 1)
    mailbox.release("s1", 2)
    assert mailbox.claim("s1", 3)  # the next request's claim finds the heartbeat still there
    assert mailbox._heartbeat is heartbeat
    mailbox.release("s1", 3)
    heartbeat.join(5 * LINGER)  # a third of inflight_ttl is 20 s: it ends long before
    assert not heartbeat.is_alive() and mailbox._heartbeat is None
    assert mailbox.claim("s1", 4)  # and starts again with the next claim
    assert mailbox._heartbeat is not None and mailbox._heartbeat is not heartbeat


def test_stopping_the_mailbox_ends_its_heartbeat_at_once(mailbox: Mailbox) -> None:
    """Shut down with markers held or just released: the heartbeat does not sleep out its period (20 s)."""
    assert mailbox.claim("s1", 1)
    heartbeat = mailbox._heartbeat
    mailbox.release("s1", 1)
    mailbox.stop(timeout=10)  # half its period: a heartbeat still asleep would be alive after it
    assert heartbeat is not None and not heartbeat.is_alive()


def test_the_heartbeat_stops_with_its_app(make_app: t.Callable[..., t.Any], redis_url: str, prefix: str) -> None:
    """mcp.shutdown(app) stops renewing the app's markers: no thread goes on against a store the app left.

    On Redis: markers in process memory have no heartbeat.
    """
    mcp = MCP()
    app = make_app(mcp, MCP_CACHE_TYPE="RedisCache", MCP_CACHE_REDIS_URL=redis_url, MCP_CACHE_KEY_PREFIX=prefix)
    mailbox = app.extensions["mcp"].mailbox
    with app.app_context():
        assert mailbox.claim("s1", 1)
    heartbeat = mailbox._heartbeat
    assert heartbeat is not None and heartbeat.is_alive()
    mcp.shutdown(app)
    assert not heartbeat.is_alive()


def test_a_store_in_process_memory_keeps_markers_without_expiry_or_heartbeat(
    make_app: t.Callable[..., t.Any], memory_clock: Clock
) -> None:
    """SimpleCache lives and dies with the process that holds its markers: they never expire, nothing renews them."""
    app = make_app(MCP())
    mailbox = app.extensions["mcp"].mailbox
    with app.app_context():
        held = mailbox.claim("s1", 1)
        assert held is not None
        memory_clock.advance(10 * mailbox.inflight_ttl)
        assert mailbox._heartbeat is None
        assert not mailbox.claim("s1", 1)  # still in flight, long past inflight_ttl
        assert mailbox.cancel("s1", 1) and mailbox.cancelled(held)
        mailbox.give_back(held)
        assert not mailbox.cancel("s1", 1)  # given back: no longer in flight, nothing recorded
        assert mailbox.cache.get(held.marker) is None and mailbox.cache.get(held.cancel) is None
        again = mailbox.claim("s1", 1)
        assert again == held and not mailbox.cancelled(again)


def test_a_release_during_a_beat_is_not_undone(mailbox: Mailbox, monkeypatch: pytest.MonkeyPatch) -> None:
    """A marker released while the heartbeat renews it is deleted again, not left to block the id."""
    mailbox.claim("s1", 1)
    backend = mailbox.cache.cache
    original = backend.set

    def set_then_release(key: str, value: t.Any, timeout: int | None = None) -> bool:
        result = original(key, value, timeout=timeout)
        mailbox.release("s1", 1)
        return bool(result)

    monkeypatch.setattr(backend, "set", set_then_release)
    mailbox.beat()
    monkeypatch.undo()
    assert mailbox.claim("s1", 1)


@pytest.mark.parametrize(("request_id", "other"), [(7, "7"), ("7", 7), ("srv", "srv2")])
def test_mailbox_claims_an_id_once_until_released(mailbox: Mailbox, request_id: t.Any, other: t.Any) -> None:
    """A second claim of an in-flight id fails; other ids, other sessions and released ids are free."""
    assert mailbox.claim("s1", request_id)
    assert not mailbox.claim("s1", request_id)
    assert mailbox.claim("s2", request_id)
    assert mailbox.claim("s1", other)
    mailbox.release("s1", request_id)
    assert mailbox.claim("s1", request_id)


@pytest.mark.parametrize("request_id", [7, "7"])
def test_the_request_held_sees_its_cancellation_and_gives_its_id_back(mailbox: Mailbox, request_id: t.Any) -> None:
    """What claim hands back reads the request's cancellation, not another's; giving it back frees the id."""
    held = mailbox.claim("s1", request_id)
    other = mailbox.claim("s1", [8])
    assert held is not None and other is not None
    assert held.marker == mailbox.inflight_key("s1", request_id)
    assert not mailbox.cancelled(held)
    assert mailbox.cancel("s1", request_id)
    assert mailbox.cancelled(held) and mailbox.is_cancelled("s1", request_id)
    assert not mailbox.cancelled(other)
    mailbox.give_back(held)
    assert not mailbox.cancel("s1", request_id)  # no longer in flight: nothing recorded
    again = mailbox.claim("s1", request_id)
    assert again == held and not mailbox.cancelled(again)  # the earlier cancellation went with it


def test_mailbox_across_workers(workers: tuple[Flask, Flask]) -> None:
    """Redis: expected on A, answered and cancelled on B, seen on A."""
    a, b = workers
    box_a, box_b = a.extensions["mcp"].mailbox, b.extensions["mcp"].mailbox
    with a.app_context():
        box_a.expect("s1", "srv-9")
        assert box_a.claim("s1", 5)
    with b.app_context():
        assert box_b.deliver("s1", "srv-9", {"result": {"ok": True}})
        assert not box_b.claim("s1", 5)
        assert box_b.cancel("s1", 5)
    with a.app_context():
        assert box_a.is_cancelled("s1", 5)
        assert box_a.wait("s1", "srv-9", 5, never) == {"result": {"ok": True}}


def test_a_killed_worker_does_not_lock_its_request_id(redis_url: str) -> None:
    """A worker killed mid-stream leaves its request id in use only until MCP_INFLIGHT_TTL runs out."""
    env = {
        "MCP_CACHE_TYPE": "RedisCache",
        "MCP_CACHE_REDIS_URL": redis_url,
        "MCP_CACHE_KEY_PREFIX": f"flask_mcp_killed:{uuid.uuid4().hex}:",
        "MCP_INFLIGHT_TTL": "2",
    }
    with gunicorn(**env) as server_a, gunicorn(**env) as server_b:
        a, b = Endpoint(server_a.url), Endpoint(server_b.url)
        session_id = a.initialize({"sampling": {}, "elicitation": {}})
        connection, response = a.open(call("interview", {"prompt": "ping"}, request_id="r1"), session_id)
        assert response.status == 200 and response.headers["Content-Type"] == "text/event-stream"
        stream = read_events(iter(response.readline, b""))
        next(stream)  # priming
        assert next(stream).message["method"] == "sampling/createMessage"  # the tool is waiting, mid-stream
        killed = time.monotonic()
        os.kill(int(response.headers["X-Worker-Pid"]), signal.SIGKILL)
        connection.close()
        retry = call("interview", {"prompt": "again"}, request_id="r1")
        first = b.open(retry, session_id)
        # Still in use while its marker has not run out; a loaded machine may take longer than the
        # marker's lifetime to get here, and then the id is free already.
        assert first[1].status == 409 or time.monotonic() - killed >= float(env["MCP_INFLIGHT_TTL"]), first[1].status
        connection, response = first
        connection.close()
        deadline = time.monotonic() + 30
        while response.status == 409:  # the marker expires on Redis's clock: look until it has
            assert time.monotonic() < deadline, "the dead worker's request id stayed locked"
            connection, response = b.open(retry, session_id)
            connection.close()
        assert response.status == 200 and response.headers["Content-Type"] == "text/event-stream"
