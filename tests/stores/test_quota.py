"""The shared short-lived store: bounded per caller and kind, refused (429) before anybody else's entries go.

One caller floods the ephemeral store with ``ctx.state`` and spilled results;
another caller's ``ctx.state`` and spent rate-limit budget must survive, and
the flooder must get HTTP 429 / -31429 with ``Retry-After``. Against the
embedded SimpleCache and against a real redis-server with a small ``maxmemory``.
"""

from __future__ import annotations

import typing as t
import uuid

import pytest
from flask import Flask

from flask_mcp import MCP, Context
from flask_mcp.protocol.errors import StoreRefused
from flask_mcp.protocol.jsonrpc import RATE_LIMITED
from flask_mcp.stores.capacity import SimpleCacheCapacity
from flask_mcp.stores.quota import Quota, StoreGuard
from flask_mcp.testing import MCPTestClient
from tests.conftest import START, Clock, redis_server

VICTIM = "192.0.2.1"


@pytest.fixture
def server() -> MCP:
    server = MCP(name="quota")

    @server.tool()
    def remember(key: str, text: str, ctx: Context) -> str:
        """Keep *text* under *key* in ctx.state."""
        ctx.state.set(key, text)
        return "kept"

    @server.tool()
    def recall(key: str, ctx: Context) -> str:
        """What ctx.state holds under *key*."""
        return str(ctx.state.get(key, "<gone>"))

    @server.tool(rate_limit="2/hour")
    def limited() -> str:
        """A tool each caller may call twice an hour."""
        return "ok"

    @server.tool(max_result_bytes=100, spill_to_resource=True)
    def dump(size: int) -> str:
        """A result too big to send: it is spilled to a resource."""
        return "x" * size

    return server


def client_at(make_client: t.Callable[..., MCPTestClient], app: Flask, address: str) -> MCPTestClient:
    """A client in a session of its own, whose requests come from *address*."""
    client = make_client(app)
    client.http.environ_base["REMOTE_ADDR"] = address
    client.initialize()
    return client


def call(client: MCPTestClient, name: str, arguments: dict[str, t.Any]) -> t.Any:
    """``tools/call``; the raw response (its status tells a refusal)."""
    params = {"name": name, "arguments": arguments}
    return client.post({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params})


def assert_refused(response: t.Any) -> None:
    """HTTP 429 with -31429 and a Retry-After that says the same as data.retryAfter."""
    assert response.status_code == 429, response.get_data(as_text=True)
    body = response.get_json()
    assert body["error"]["code"] == RATE_LIMITED
    assert int(response.headers["Retry-After"]) == body["error"]["data"]["retryAfter"] >= 1


class Victim:
    """A caller with ctx.state kept and its budget of ``limited`` spent, before anybody floods."""

    def __init__(self, make_client: t.Callable[..., MCPTestClient], app: Flask) -> None:
        self.client = client_at(make_client, app, VICTIM)
        assert self.client.call_tool("remember", {"key": "note", "text": "mine"})["content"][0]["text"] == "kept"
        for _ in range(2):
            assert self.client.call_tool("limited")["content"][0]["text"] == "ok"
        assert_refused(call(self.client, "limited", {}))

    def assert_intact(self) -> None:
        """Its ctx.state is there, and its spent budget is still spent."""
        assert self.client.call_tool("recall", {"key": "note"})["content"][0]["text"] == "mine"
        assert_refused(call(self.client, "limited", {}))


def flood_state(
    make_client: t.Callable[..., MCPTestClient], app: Flask, address: str, attempts: int, size: int = 10
) -> list[t.Any]:
    """ctx.state writes from *address*, each in a new session (a scope of its own); their responses."""
    responses = []
    for n in range(attempts):
        flooder = client_at(make_client, app, address)
        responses.append(call(flooder, "remember", {"key": f"k{n}", "text": "f" * size}))
    return responses


# -- the guard itself ---------------------------------------------------------------------------


def guard_of(cache: t.Any, clock: Clock, quota: Quota, capacity: t.Any = None) -> StoreGuard:
    return StoreGuard(cache, quota, capacity, quotas={"big": Quota(None, 100)}, clock=clock)


def test_each_caller_and_kind_has_a_quota_of_entries_and_bytes(cache: t.Any) -> None:
    clock = Clock(START)
    guard = guard_of(cache, clock, Quota(entries=2, max_bytes=None))
    guard.reserve("a:1", "state", "one", 10, 60)
    guard.reserve("a:1", "state", "two", 10, 30)
    with pytest.raises(StoreRefused) as refused:
        guard.reserve("a:1", "state", "three", 10, 60)
    assert refused.value.code == RATE_LIMITED and refused.value.data == {"retryAfter": 30}
    # Another caller, another kind: quotas of their own.
    guard.reserve("a:2", "state", "three", 10, 60)
    guard.reserve("a:1", "spill", "three", 10, 60)
    # Kept again under its name, an item is counted once.
    guard.reserve("a:1", "state", "two", 12, 60)
    assert guard.usage("a:1", "state") == (2, 22)
    guard.release("a:1", "state", "one")
    guard.reserve("a:1", "state", "three", 10, 60)
    # A kind with a quota of its own: in bytes.
    guard.reserve("a:1", "big", "blob", 100, 60)
    with pytest.raises(StoreRefused):
        guard.reserve("a:1", "big", "more", 1, 60)
    guard.reserve("a:1", "big", "blob", 50, 60)
    guard.reserve("a:1", "big", "more", 50, 60)


def test_expired_items_leave_the_quota(cache: t.Any) -> None:
    clock = Clock(START)
    guard = guard_of(cache, clock, Quota(entries=1, max_bytes=None))
    guard.reserve("a:1", "state", "one", 10, 60)
    with pytest.raises(StoreRefused):
        guard.reserve("a:1", "state", "two", 10, 60)
    clock.advance(61)
    guard.reserve("a:1", "state", "two", 10, 60)
    assert guard.usage("a:1", "state") == (1, 10)


def test_a_full_store_refuses_what_is_new_or_grows(cache: t.Any) -> None:
    backend = cache.cache
    clock = Clock(START)
    guard = guard_of(cache, clock, Quota(None, None), SimpleCacheCapacity(backend, 3))
    guard.reserve("a:1", "state", "one", 10, 60)
    cache.set("one", "x")
    cache.set("filler", "x")
    with pytest.raises(StoreRefused) as refused:
        guard.reserve("a:2", "state", "two", 10, 60)
    assert refused.value.data == {"retryAfter": guard.retry_after}
    with pytest.raises(StoreRefused):
        guard.reserve("a:1", "state", "one", 11, 60)
    # What stays as big as it was takes no room: a full store never blocks an update in place.
    guard.reserve("a:1", "state", "one", 10, 60)
    guard.reserve("a:1", "state", "one", 5, 60)


# -- SimpleCache --------------------------------------------------------------------------------


def test_one_callers_flood_of_state_is_refused_and_evicts_nobody(
    server: MCP, make_app: t.Callable[..., Flask], make_client: t.Callable[..., MCPTestClient]
) -> None:
    """The flooder gets 429 at its quota; before, it would have pushed the victim's state and counter out."""
    app = make_app(server, MCP_SESSION_RATE_LIMIT=None, MCP_EPHEMERAL_CACHE_THRESHOLD=100, MCP_STORE_QUOTA_ENTRIES=20)
    victim = Victim(make_client, app)
    responses = flood_state(make_client, app, "198.51.100.7", 150)
    assert [r.status_code for r in responses] == [200] * 20 + [429] * 130
    assert_refused(responses[-1])
    assert "keeps as much state as it may (20 entries)" in responses[-1].get_json()["error"]["message"]
    victim.assert_intact()


def test_many_callers_fill_the_store_to_its_high_water_and_no_further(
    server: MCP, make_app: t.Callable[..., Flask], make_client: t.Callable[..., MCPTestClient]
) -> None:
    """Callers each within their quota: past MCP_STORE_HIGH_WATER of the threshold, 429 for all; nothing evicted."""
    app = make_app(server, MCP_SESSION_RATE_LIMIT=None, MCP_EPHEMERAL_CACHE_THRESHOLD=100, MCP_STORE_QUOTA_ENTRIES=20)
    victim = Victim(make_client, app)
    kept: list[tuple[MCPTestClient, str]] = []
    refused = []
    for n in range(12):
        for m in range(12):
            flooder = client_at(make_client, app, f"198.51.100.{n}")
            response = call(flooder, "remember", {"key": "k", "text": f"{n}-{m}"})
            if response.status_code == 200:
                kept.append((flooder, f"{n}-{m}"))
            else:
                refused.append(response)
    assert refused and len(kept) < 144
    assert_refused(refused[-1])
    assert "the server's short-lived store is full" in refused[-1].get_json()["error"]["message"]
    backend = app.extensions["cache"][app.extensions["mcp"].mailbox.cache]
    assert len(backend._cache) <= 90
    victim.assert_intact()
    for flooder, text in kept:  # every write that was accepted is still there
        assert flooder.call_tool("recall", {"key": "k"})["content"][0]["text"] == text


def test_a_flood_of_spilled_results_is_refused_too(
    server: MCP, make_app: t.Callable[..., Flask], make_client: t.Callable[..., MCPTestClient]
) -> None:
    """Another client-driven kind, spilled results: a quota of their own, 429 past it, the victim's state kept."""
    app = make_app(server, MCP_EPHEMERAL_CACHE_THRESHOLD=100, MCP_STORE_QUOTA_ENTRIES=20)
    victim = Victim(make_client, app)
    flooder = client_at(make_client, app, "198.51.100.7")
    statuses = [call(flooder, "dump", {"size": 1000}).status_code for _ in range(150)]
    assert statuses == [200] * 20 + [429] * 130
    assert_refused(call(flooder, "dump", {"size": 1000}))
    # Its ctx.state quota is untouched by its spilled results.
    assert flooder.call_tool("remember", {"key": "k", "text": "v"})["content"][0]["text"] == "kept"
    victim.assert_intact()


def test_no_flood_of_short_lived_entries_evicts_a_rate_limit_counter(
    server: MCP, make_app: t.Callable[..., Flask], make_client: t.Callable[..., MCPTestClient]
) -> None:
    """Whatever fills the ephemeral cache past its threshold, a spent budget stays spent."""
    app = make_app(server, MCP_EPHEMERAL_CACHE_THRESHOLD=100)
    victim = Victim(make_client, app)
    cache = app.extensions["mcp"].mailbox.cache
    with app.app_context():
        for n in range(1000):
            cache.set(f"await:{uuid.uuid4().hex}:{n}", True)
    victim.assert_intact()


def test_counters_in_a_cache_the_app_gave_are_kept_apart(
    server: MCP, make_app: t.Callable[..., Flask], make_client: t.Callable[..., MCPTestClient]
) -> None:
    """A SimpleCache passed as MCP(ephemeral_cache=...) evicts at its threshold: the counters are not in it."""
    from flask_caching import Cache

    app = Flask("given")
    app.config.update(TESTING=True, MCP_SESSION_RATE_LIMIT=None)
    given = Cache(app, config={"CACHE_TYPE": "SimpleCache", "CACHE_THRESHOLD": 50})
    server.ephemeral_cache = given  # as MCP(ephemeral_cache=given) would
    server.init_app(app)
    victim = Victim(make_client, app)
    with app.app_context():
        for n in range(500):
            given.set(f"filler:{n}", True)
    assert_refused(call(victim.client, "limited", {}))


# -- Redis --------------------------------------------------------------------------------------


def test_redis_with_a_small_maxmemory_refuses_before_it_evicts(
    server: MCP, make_client: t.Callable[..., MCPTestClient]
) -> None:
    """A real redis-server (4 MB, volatile-ttl): the flood gets 429 at the high water; Redis evicts nothing."""
    import redis

    with redis_server("--maxmemory", "4mb", "--maxmemory-policy", "volatile-ttl") as url:
        app = Flask("redis_quota")
        app.config.update(
            TESTING=True,
            MCP_CACHE_TYPE="RedisCache",
            MCP_CACHE_REDIS_URL=url,
            MCP_SESSION_RATE_LIMIT=None,
            MCP_CONTEXT_STATE_MAX_BYTES=2_000_000,
            MCP_STORE_QUOTA_BYTES=1_000_000,
        )
        server.init_app(app)
        victim = Victim(make_client, app)
        flooders = [client_at(make_client, app, f"198.51.100.{n}") for n in range(8)]
        statuses: dict[int, list[int]] = {}
        last = None
        for n, flooder in enumerate(flooders):
            # One session each: a quota is the caller's, whatever scope its state is kept under.
            for m in range(20):
                response = call(flooder, "remember", {"key": f"k{m}", "text": "f" * 60_000})
                statuses.setdefault(n, []).append(response.status_code)
                if response.status_code != 200:
                    last = response
        # Each flooder is held to its quota (1 MB) and the store stops short of maxmemory.
        assert all(set(codes) <= {200, 429} for codes in statuses.values()), repr(statuses)
        assert sum(codes.count(200) for codes in statuses.values()) < 8 * 16
        assert last is not None
        assert_refused(last)
        with redis.Redis.from_url(url) as client:
            assert client.info("stats")["evicted_keys"] == 0
        victim.assert_intact()
