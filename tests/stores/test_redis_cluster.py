"""Everything flask_mcp keeps, on a real Redis Cluster of three masters started by the tests.

Two apps share the cluster as two worker processes would. Keys that are
read or locked together share a hash tag (:mod:`flask_mcp.policies.store_keys`),
reads of several keys go slot by slot, and the capacity probe asks every
master. The cluster is started once for the module.
"""

from __future__ import annotations

import itertools
import threading
import time
import typing as t
import uuid

import pytest
from flask import Flask
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from flask_mcp import MCP, Authenticated, Context
from flask_mcp.policies.store_keys import (
    SESSION_SWEEP_CURSOR,
    session_end_count,
    session_end_entry,
    session_ended,
    session_sweep_claim,
)
from flask_mcp.policies.store_keys import key as store_key
from flask_mcp.stores.session_ends import noted_of
from flask_mcp.stores.waker import Waker
from flask_mcp.telemetry import instrument
from flask_mcp.testing import MCPTestClient

from ..core.test_tasks import TASKS
from ..redis_topologies import Cluster, cluster
from ..transport.test_streaming import Endpoint, call, gunicorn


@pytest.fixture(scope="module")
def redis_cluster() -> t.Iterator[Cluster]:
    with cluster() as found:
        yield found


@pytest.fixture
def cluster_prefix() -> str:
    """A key prefix of its own per test (no braces: the tags that follow decide the slots)."""
    return f"mcp_cluster:{uuid.uuid4().hex}:"


class Runs:
    """How many times each tool body ran, in this process (both apps run here)."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.lock = threading.Lock()

    def ran(self, name: str) -> None:
        with self.lock:
            self.counts[name] = self.counts.get(name, 0) + 1


def worker(redis_cluster: Cluster, prefix: str, runs: Runs, **config: t.Any) -> Flask:
    """One "worker process": its own app and extension, its store the cluster."""
    # With tokens every tool is for authenticated callers (as an app with authentication says).
    mcp = MCP(name="clustered", default_permissions=[Authenticated] if "MCP_AUTH_TOKENS" in config else [])

    @mcp.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @mcp.tool
    def remember(value: str, ctx: Context) -> str:
        """Keep *value* in ctx.state."""
        ctx.state.set("value", value)
        return value

    @mcp.tool
    def recall(ctx: Context) -> str:
        """What remember kept."""
        return str(ctx.state.get("value"))

    @mcp.tool(cache=60, annotations={"readOnlyHint": True})
    def catalog() -> str:
        """A cached tool: its body runs once for every worker."""
        runs.ran("catalog")
        return "items"

    @mcp.tool(rate_limit="1/minute")
    def scarce() -> str:
        """Once a minute, across every worker."""
        return "granted"

    @mcp.tool
    def ask(ctx: Context) -> str:
        """Ask the client (a mailbox answer in the handshake era, an input round in the modern one)."""
        answer = ctx.elicit("Name?", {"type": "object", "properties": {"name": {"type": "string"}}}, key="name")
        return str((answer.content or {}).get("name"))

    @mcp.tool(task="optional")
    def crunch(rows: int) -> dict[str, int]:
        """A task, run on the embedded executor."""
        return {"rows": rows, "total": sum(range(rows))}

    @mcp.resource("docs://{name}")
    def doc(name: str) -> str:
        """A document one may subscribe to."""
        return name

    app = Flask("cluster-worker")
    app.config.update(TESTING=True, **redis_cluster.config(prefix), **config)
    mcp.init_app(app)
    return app


#: A modern client that answers questions and takes tasks.
MODERN_CAPABILITIES = {"elicitation": {}, **TASKS}


def accept(name: str) -> dict[str, t.Any]:
    return {"action": "accept", "content": {"name": name}}


def text(result: dict[str, t.Any]) -> str:
    return str(result["content"][0]["text"])


def test_the_handshake_era_across_two_workers(
    redis_cluster: Cluster, cluster_prefix: str, make_client: t.Callable[..., MCPTestClient]
) -> None:
    """A session made on one worker serves every feature on the other (its first tools/call was a 500)."""
    runs = Runs()
    apps = [worker(redis_cluster, cluster_prefix, runs) for _ in range(2)]
    a, b = (make_client(app) for app in apps)
    a.initialize(capabilities={"elicitation": {}})
    b.session_id, b.protocol_version, b.era = a.session_id, a.protocol_version, "handshake"

    assert text(b.call_tool("add", {"a": 2, "b": 3})) == "5"
    assert b.request("resources/subscribe", {"uri": "docs://x"}) == {}
    assert a.request("resources/unsubscribe", {"uri": "docs://x"}) == {}
    assert text(a.call_tool("remember", {"value": "kept"})) == "kept"
    assert text(b.call_tool("recall")) == "kept"
    assert [text(client.call_tool("catalog")) for client in (a, b)] == ["items", "items"]
    assert runs.counts["catalog"] == 1
    assert text(a.call_tool("scarce")) == "granted"
    assert b.error("tools/call", {"name": "scarce", "arguments": {}})["code"] == -31429
    # The client's answer goes through the session's mailbox.
    assert text(b.call_tool("ask", answers=lambda key, asked: accept("Ada"))) == "Ada"
    # A run-time change made on one worker is served by the other.
    with apps[0].app_context():
        apps[0].extensions["mcp"].mcp.disable("add")
    assert "add" not in {tool["name"] for tool in b.list_tools()}
    created = b.request("tools/call", {"name": "crunch", "arguments": {"rows": 5}, "task": {"ttl": 60000}})
    task_id = created["task"]["taskId"]
    assert a.wait_for_task(task_id)["status"] == "completed"
    assert a.task_result(task_id)["structuredContent"] == {"rows": 5, "total": 10}
    assert b.http.delete("/mcp", headers=b.headers()).status_code in (200, 204)
    assert a.post({"jsonrpc": "2.0", "id": 9, "method": "ping"}).status_code == 404


def test_the_modern_era_across_two_workers(
    redis_cluster: Cluster, cluster_prefix: str, make_client: t.Callable[..., MCPTestClient]
) -> None:
    """Stateless requests: rounds, ctx.state by principal, cached results, limits and tasks, on either worker."""
    runs = Runs()
    apps = [worker(redis_cluster, cluster_prefix, runs, MCP_AUTH_TOKENS={"t0ken": "ada"}) for _ in range(2)]
    a, b = (make_client(app, era="modern", principal="ada", capabilities=MODERN_CAPABILITIES) for app in apps)
    assert text(a.call_tool("add", {"a": 1, "b": 1})) == "2"
    assert text(a.call_tool("remember", {"value": "modern"})) == "modern"
    assert text(b.call_tool("recall")) == "modern"
    assert [text(client.call_tool("catalog")) for client in (a, b)] == ["items", "items"]
    assert runs.counts["catalog"] == 1
    assert text(b.call_tool("scarce")) == "granted"
    assert a.error("tools/call", {"name": "scarce", "arguments": {}})["code"] == -31429

    # An input round sealed by one worker (its key kept in the cluster) is opened by the other.
    first = a.request("tools/call", {"name": "ask", "arguments": {}})
    assert first["resultType"] == "input_required"
    retry = {"name": "ask", "arguments": {}, "inputResponses": {"name": accept("Grace")}}
    retry["requestState"] = first["requestState"]
    assert text(b.request("tools/call", retry)) == "Grace"

    created = a.request("tools/call", {"name": "crunch", "arguments": {"rows": 4}})
    task = b.wait_for_task(created["taskId"])
    assert task["status"] == "completed" and task["result"]["structuredContent"] == {"rows": 4, "total": 6}


def test_a_sessions_keys_share_its_slot(
    redis_cluster: Cluster, cluster_prefix: str, make_client: t.Callable[..., MCPTestClient]
) -> None:
    """What one session keeps (record, subscriptions, mailbox, events) lives in one slot: its tag's."""
    client = make_client(worker(redis_cluster, cluster_prefix, Runs()))
    client.initialize(capabilities={"elicitation": {}})
    client.request("resources/subscribe", {"uri": "docs://y"})
    client.call_tool("ask", answers=lambda key, asked: accept("Lin"))
    session_id = t.cast(str, client.session_id)
    found: list[bytes] = []
    for node in redis_cluster.nodes:
        with node.client() as connection:
            found += connection.keys(f"{cluster_prefix}*{session_id}*")
    assert len(found) >= 3  # the record, the subscriptions, the events of the call's stream
    with redis_cluster.nodes[0].client() as connection:
        slots = {connection.cluster("keyslot", name.decode()) for name in found}
        assert slots == {connection.cluster("keyslot", store_key("session", session_id))}


def test_the_waker_reads_keys_of_every_slot(redis_cluster: Cluster, cluster_prefix: str) -> None:
    """One batched read of keys on different masters: waiters sleep until their own key changes."""
    app = worker(redis_cluster, cluster_prefix, Runs())
    events = app.extensions["mcp"].events
    backend = events.cache.cache
    names = [events.counter_key(f"session-{n}", "stream") for n in range(12)]
    with redis_cluster.nodes[0].client() as connection:
        assert len({connection.cluster("keyslot", cluster_prefix + "e:" + name) for name in names}) > 1
    waker = Waker(0.01)
    try:
        deadline = time.monotonic() + 10
        while True:  # the poller's first look may come after a short wait ends, on a loaded machine
            assert waker.wait(backend, dict.fromkeys(names), 0.2) is False  # nothing changed: no wake-up
            if waker.reads >= 1:
                break
            assert time.monotonic() < deadline, "the poller never read the keys"
        events.append("session-7", "stream", {"n": 1})
        assert waker.wait(backend, dict.fromkeys(names), 10) is True
    finally:
        waker.close()


def test_a_full_master_refuses_new_sessions(
    redis_cluster: Cluster, cluster_prefix: str, make_client: t.Callable[..., MCPTestClient]
) -> None:
    """Each master is asked: one of three near its maxmemory is enough to refuse (503, Retry-After)."""
    client = make_client(worker(redis_cluster, cluster_prefix, Runs()))
    node = redis_cluster.nodes[2]
    with node.client() as connection:
        used = int(connection.info("memory")["used_memory"])
        connection.config_set("maxmemory", str(used + used // 10))  # above the high-water mark, below the limit
        try:
            response = client.post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": client_hello()})
        finally:
            connection.config_set("maxmemory", "0")
    assert response.status_code == 503 and response.headers["Retry-After"]
    client.initialize()  # room again


def client_hello() -> dict[str, t.Any]:
    return {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}


def test_two_gunicorn_processes_share_the_cluster(redis_cluster: Cluster, cluster_prefix: str) -> None:
    """Requests of one session alternate between two gunicorn processes; each answers for every other."""
    env = {key: str(value) for key, value in redis_cluster.config(cluster_prefix).items()}
    with gunicorn(**env) as server_a, gunicorn(**env) as server_b:
        endpoints = [Endpoint(server_a.url), Endpoint(server_b.url)]
        session_id = endpoints[0].initialize({})
        pids = set()
        for n, endpoint in zip(range(6), itertools.cycle(endpoints), strict=False):
            reply = endpoint.post(call("spare", request_id=n + 1), session_id)
            assert reply.status == 200, reply.body
            pids.add(reply.headers["X-Worker-Pid"])
            assert reply.json()["result"]["content"][0]["text"] == "spare"
        assert len(pids) == 2
        # A change made in one process is served by the other.
        assert endpoints[1].post(call("flip", request_id=20), session_id).status == 200
        listed = endpoints[0].post({"jsonrpc": "2.0", "id": 21, "method": "tools/list"}, session_id).json()
        assert "spare" not in {tool["name"] for tool in listed["result"]["tools"]}


def _rebuilt(name: str, session_id: str) -> str:
    """*name* (a key of the session ends, without the prefix) as :mod:`~flask_mcp.policies.store_keys` makes it."""
    if name == SESSION_SWEEP_CURSOR:
        return name
    family, rest = name.split(":", 1)
    owner, _, after = rest[1:].partition("}")
    builders: dict[str, t.Callable[[], str]] = {
        "sess-end": lambda: session_end_entry(int(owner), int(after.lstrip(":"))),
        "sess-end-n": lambda: session_end_count(int(owner)),
        "sess-sweep": lambda: session_sweep_claim(int(owner)),
        "sess-ended": lambda: session_ended(session_id),
    }
    return builders[family]()


def test_the_keys_of_sessions_ends_are_the_table_s(
    redis_cluster: Cluster, cluster_prefix: str, make_client: t.Callable[..., MCPTestClient]
) -> None:
    """With a meter, a session's end is awaited in its window's slot and claimed in its own."""
    app = worker(redis_cluster, cluster_prefix, Runs())
    meters = MeterProvider(metric_readers=[InMemoryMetricReader()])
    try:
        instrument(app, meter_provider=meters)
        client = make_client(app)
        client.initialize()
        client.call_tool("add", {"a": 1, "b": 2})
        session_id = t.cast(str, client.session_id)
        with app.app_context():
            record = app.extensions["mcp"].sessions.cache.get(store_key("session", session_id))
        noted = noted_of(record["_e"])
        assert noted is not None
        assert client.http.delete("/mcp", headers=client.headers()).status_code == 204
    finally:
        meters.shutdown()
    found: list[str] = []
    ephemeral = cluster_prefix + "e:"  # the short-lived store's keys, where the ends are awaited
    for node in redis_cluster.nodes:
        with node.client() as connection:
            found += [name.decode()[len(ephemeral) :] for name in connection.keys(f"{ephemeral}sess-*")]
    assert {session_end_entry(*noted), session_end_count(noted[0]), session_ended(session_id)} <= set(found)
    assert all(_rebuilt(name, session_id) == name for name in found), found
    with redis_cluster.nodes[0].client() as connection:

        def slot(name: str) -> int:
            return int(connection.cluster("keyslot", ephemeral + name))

        assert slot(session_end_entry(*noted)) == slot(session_end_count(noted[0]))
        assert slot(session_ended(session_id)) == slot(store_key("session", session_id))
