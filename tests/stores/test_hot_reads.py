"""The session read on connections of its own, against a real redis-server."""

from __future__ import annotations

import typing as t
from concurrent.futures import ThreadPoolExecutor

import pytest

from flask_mcp.stores.hot_reads import HotReads, hot_reads_for
from flask_mcp.stores.topology import fitted

redis = pytest.importorskip("redis")


@pytest.fixture
def client(redis_url: str) -> t.Iterator[t.Any]:
    found = redis.Redis.from_url(redis_url)
    found.flushdb()
    yield found
    found.close()


@pytest.fixture
def hot(client: t.Any) -> t.Iterator[HotReads]:
    reads = HotReads(client)
    yield reads
    reads.close()


def test_values_are_the_clients(client: t.Any, hot: HotReads) -> None:
    client.set("a", b"\x00\xffbinary")
    client.set("b", "text")
    names = ["a", "missing", "b"]
    assert hot.mget(names) == client.mget(names) == [b"\x00\xffbinary", None, b"text"]


def test_a_connection_is_kept_and_reused(hot: HotReads) -> None:
    hot.mget(["a"])
    (kept,) = hot._idle
    hot.mget(["a"])
    assert list(hot._idle) == [kept]
    assert kept.is_connected


def test_a_killed_connection_is_dropped_and_the_client_answers(client: t.Any, hot: HotReads) -> None:
    client.set("a", "1")
    hot.mget(["a"])
    (kept,) = hot._idle
    client.client_kill_filter(_id=_client_id_of(client, kept))
    assert hot.mget(["a"]) == [b"1"]  # through the client, which reconnects
    assert not kept.is_connected
    assert kept not in hot._idle


def test_an_error_reply_is_the_clients_error(client: t.Any, redis_url: str) -> None:
    client.execute_command("ACL", "SETUSER", "no-mget", "on", ">secret", "~*", "+@all", "-mget")
    limited = redis.Redis.from_url(redis_url.replace("redis://", "redis://no-mget:secret@"))
    reads = HotReads(limited)
    try:
        with pytest.raises(redis.exceptions.NoPermissionError) as expected:
            limited.mget(["a"])
        with pytest.raises(redis.exceptions.NoPermissionError) as raised:
            reads.mget(["a"])
        assert str(raised.value) == str(expected.value)
        assert not reads._idle
    finally:
        reads.close()
        limited.close()
        client.execute_command("ACL", "DELUSER", "no-mget")


def test_at_most_keep_connections_wait(client: t.Any) -> None:
    reads = HotReads(client, keep=2)
    try:
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda _: reads.mget(["a"]), range(64)))
        assert len(reads._idle) <= 2
    finally:
        reads.close()


def test_close_disconnects_the_waiting_ones(hot: HotReads) -> None:
    hot.mget(["a"])
    (kept,) = hot._idle
    hot.close()
    assert not hot._idle
    assert not kept.is_connected


def test_after_a_fork_the_parents_connections_are_left_alone(hot: HotReads) -> None:
    hot.mget(["a"])
    (parents,) = hot._idle
    hot._forks = -1  # as in a child: this process did not make them
    hot.mget(["a"])
    assert parents.is_connected  # neither used nor shut down
    assert parents not in hot._idle


def test_clients_it_cannot_read_for(redis_url: str) -> None:
    single = redis.Redis.from_url(redis_url, single_connection_client=True)
    try:
        assert hot_reads_for(single) is None
    finally:
        single.close()
    assert isinstance(hot_reads_for(redis.Redis.from_url(redis_url)), HotReads)


def test_a_fitted_redis_cache_reads_through_them(redis_url: str) -> None:
    from flask_caching.backends.rediscache import RedisCache

    backend = fitted(RedisCache.factory(None, {"CACHE_REDIS_URL": redis_url}, (), {}))
    assert isinstance(backend._hot_reads, HotReads)
    backend.set("k", {"x": 1})
    assert backend.get_many("k", "nothing") == [{"x": 1}, None]
    assert backend._hot_reads._idle  # the read went its way


def _client_id_of(client: t.Any, connection: t.Any) -> int:
    port = connection._sock.getsockname()[1]
    for entry in client.client_list():
        if entry["addr"].endswith(f":{port}"):
            return int(entry["id"])
    raise AssertionError("the connection is not among the server's clients")
