"""A worker that starts while its store is unreachable serves once the store answers; it never takes the server down.

gunicorn takes a worker that fails to import as a failed boot and shuts the
whole server down. So a store that is away when the app is set up (a restart,
a failover, the app coming up before its Redis) only makes the worker warn and
answer what needs the store with 503 and ``Retry-After``, as a running worker
does during an outage, until the store answers.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import logging
import threading
import time
import typing as t
import uuid

import pytest

from flask_mcp.config.redis_options import RETRIES
from flask_mcp.stores.deferred import DeferredRedisClusterCache
from tests.conftest import RedisProcess, free_port
from tests.redis_topologies import MASTER_NAME, cluster, sentinel_group
from tests.transport.test_streaming import gunicorn

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def health(port: int) -> tuple[int, dict[str, str], t.Any]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", "/mcp/health")
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), json.loads(response.read())
    finally:
        connection.close()


def initialize(port: int) -> tuple[int, dict[str, str], t.Any]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        connection.request("POST", "/mcp", json.dumps(INITIALIZE), headers)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), json.loads(response.read() or b"null")
    finally:
        connection.close()


#: A store that is away: the ``MCP_CACHE_*`` environment of an app using it, and what starts it.
Away = tuple[dict[str, str], t.Callable[[], None]]


@contextlib.contextmanager
def one_node() -> t.Iterator[Away]:
    redis = RedisProcess()  # not started yet: its port refuses every connection
    try:
        yield {"MCP_CACHE_TYPE": "RedisCache", "MCP_CACHE_REDIS_URL": redis.url}, redis.start
    finally:
        redis.stop()


@contextlib.contextmanager
def a_cluster() -> t.Iterator[Away]:
    with cluster(start=False) as away:  # its ports chosen, no node started
        yield {"MCP_CACHE_TYPE": "RedisClusterCache", "MCP_CACHE_REDIS_CLUSTER": away.spec}, away.start


@contextlib.contextmanager
def a_sentinel_group() -> t.Iterator[Away]:
    with sentinel_group(start=False) as away:  # neither the sentinels nor the master started
        env = {
            "MCP_CACHE_TYPE": "RedisSentinelCache",
            "MCP_CACHE_REDIS_SENTINELS": json.dumps(away.addresses),
            "MCP_CACHE_REDIS_SENTINEL_MASTER": MASTER_NAME,
        }
        yield env, away.start


@pytest.mark.parametrize(
    ("store", "options"),
    [(one_node, ()), (one_node, ("--max-requests", "1")), (a_cluster, ()), (a_sentinel_group, ())],
    ids=[
        "one node, two workers",
        "one node, a worker replaced per request",
        "cluster, two workers",
        "sentinel, two workers",
    ],
)
def test_workers_started_while_redis_is_away_answer_503_then_serve_once_it_is_back(
    store: t.Callable[[], t.ContextManager[Away]], options: tuple[str, ...]
) -> None:
    with store() as (env, start):
        env["MCP_CACHE_KEY_PREFIX"] = f"flask_mcp_away:{uuid.uuid4().hex}:"
        with gunicorn(workers=2, options=options, **env) as server:
            for _ in range(4 if options else 2):  # with --max-requests 1, each answer replaces a worker, booted away
                status, headers, body = initialize(server.port)
                assert status == 503 and headers["Retry-After"] == "1", body
                assert body["error"]["code"] == -31503 and body["error"]["data"] == {"retryAfter": 1}
            assert server.process.poll() is None, "the server went down"
            server.wait_for("could not be reached while the app was set up")
            # A balancer's health check tells "up, store away" from "serving".
            status, headers, body = health(server.port)
            away = {"status": "store_unavailable", "retryAfter": 1}
            assert (status, headers["Retry-After"], body) == (503, "1", away)
            start()
            deadline = time.monotonic() + 10
            while (status := initialize(server.port)[0]) != 200 and time.monotonic() < deadline:
                assert status == 503
            assert status == 200, "still refused 10 s after the store came back"
            while (checked := health(server.port))[0] != 200 and time.monotonic() < deadline + 5:
                assert checked[0] == 503  # each worker looks again after its second
            assert checked[2] == {"status": "serving"}
            assert "Worker failed to boot" not in "".join(server.output)


@pytest.mark.parametrize(
    ("config", "named"),
    [
        ({"MCP_CACHE_TYPE": "NoSuchCache"}, "MCP_CACHE_TYPE = 'NoSuchCache' is not a cache type"),
        ({"MCP_CACHE_TYPE": "RedisCache", "MCP_CACHE_REDIS_URL": "http://127.0.0.1/0"}, "MCP_CACHE_REDIS_URL"),
        ({"MCP_CACHE_TYPE": "RedisCache", "MCP_CACHE_REDIS_URL": "redis://127.0.0.1:port/0"}, "MCP_CACHE_REDIS_URL"),
        ({"MCP_CACHE_TYPE": "RedisClusterCache"}, "needs MCP_CACHE_REDIS_CLUSTER"),
        ({"MCP_CACHE_TYPE": "RedisSentinelCache"}, "needs MCP_CACHE_REDIS_SENTINELS"),
        ({"MCP_CACHE_TYPE": "RedisClusterCache", "MCP_CACHE_REDIS_CLUSTER": "127.0.0.1"}, "MCP_CACHE_REDIS_CLUSTER"),
        (
            {
                "MCP_CACHE_TYPE": "RedisClusterCache",
                "MCP_CACHE_REDIS_CLUSTER": "127.0.0.1:1",
                "MCP_CACHE_REDIS_URL": "redis://127.0.0.1:1/3",
            },
            "can only be 0 in cluster mode",
        ),
    ],
    ids=[
        "unknown type",
        "not a Redis URL",
        "malformed port",
        "cluster without nodes",
        "sentinel without nodes",
        "cluster node without a port",
        "cluster with a db",
    ],
)
def test_a_configuration_that_can_never_work_still_fails_at_init_app(
    make_app: t.Callable[..., t.Any], config: dict[str, str], named: str
) -> None:
    from flask_mcp import MCP, ConfigurationError

    with pytest.raises(ConfigurationError, match=named.replace("(", r"\(")):
        make_app(MCP(name="misconfigured"), **config)


def test_a_server_with_its_store_at_hand_says_it_is_serving(make_app: t.Callable[..., t.Any]) -> None:
    from flask_mcp import MCP

    app = make_app(MCP(name="healthy"))
    answer = app.test_client().get("/mcp/health")
    assert (answer.status_code, answer.get_json()) == (200, {"status": "serving"})
    refused = app.test_client().post("/mcp/health")
    assert refused.status_code == 405 and refused.headers["Allow"] == "GET, HEAD"
    assert refused.get_json()["error"]["message"] == "Method Not Allowed: the health check answers GET"


def test_an_app_set_up_while_its_cluster_is_away_serves_the_first_request_once_it_is_up(
    make_app: t.Callable[..., t.Any], make_client: t.Callable[..., t.Any], caplog: pytest.LogCaptureFixture
) -> None:
    from flask_mcp import MCP

    server = MCP(name="cluster-away")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    with cluster(start=False) as away:
        with caplog.at_level(logging.WARNING, logger="flask_mcp"):
            app = make_app(server, **away.config(f"flask_mcp_away:{uuid.uuid4().hex}:"))
        assert [record.message.count("could not be reached") for record in caplog.records] == [1]
        http = app.test_client()
        headers = {"Accept": "application/json, text/event-stream"}
        refused = http.post("/mcp", json=INITIALIZE, headers=headers)
        assert (refused.status_code, refused.headers["Retry-After"]) == (503, "1"), refused.get_data(as_text=True)
        assert refused.get_json()["error"]["data"] == {"retryAfter": 1}
        assert http.get("/mcp/health").status_code == 503
        away.start()
        client = make_client(app)
        client.initialize()  # the first request after the cluster is up: served, nothing restarted
        assert client.call_tool("add", {"a": 2, "b": 3})["structuredContent"] == {"result": 5}
        deadline = time.monotonic() + 5
        while (checked := http.get("/mcp/health")).status_code != 200 and time.monotonic() < deadline:
            assert checked.status_code == 503  # the last look, kept for a second
        assert checked.get_json() == {"status": "serving"}
        # Built once the cluster answered, with the short retries flask_mcp gives it (not redis-py's ten).
        built = [backend.built() for backend in app.extensions["cache"].values()]
        assert {backend._write_client.retry.get_retries() for backend in built} == {RETRIES}
        # An app set up while the cluster answers has flask-caching's backend itself, built at once.
        backends = make_app(MCP(name="cluster-up"), **away.config("flask_mcp_up:")).extensions["cache"].values()
        assert not any(isinstance(backend, DeferredRedisClusterCache) for backend in backends)


def refused_sentinels() -> dict[str, t.Any]:
    return {
        "MCP_CACHE_TYPE": "RedisSentinelCache",
        "MCP_CACHE_REDIS_SENTINELS": [("127.0.0.1", free_port()) for _ in range(3)],
        "MCP_CACHE_REDIS_SENTINEL_MASTER": MASTER_NAME,
    }


@pytest.mark.parametrize(
    "refused",
    [
        lambda: {"MCP_CACHE_TYPE": "RedisCache", "MCP_CACHE_REDIS_URL": f"redis://127.0.0.1:{free_port()}/0"},
        lambda: {
            "MCP_CACHE_TYPE": "RedisCache",
            "MCP_CACHE_REDIS_HOST": "127.0.0.1",
            "MCP_CACHE_REDIS_PORT": free_port(),
        },
        refused_sentinels,
    ],
    ids=["one node by URL", "one node by host and port", "three sentinels"],
)
def test_a_store_that_refuses_every_connection_is_answered_503_after_short_retries(
    make_app: t.Callable[..., t.Any], monkeypatch: pytest.MonkeyPatch, refused: t.Callable[[], dict[str, t.Any]]
) -> None:
    """Each refused connection is retried (a blip would be ridden over), and redis-py's waits add up to well
    under a second, where its own retry policy waited ten times per sentinel, up to a second each time."""
    from flask_mcp import MCP

    waits: list[float] = []
    requests_thread = threading.current_thread()
    sleep = time.sleep

    def recorded(seconds: float) -> None:
        # Only this thread's waits are the request's (and recorded, not slept); any other thread sleeps.
        if threading.current_thread() is requests_thread:
            waits.append(seconds)
        else:
            sleep(seconds)

    monkeypatch.setattr("redis.retry.sleep", recorded)
    app = make_app(MCP(name="refused"), MCP_CACHE_KEY_PREFIX=f"flask_mcp_away:{uuid.uuid4().hex}:", **refused())
    assert 0 < sum(waits) < 1, waits  # setting up the app asked the store once
    waits.clear()
    headers = {"Accept": "application/json, text/event-stream"}
    answer = app.test_client().post("/mcp", json=INITIALIZE, headers=headers)
    assert (answer.status_code, answer.headers["Retry-After"]) == (503, "1"), answer.get_data(as_text=True)
    assert 0 < sum(waits) < 1, waits
