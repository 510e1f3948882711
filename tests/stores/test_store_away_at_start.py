"""A worker that starts while its store is unreachable serves once the store answers; it never takes the server down.

gunicorn takes a worker that fails to import as a failed boot and shuts the
whole server down. So a store that is away when the app is set up (a restart,
a failover, the app coming up before its Redis) only makes the worker warn and
answer what needs the store with 503 and ``Retry-After``, as a running worker
does during an outage, until the store answers.
"""

from __future__ import annotations

import http.client
import json
import time
import typing as t
import uuid

import pytest

from tests.conftest import RedisProcess
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


@pytest.mark.parametrize("options", [(), ("--max-requests", "1")], ids=["two workers", "a worker replaced per request"])
def test_workers_started_while_redis_is_away_answer_503_then_serve_once_it_is_back(options: tuple[str, ...]) -> None:
    redis = RedisProcess()  # not started yet: its port refuses every connection
    env = {
        "MCP_CACHE_TYPE": "RedisCache",
        "MCP_CACHE_REDIS_URL": redis.url,
        "MCP_CACHE_KEY_PREFIX": f"flask_mcp_away:{uuid.uuid4().hex}:",
    }
    with gunicorn(workers=2, options=options, **env) as server:
        for _ in range(4):  # with --max-requests 1, each answer replaces a worker, booted with Redis away
            status, headers, body = initialize(server.port)
            assert status == 503 and headers["Retry-After"] == "1", body
            assert body["error"]["code"] == -31503 and body["error"]["data"] == {"retryAfter": 1}
        assert server.process.poll() is None, "the server went down"
        server.wait_for("could not be reached while the app was set up")
        # A balancer's health check tells "up, store away" from "serving".
        status, headers, body = health(server.port)
        assert (status, headers["Retry-After"], body) == (503, "1", {"status": "store_unavailable", "retryAfter": 1})
        redis.start()
        try:
            deadline = time.monotonic() + 10
            while (status := initialize(server.port)[0]) != 200 and time.monotonic() < deadline:
                assert status == 503
            assert status == 200, "still refused 10 s after the store came back"
            while (checked := health(server.port))[0] != 200 and time.monotonic() < deadline + 5:
                assert checked[0] == 503  # each worker looks again after its second
            assert checked[2] == {"status": "serving"}
        finally:
            redis.stop()
        assert "Worker failed to boot" not in "".join(server.output)


@pytest.mark.parametrize(
    ("config", "named"),
    [
        ({"MCP_CACHE_TYPE": "NoSuchCache"}, "MCP_CACHE_TYPE = 'NoSuchCache' is not a cache type"),
        ({"MCP_CACHE_TYPE": "RedisCache", "MCP_CACHE_REDIS_URL": "http://127.0.0.1/0"}, "MCP_CACHE_REDIS_URL"),
        ({"MCP_CACHE_TYPE": "RedisCache", "MCP_CACHE_REDIS_URL": "redis://127.0.0.1:port/0"}, "MCP_CACHE_REDIS_URL"),
        ({"MCP_CACHE_TYPE": "RedisClusterCache"}, "needs MCP_CACHE_REDIS_CLUSTER"),
        ({"MCP_CACHE_TYPE": "RedisSentinelCache"}, "needs MCP_CACHE_REDIS_SENTINELS"),
    ],
    ids=["unknown type", "not a Redis URL", "malformed port", "cluster without nodes", "sentinel without nodes"],
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
