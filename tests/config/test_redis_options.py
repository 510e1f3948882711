"""The Redis client options flask_mcp gives a Redis store the app gives no ``MCP_CACHE_OPTIONS`` for.

A refused connection is retried twice, after 50 then 100 ms (each sentinel
once), a timeout never: a store that is away fails the request within about
a second. The options reach the clients flask-caching builds, and an app's
own ``MCP_CACHE_OPTIONS`` are left as they are.
"""

from __future__ import annotations

import copy
import pickle
import typing as t

import pytest
from flask import Flask
from flask_caching import Cache

from flask_mcp.config.settings import Settings

redis = pytest.importorskip("redis")
from redis.backoff import ExponentialBackoff  # noqa: E402
from redis.exceptions import ConnectionError as RedisConnectionError  # noqa: E402
from redis.exceptions import TimeoutError as RedisTimeoutError  # noqa: E402
from redis.retry import Retry  # noqa: E402

#: The policy of the store's own connections, and of the clients that ask the sentinels.
BOUNDED = Retry(ExponentialBackoff(cap=0.1, base=0.025), 2, supported_errors=(RedisConnectionError,))
SENTINEL_BOUNDED = Retry(ExponentialBackoff(cap=0.1, base=0.025), 1, supported_errors=(RedisConnectionError,))


def cache_config(**config: t.Any) -> dict[str, t.Any]:
    app = Flask(__name__)
    app.config.update(config)
    return Settings.from_app(app).cache_config


@pytest.mark.parametrize(
    ("written", "sentinel"),
    [
        ("RedisCache", False),
        ("redis", False),
        ("flask_caching.backends.rediscache.RedisCache", False),
        ("RedisClusterCache", False),
        ("rediscluster", False),
        ("RedisSentinelCache", True),
        ("redis_sentinel", True),
    ],
)
def test_each_redis_type_gets_socket_timeouts_and_short_retries(written: str, sentinel: bool) -> None:
    options = cache_config(MCP_CACHE_TYPE=written)["CACHE_OPTIONS"]
    expected: dict[str, t.Any] = {"socket_timeout": 5, "socket_connect_timeout": 5, "retry": BOUNDED}
    if sentinel:
        expected.update(sentinel_socket_timeout=5, sentinel_socket_connect_timeout=5, sentinel_retry=SENTINEL_BOUNDED)
    assert options == expected
    # Retry compares its errors as a set: the policy retries a refused connection, never a timeout.
    assert options["retry"]._supported_errors == (RedisConnectionError,)


def test_the_ephemeral_cache_of_another_redis_type_gets_that_type_s_options() -> None:
    app = Flask(__name__)
    app.config.update(MCP_CACHE_TYPE="RedisCache", MCP_EPHEMERAL_CACHE_TYPE="RedisSentinelCache")
    overrides = Settings.from_app(app).ephemeral_cache_overrides
    assert overrides["CACHE_OPTIONS"]["sentinel_retry"] == SENTINEL_BOUNDED


@pytest.mark.parametrize("kind", ["RedisCache", "RedisClusterCache", "RedisSentinelCache"])
def test_an_app_s_own_cache_options_are_left_alone(kind: str) -> None:
    own = {"socket_timeout": 30, "health_check_interval": 10}
    options = cache_config(MCP_CACHE_TYPE=kind, MCP_CACHE_OPTIONS=own)["CACHE_OPTIONS"]
    assert options is own and options == {"socket_timeout": 30, "health_check_interval": 10}


def test_a_cache_that_is_no_redis_gets_no_redis_options() -> None:
    assert "CACHE_OPTIONS" not in cache_config(MCP_CACHE_TYPE="SimpleCache")
    assert "CACHE_OPTIONS" not in cache_config(MCP_CACHE_TYPE="FileSystemCache", MCP_CACHE_DIR="/tmp/x")


@pytest.mark.parametrize("kind", ["RedisCache", "RedisClusterCache", "RedisSentinelCache"])
def test_the_options_survive_pickling_and_copying(kind: str) -> None:
    """redis-py deep-copies the retry policy into each connection; a config may be pickled whole."""
    options = cache_config(MCP_CACHE_TYPE=kind)["CACHE_OPTIONS"]
    assert pickle.loads(pickle.dumps(options)) == options
    assert copy.deepcopy(options) == options


class Waits:
    """What redis-py's retries would have slept, recorded instead of slept."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.seconds: list[float] = []
        monkeypatch.setattr("redis.retry.sleep", self.seconds.append)


def failing(*errors: Exception) -> t.Callable[[], str]:
    """A call that raises *errors* in turn, then answers ``"ok"``; it counts its calls."""
    left = list(errors)

    def call() -> str:
        call.calls += 1  # type: ignore[attr-defined]
        if left:
            raise left.pop(0)
        return "ok"

    call.calls = 0  # type: ignore[attr-defined]
    return call


def test_a_blip_is_retried_after_a_short_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    waits = Waits(monkeypatch)
    retry = cache_config(MCP_CACHE_TYPE="RedisCache")["CACHE_OPTIONS"]["retry"]
    assert retry.call_with_retry(failing(RedisConnectionError("refused")), lambda error: None) == "ok"
    assert waits.seconds == [0.05]


def test_a_store_that_keeps_refusing_fails_after_two_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    waits = Waits(monkeypatch)
    options = cache_config(MCP_CACHE_TYPE="RedisSentinelCache")["CACHE_OPTIONS"]
    call = failing(*[RedisConnectionError("refused")] * 10)
    with pytest.raises(RedisConnectionError):
        options["retry"].call_with_retry(call, lambda error: None)
    assert (call.calls, waits.seconds) == (3, [0.05, 0.1])  # type: ignore[attr-defined]
    waits.seconds.clear()
    asked = failing(*[RedisConnectionError("refused")] * 10)
    with pytest.raises(RedisConnectionError):
        options["sentinel_retry"].call_with_retry(asked, lambda error: None)
    assert (asked.calls, waits.seconds) == (2, [0.05])  # type: ignore[attr-defined]


def test_a_timeout_is_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    """The store already took the whole socket timeout: a retry would double the wait."""
    waits = Waits(monkeypatch)
    call = failing(RedisTimeoutError("timed out"))
    with pytest.raises(RedisTimeoutError):
        cache_config(MCP_CACHE_TYPE="RedisCache")["CACHE_OPTIONS"]["retry"].call_with_retry(call, lambda error: None)
    assert (call.calls, waits.seconds) == (1, [])  # type: ignore[attr-defined]


def backend(**config: t.Any) -> t.Any:
    """The backend flask-caching builds from the ``MCP_*`` *config* (none of these connects when built)."""
    app = Flask(__name__)
    cache = Cache()
    cache.init_app(app, config=cache_config(**config))
    return app.extensions["cache"][cache]


@pytest.mark.parametrize(
    "where",
    [
        {"MCP_CACHE_REDIS_URL": "redis://127.0.0.1:1/0"},
        {"MCP_CACHE_REDIS_HOST": "127.0.0.1", "MCP_CACHE_REDIS_PORT": 1},
    ],
    ids=["url", "host and port"],
)
def test_a_single_node_s_connections_get_the_policy(where: dict[str, t.Any]) -> None:
    pool = backend(MCP_CACHE_TYPE="RedisCache", **where)._write_client.connection_pool
    connection = pool.connection_class(**pool.connection_kwargs)
    assert (connection.retry, connection.socket_timeout) == (BOUNDED, 5)


def test_the_master_s_connections_and_the_sentinels_clients_get_theirs() -> None:
    sentinels = [("127.0.0.1", 1), ("127.0.0.1", 2)]
    found = backend(MCP_CACHE_TYPE="RedisSentinelCache", MCP_CACHE_REDIS_SENTINELS=sentinels)
    master = found._write_client.connection_pool
    assert master.connection_kwargs["retry"] == BOUNDED
    asked = master.sentinel_manager.sentinels
    assert len(asked) == 2
    for client in asked:
        connection = client.connection_pool.connection_class(**client.connection_pool.connection_kwargs)
        assert (connection.retry, connection.socket_timeout, connection.socket_connect_timeout) == (
            SENTINEL_BOUNDED,
            5,
            5,
        )
