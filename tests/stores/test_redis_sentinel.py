"""flask_mcp on Redis Sentinel (one master, one replica, three sentinels), started by the tests.

What flask_mcp writes it reads back at once (from the master, never from a
replica that lags), and a failover of the master under load answers 503
with ``Retry-After`` while it happens, then 200 again from the new master.
"""

from __future__ import annotations

import time
import typing as t
import uuid

import pytest
from flask import Flask

from flask_mcp import MCP
from flask_mcp.testing import MCPTestClient

from ..redis_topologies import DEADLINE, SentinelGroup, sentinel_group


@pytest.fixture(scope="module")
def sentinels() -> t.Iterator[SentinelGroup]:
    with sentinel_group() as found:
        yield found


def sentinel_app(group: SentinelGroup, **config: t.Any) -> Flask:
    mcp = MCP(name="watched")

    @mcp.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    app = Flask("sentinel-worker")
    app.config.update(TESTING=True, **group.config(f"mcp_sentinel:{uuid.uuid4().hex}:"), **config)
    mcp.init_app(app)
    return app


def call_add(client: MCPTestClient, n: int) -> t.Any:
    params = {"name": "add", "arguments": {"a": n, "b": 1}}
    return client.post({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params})


def test_what_is_written_is_read_back_from_the_master(
    sentinels: SentinelGroup, make_client: t.Callable[..., MCPTestClient]
) -> None:
    """Sessions made by initialize are found on the next request: the replica serves none of the reads."""
    app = sentinel_app(sentinels)
    with sentinels.replica.client() as replica:
        replica.config_resetstat()
        for n in range(5):
            client = make_client(app)
            client.initialize()
            response = call_add(client, n)
            assert response.status_code == 200, response.get_data(as_text=True)
        reads = replica.info("commandstats")
    assert not {name for name in reads if name in ("cmdstat_get", "cmdstat_mget", "cmdstat_exists")}, reads


def test_a_failover_under_load_is_503_then_200(
    sentinels: SentinelGroup, make_client: t.Callable[..., MCPTestClient]
) -> None:
    """The master dies: requests get 503 with Retry-After (never 500) until the new master serves them."""
    app = sentinel_app(sentinels, MCP_SESSION_RATE_LIMIT=None)
    client = make_client(app)
    client.initialize()
    old = sentinels.master_port()
    master = next(server for server in (sentinels.master, sentinels.replica) if server.port == old)
    with master.client() as connection:
        assert connection.wait(1, 5000) == 1  # the session is on the replica too before the master dies
    assert call_add(client, 0).status_code == 200
    master.kill()
    statuses: list[int] = []
    deadline = time.monotonic() + DEADLINE
    n = 0
    # Load until the new master has answered a run of requests in a row.
    while statuses[-5:] != [200] * 5 or 503 not in statuses:
        assert time.monotonic() < deadline, f"no failover within {DEADLINE} s: {statuses[-20:]}"
        n += 1
        response = call_add(client, n)
        statuses.append(response.status_code)
        if response.status_code == 503:
            assert int(response.headers["Retry-After"]) >= 1
            assert response.get_json()["error"]["code"] == -31503
        else:
            assert response.status_code == 200, response.get_data(as_text=True)
            assert response.get_json()["result"]["content"][0]["text"] == str(n + 1)
    assert sentinels.master_port() != old
