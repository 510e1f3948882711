"""Session reads kept in the process while Redis reports no change, against a real redis-server."""

from __future__ import annotations

import logging
import os
import select
import typing as t
import uuid

import pytest
from flask import Flask

from flask_mcp.stores.hot_reads import HotReads
from flask_mcp.stores.tracked_reads import RETRY_AFTER, TrackedReads
from flask_mcp.testing import MCPTestClient
from tests.conftest import worker_app
from tests.redis_topologies import wait_until

redis = pytest.importorskip("redis")


class Clock:
    """Monotonic seconds the test moves on."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def client(redis_url: str) -> t.Iterator[t.Any]:
    found = redis.Redis.from_url(redis_url)
    yield found
    found.close()


@pytest.fixture
def space() -> str:
    """A key prefix of this test's own."""
    return f"tracked:{uuid.uuid4().hex}:"


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def tracked(client: t.Any, space: str, clock: Clock) -> t.Iterator[TrackedReads]:
    reads = TrackedReads(client.connection_pool, [space + "s:"], absent_kept=[space + "registry"], clock=clock)
    yield reads
    reads.close()


def mgets(client: t.Any) -> int:
    """MGET commands the server ran so far."""
    return int(client.info("commandstats").get("cmdstat_mget", {}).get("calls", 0))


def arrived(reads: TrackedReads, what: str) -> None:
    """Wait until something (a push, the connection's end) has reached the push connection's socket."""
    wait_until(lambda: bool(select.select([reads._listener._sock], [], [], 0)[0]), what)


def pushed(reads: TrackedReads) -> None:
    """Wait until Redis's push about a change has reached the process (it is sent, not awaited)."""
    arrived(reads, "the invalidation push")


def test_a_value_read_once_is_served_from_the_process(client: t.Any, space: str, tracked: TrackedReads) -> None:
    client.set(space + "s:1", b"record")
    names = [space + "s:1", space + "registry"]
    before = mgets(client)
    assert tracked.read(names) == [b"record", None]
    assert tracked.read(names) == [b"record", None]
    assert tracked.read(names) == [b"record", None]
    assert mgets(client) - before == 1


@pytest.mark.parametrize("change", ["set", "delete", "expire", "flushdb"])
def test_a_change_by_any_client_is_read_again(
    client: t.Any, redis_url: str, space: str, tracked: TrackedReads, change: str
) -> None:
    name = space + "s:1"
    client.set(name, b"old")
    assert tracked.read([name]) == [b"old"]
    if change == "flushdb":
        # A database of its own: no other test's keys go with it.
        other = redis.Redis.from_url(redis_url.rsplit("/", 1)[0] + "/9")
        other.flushdb()  # Redis tells every tracking client to drop everything
        other.close()
    elif change == "set":
        client.set(name, b"new")
    elif change == "delete":
        client.delete(name)
    else:
        client.pexpire(name, 1)
        wait_until(lambda: client.exists(name) == 0, "the key to expire")
    pushed(tracked)
    expected = {"set": [b"new"], "delete": [None], "expire": [None], "flushdb": [b"old"]}[change]
    before = mgets(client)
    assert tracked.read([name]) == expected
    assert mgets(client) - before == 1  # read from the store again


def test_a_missing_session_is_not_kept(client: t.Any, space: str, tracked: TrackedReads) -> None:
    """Unknown session ids a caller sends make nothing kept: each is read from the store."""
    names = [space + "s:unknown", space + "registry"]
    before = mgets(client)
    assert tracked.read(names) == [None, None]
    assert tracked.read(names) == [None, None]
    assert mgets(client) - before == 2
    assert list(tracked._values) == [space + "registry"]  # the registry's absence is kept


def test_a_read_that_raced_a_change_is_not_kept(client: t.Any, space: str, tracked: TrackedReads) -> None:
    name, other = space + "s:1", space + "s:2"
    client.set(name, b"old")
    client.set(other, b"x")
    assert tracked.read([other]) == [b"x"]
    ticket = tracked.ticket()
    client.set(other, b"y")  # a push is applied while the read of *name* is on its way
    pushed(tracked)
    assert tracked.read([other]) == [b"y"]
    tracked.store(ticket, [name], [b"old"])
    assert name not in tracked._values


def test_values_are_kept_for_max_age_at_most(client: t.Any, space: str, tracked: TrackedReads, clock: Clock) -> None:
    name = space + "s:1"
    client.set(name, b"record")
    tracked.read([name])
    clock.now += tracked.max_age
    before = mgets(client)
    assert tracked.read([name]) == [b"record"]
    assert mgets(client) - before == 1


def test_at_most_max_entries_are_kept(client: t.Any, space: str, clock: Clock) -> None:
    reads = TrackedReads(client.connection_pool, [space], max_entries=3, clock=clock)
    try:
        for number in range(5):
            client.set(f"{space}{number}", number)
            reads.read([f"{space}{number}"])
        assert list(reads._values) == [f"{space}{number}" for number in (2, 3, 4)]  # the longest kept went first
    finally:
        reads.close()


def test_nothing_is_kept_while_the_push_connection_is_down(
    client: t.Any, space: str, tracked: TrackedReads, clock: Clock
) -> None:
    """Pushes sent meanwhile are lost: nothing kept before is used, nor the read connections that named it."""
    name = space + "s:1"
    client.set(name, b"old")
    tracked.read([name])
    ((reader, _),) = tracked._idle
    client.client_kill_filter(_id=tracked._listener_id)
    client.set(name, b"new")
    arrived(tracked, "the closed connection")
    assert tracked.read([name]) is None  # the caller reads from the store
    assert not tracked._values and tracked._listener is None
    clock.now += RETRY_AFTER
    assert tracked.read([name]) == [b"new"]  # a new connection, and nothing of before
    assert tracked._listener is not None
    assert not reader.is_connected  # its reads would be reported to the connection that is gone
    assert all(connection is not reader for connection, _ in tracked._idle)


def test_a_redis_that_refuses_tracking_leaves_reads_to_the_store(
    client: t.Any, redis_url: str, space: str, caplog: pytest.LogCaptureFixture
) -> None:
    client.execute_command("ACL", "SETUSER", "no-client", "on", ">secret", "~*", "+@all", "-client")
    limited = redis.Redis.from_url(redis_url.replace("redis://", "redis://no-client:secret@"))
    reads = TrackedReads(limited.connection_pool, [space])
    hot = HotReads(limited)
    hot.tracked = reads
    try:
        client.set(space + "k", b"v")
        with caplog.at_level(logging.INFO, logger="flask_mcp"):
            assert hot.mget([space + "k"]) == [b"v"]  # the plain read answered
        assert "not tracked" in caplog.text
        assert reads._listener is None and not reads._values
    finally:
        hot.close()
        limited.close()
        client.execute_command("ACL", "DELUSER", "no-client")


def test_after_a_fork_nothing_of_the_parents_is_used(client: t.Any, space: str, tracked: TrackedReads) -> None:
    name = space + "s:1"
    client.set(name, b"v")
    tracked.read([name])
    parents = tracked._listener
    child = os.fork()
    if child == 0:  # the child: its own connections, nothing kept of the parent's
        try:
            before = mgets(client)
            fresh = tracked.read([name]) == [b"v"] and mgets(client) - before == 1
            os._exit(0 if fresh and tracked._listener is not parents else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    # The parent's push connection was left working: a change still reaches it.
    client.set(name, b"w")
    pushed(tracked)
    assert tracked.read([name]) == [b"w"] and tracked._listener is parents


def test_close_closes_the_connections(client: t.Any, space: str, tracked: TrackedReads) -> None:
    client.set(space + "s:1", b"v")
    tracked.read([space + "s:1"])
    listener, ((reader, _),) = tracked._listener, tracked._idle
    tracked.close()
    assert not listener.is_connected and not reader.is_connected
    assert not tracked._values and not tracked._idle


# -- in the app -------------------------------------------------------------------------------------


def call(client: MCPTestClient) -> dict[str, t.Any]:
    return client.request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})


def test_calls_in_a_session_read_the_store_once(
    redis_url: str, prefix: str, client: t.Any, make_client: t.Callable[..., MCPTestClient]
) -> None:
    mcp_client = make_client(worker_app(redis_url, prefix))
    mcp_client.initialize()
    call(mcp_client)
    before = mgets(client)
    for _ in range(20):
        assert call(mcp_client)["structuredContent"] == {"result": 3}
    assert mgets(client) - before == 0


def test_a_session_ended_in_another_process_is_not_found_here(
    redis_url: str, prefix: str, make_client: t.Callable[..., MCPTestClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other process's DELETE reaches this one through Redis's push, long before a kept value expires."""
    a, b = worker_app(redis_url, prefix), worker_app(redis_url, prefix)
    tracked = b.extensions["mcp"].sessions.cache.cache._hot_reads.tracked
    monkeypatch.setattr(tracked, "max_age", 3600.0)
    client_b = make_client(b)
    client_b.initialize()
    call(client_b)  # kept in b
    headers = client_b.headers()
    assert a.test_client().delete("/mcp", headers=headers).status_code == 204

    def not_found() -> bool:
        return b.test_client().post("/mcp", json=tools_call(), headers=headers).status_code == 404

    wait_until(not_found, "the session to be gone in the other process", timeout=10)


def tools_call() -> dict[str, t.Any]:
    return {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}}


def test_tracking_can_be_turned_off(redis_url: str, prefix: str, client: t.Any) -> None:
    app: Flask = worker_app(redis_url, prefix, MCP_TRACK_SESSION_READS=False)
    assert app.extensions["mcp"].sessions.cache.cache._hot_reads.tracked is None
