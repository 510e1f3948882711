"""Rate limits: fixed windows and token buckets in the cache, enforced by the protocol core."""

from __future__ import annotations

import typing as t
import uuid

import pytest
from cachelib import SimpleCache
from flask import Flask
from hypothesis import given
from hypothesis import strategies as st

from flask_mcp import MCP
from flask_mcp.core.client import ClientState
from flask_mcp.policies.principal import Principal
from flask_mcp.policies.ratelimit import CacheRateLimiter, FixedWindow, TokenBucket, parse_limit
from flask_mcp.protocol.jsonrpc import RATE_LIMITED, Request

ALICE = Principal("alice")
BOB = Principal("bob")


class FakeClock:
    """Seconds since the epoch that only move when told to."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def limiter(clock: FakeClock) -> CacheRateLimiter:
    return CacheRateLimiter(SimpleCache(default_timeout=0), clock=clock)


# -- rules and the limiter ---------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ("10/minute", FixedWindow(10, 60)),
        ("100 per hour", FixedWindow(100, 3600)),
        ("5/second", FixedWindow(5, 1)),
        ("5/10 seconds", FixedWindow(5, 10)),
        ("1000/day", FixedWindow(1000, 86400)),
    ],
)
def test_rules_parse_to_fixed_windows(rule: str, expected: FixedWindow) -> None:
    assert parse_limit(rule) == expected


def test_bad_rules_are_refused() -> None:
    bucket = TokenBucket(rate=1, capacity=2)
    assert parse_limit(bucket) is bucket and parse_limit(None) is None
    with pytest.raises(ValueError, match="invalid rate limit"):
        parse_limit("ten a minute")
    with pytest.raises(ValueError, match="limit >= 1"):
        FixedWindow(0, 60)
    with pytest.raises(ValueError, match="rate > 0"):
        TokenBucket(rate=0, capacity=1)


def test_fixed_window_refuses_past_the_limit_until_the_next_window() -> None:
    clock = FakeClock(6015.0)  # 15 s into the window [6000, 6060)
    rl, rule = limiter(clock), FixedWindow(3, 60)
    assert [rl.hit("k", rule) for _ in range(3)] == [None, None, None]
    assert rl.hit("k", rule) == pytest.approx(45.0)
    clock.advance(40)
    assert rl.hit("k", rule) == pytest.approx(5.0)
    assert rl.hit("other", rule) is None  # keys count apart
    clock.advance(5)
    assert [rl.hit("k", rule) for _ in range(4)] == [None, None, None, pytest.approx(60.0)]


def test_token_bucket_bursts_then_refills_at_its_rate() -> None:
    clock = FakeClock(1000.0)
    rl, rule = limiter(clock), TokenBucket(rate=2, capacity=3)  # a token every 0.5 s
    assert [rl.hit("k", rule) for _ in range(3)] == [None, None, None]
    assert rl.hit("k", rule) == pytest.approx(0.5)
    assert rl.hit("k", rule) == pytest.approx(0.5)  # a refused call spends nothing
    clock.advance(0.25)
    assert rl.hit("k", rule) == pytest.approx(0.25)
    clock.advance(0.25)
    assert rl.hit("k", rule) is None
    assert rl.hit("k", rule) == pytest.approx(0.5)
    # A long idle time refills the bucket to its capacity, not beyond.
    clock.advance(3600)
    assert [rl.hit("k", rule) is None for _ in range(4)] == [True, True, True, False]


@given(
    rule=st.one_of(
        st.builds(FixedWindow, st.integers(1, 6), st.sampled_from([1, 10, 60])),
        st.builds(TokenBucket, st.sampled_from([0.5, 1, 2, 10]), st.integers(1, 6)),
    ),
    steps=st.lists(st.tuples(st.booleans(), st.floats(0, 30)), max_size=40),
)
def test_spent_tells_without_counting_what_the_next_hit_would_answer(
    rule: FixedWindow | TokenBucket, steps: list[tuple[bool, float]]
) -> None:
    """``spent`` is ``None`` exactly when a hit now would be let through, and it never counts."""
    clock = FakeClock(10_000.0)
    counting, peeking = limiter(clock), limiter(clock)
    for hit, pause in steps:
        clock.advance(pause)
        if hit:
            counting.hit("k", rule)
            peeking.hit("k", rule)
        told = peeking.spent("k", rule)
        assert peeking.spent("k", rule) == told  # asking again changes nothing
        answer = counting.hit("k", rule)
        peeking.hit("k", rule)
        assert (told is None) == (answer is None), (told, answer)
        if told is not None:
            assert told == pytest.approx(answer)


# -- through the protocol core ------------------------------------------------------


def rpc(
    app: Flask, method: str, params: dict[str, t.Any], principal: Principal | None = None, addr: str = "10.0.0.1"
) -> dict[str, t.Any]:
    with app.test_request_context(environ_base={"REMOTE_ADDR": addr}):
        response = app.extensions["mcp"].server.handle(Request(1, method, params), ClientState(), principal=principal)
    assert response is not None
    return t.cast(dict[str, t.Any], response)


def ok(response: dict[str, t.Any]) -> bool:
    if "error" in response:
        assert response["error"]["code"] == RATE_LIMITED, response
        return False
    return True


def fake_clock(app: Flask, now: float = 6000.0) -> FakeClock:
    """Give the app's limiter a fake clock, keeping its cache."""
    clock = FakeClock(now)
    server = app.extensions["mcp"].server
    server.limiter = CacheRateLimiter(server.limiter.source, clock=clock)
    return clock


def tools(mcp: MCP, **limits: t.Any) -> None:
    for name in ("a", "b"):
        mcp.tool(name=name, **({"rate_limit": limits[name]} if name in limits else {}))(lambda: "done")


def test_exceeding_a_tool_limit_is_a_rate_limited_error(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    tools(mcp, a="2/minute")
    app = make_app(mcp)
    clock = fake_clock(app, 6010.0)
    call = {"name": "a"}
    assert [ok(rpc(app, "tools/call", call, ALICE)) for _ in range(2)] == [True, True]
    error = rpc(app, "tools/call", call, ALICE)["error"]
    assert error["code"] == RATE_LIMITED
    assert error["message"] == "Rate limit exceeded: tool a (2 per 60 seconds); retry in 50 s"
    assert error["data"] == {"retryAfter": 50}
    clock.advance(49.5)
    assert rpc(app, "tools/call", call, ALICE)["error"]["data"] == {"retryAfter": 1}  # rounded up
    assert ok(rpc(app, "tools/call", {"name": "b"}, ALICE))  # no limit of its own
    clock.advance(0.5)
    assert ok(rpc(app, "tools/call", call, ALICE))


def test_each_principal_has_its_own_budget(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    tools(mcp, a=TokenBucket(rate=1, capacity=1))
    app = make_app(mcp)
    fake_clock(app)
    assert [ok(rpc(app, "tools/call", {"name": "a"}, ALICE)) for _ in range(2)] == [True, False]
    assert ok(rpc(app, "tools/call", {"name": "a"}, BOB))


def test_anonymous_callers_are_keyed_by_address(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    tools(mcp, a="1/hour")
    app = make_app(mcp, MCP_STATELESS=True)
    fake_clock(app)
    assert ok(rpc(app, "tools/call", {"name": "a"}, addr="10.0.0.1"))
    assert not ok(rpc(app, "tools/call", {"name": "a"}, addr="10.0.0.1"))
    assert ok(rpc(app, "tools/call", {"name": "a"}, addr="10.0.0.2"))
    # A principal named like an address does not share the address's budget.
    assert ok(rpc(app, "tools/call", {"name": "a"}, Principal("10.0.0.1"), addr="10.0.0.1"))


def test_server_wide_limit_counts_every_tool_and_adds_to_tool_limits(
    mcp: MCP, make_app: t.Callable[..., Flask]
) -> None:
    tools(mcp, b="1/minute")
    app = make_app(mcp, MCP_RATE_LIMIT="3/minute")
    fake_clock(app)
    results = [ok(rpc(app, "tools/call", {"name": name}, ALICE)) for name in ("a", "b", "b", "a", "a")]
    # b's own limit refuses its second call (which still spends a server-wide call); a's
    # second call is the third server-wide one; the fourth is refused whatever the tool.
    assert results == [True, True, False, False, False]
    error = rpc(app, "tools/call", {"name": "a"}, ALICE)["error"]
    assert error["message"].startswith("Rate limit exceeded: tool calls (3 per 60 seconds)")
    # Listings and other requests are not tool calls: never limited.
    assert ok(rpc(app, "tools/list", {}, ALICE)) and ok(rpc(app, "ping", {}, ALICE))
    assert ok(rpc(app, "tools/call", {"name": "a"}, BOB))


def test_no_limit_means_no_cache_traffic(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    tools(mcp)
    app = make_app(mcp)
    calls: list[str] = []
    server = app.extensions["mcp"].server

    class Spy:
        def hit(self, key: str, limit: t.Any) -> float | None:
            calls.append(key)
            return None

    server.limiter = Spy()
    assert all(ok(rpc(app, "tools/call", {"name": "a"}, ALICE)) for _ in range(5))
    assert calls == []


# -- shared across workers on Redis ---------------------------------------------------


def _worker(redis_url: str, prefix: str, make_app: t.Callable[..., Flask], limit: t.Any) -> Flask:
    """One 'worker process': its own extension and app, the shared Redis cache."""
    extension = MCP(name="worker")
    extension.tool(name="a", rate_limit=limit)(lambda: "a")
    return make_app(extension, MCP_CACHE_TYPE="RedisCache", MCP_CACHE_REDIS_URL=redis_url, MCP_CACHE_KEY_PREFIX=prefix)


@pytest.mark.parametrize("limit", [FixedWindow(3, 60), TokenBucket(rate=0.1, capacity=3)], ids=["window", "bucket"])
def test_workers_sharing_redis_share_the_limit(redis_url: str, make_app: t.Callable[..., Flask], limit: t.Any) -> None:
    prefix = f"rl-{uuid.uuid4().hex}:"
    first, second = (_worker(redis_url, prefix, make_app, limit) for _ in range(2))
    clock = FakeClock(6000.0)
    for app in (first, second):
        server = app.extensions["mcp"].server
        server.limiter = CacheRateLimiter(server.limiter.source, clock=clock)
    results = [ok(rpc(app, "tools/call", {"name": "a"}, ALICE)) for app in (first, second, first, second)]
    assert results == [True, True, True, False]
    assert not ok(rpc(first, "tools/call", {"name": "a"}, ALICE))
    clock.advance(60)  # a new window; six tokens' worth of refill, capped at three
    assert [ok(rpc(app, "tools/call", {"name": "a"}, ALICE)) for app in (second, first, second, first)] == [
        True,
        True,
        True,
        False,
    ]


def test_http_rate_limit_is_429_with_retry_after(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    tools(mcp, a="1/hour")
    app = make_app(mcp, MCP_STATELESS=True)
    clock = fake_clock(app, 7200.0 + 600)
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "a"}}
    headers = {"Accept": "application/json, text/event-stream"}
    client = app.test_client()
    assert client.post("/mcp", json=body, headers=headers).status_code == 200
    refused = client.post("/mcp", json=body, headers=headers)
    assert refused.status_code == 429
    assert refused.json["error"]["data"] == {"retryAfter": 3000} and refused.headers["Retry-After"] == "3000"
    clock.advance(3000)
    assert client.post("/mcp", json=body, headers=headers).status_code == 200
