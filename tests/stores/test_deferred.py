"""A cluster backend built at its first use: retried at each use until it builds, then shared by what is fitted."""

from __future__ import annotations

import typing as t

import pytest
from cachelib import BaseCache, RedisCache, SimpleCache

from flask_mcp.stores.capacity import capacity_of, is_process_local
from flask_mcp.stores.deferred import DeferredRedisClusterCache
from flask_mcp.stores.failures import store_errors
from flask_mcp.stores.topology import fitted, track_reads

redis = pytest.importorskip("redis")


class Builds:
    """A backend's build that fails while :attr:`away`, counting its attempts."""

    def __init__(self, make: t.Callable[[], BaseCache]) -> None:
        self.make = make
        self.away = True
        self.attempts = 0

    def __call__(self) -> BaseCache:
        self.attempts += 1
        if self.away:
            raise redis.exceptions.RedisClusterException("Redis Cluster cannot be connected")
        return self.make()


class Memory:
    """A Redis client's ``info("memory")``, and nothing else."""

    def __init__(self, used: int, limit: int) -> None:
        self.used, self.limit = used, limit

    def info(self, section: str) -> dict[str, t.Any]:
        assert section == "memory"
        return {"used_memory": self.used, "maxmemory": self.limit, "maxmemory_policy": "noeviction"}


def test_each_use_builds_it_again_until_it_builds_then_it_is_kept() -> None:
    builds = Builds(SimpleCache)
    backend = DeferredRedisClusterCache(builds)
    for _ in range(2):
        with pytest.raises(redis.exceptions.RedisClusterException):
            backend.get("key")
    assert builds.attempts == 2
    builds.away = False
    assert backend.set("key", "value") is True
    assert (backend.get("key"), backend.get_many("key", "other"), backend.inc("n")) == ("value", ["value", None], 1)
    assert builds.attempts == 3


def test_what_is_fitted_is_built_from_the_apps_backend_and_shares_its_client() -> None:
    client = Memory(0, 0)
    builds = Builds(lambda: RedisCache(host=client))
    backend = DeferredRedisClusterCache(builds)
    fit = fitted(backend)
    assert isinstance(fit, DeferredRedisClusterCache) and fitted(fit) is not fit
    assert track_reads(fit, ["s:"]) is None  # a cluster's reads go through its client
    with pytest.raises(redis.exceptions.RedisClusterException):
        fit.get("key")
    builds.away = False
    own: t.Any = backend.built()
    built: t.Any = fit.built()
    assert own is not built and built._write_client is built._read_client is own._write_client is client
    assert builds.attempts == 2  # the fitted one asked the app's, which built once


def test_it_is_a_redis_store_to_the_outage_handling_and_the_capacity_probe() -> None:
    client = Memory(used=95, limit=100)
    builds = Builds(lambda: RedisCache(host=client))
    backend = DeferredRedisClusterCache(builds)
    assert store_errors(backend) == (redis.exceptions.RedisError, redis.exceptions.RedisClusterException)
    assert not is_process_local(backend)
    probe = capacity_of(backend, max_entries=10, high_water=0.9)
    assert probe is not None
    with pytest.raises(redis.exceptions.RedisClusterException):
        probe.has_room()  # refused with the outage's own error: a 503, never a session admitted blindly
    builds.away = False
    assert probe.has_room() is False  # 95 of 100 is past 0.9 of maxmemory
    client.used = 10
    assert probe.has_room() is True
