"""``ctx.state`` in the cache: expiry, the size bound, and one store shared by two workers on Redis."""

from __future__ import annotations

import json
import typing as t
from concurrent.futures import ThreadPoolExecutor

import pytest
from flask import Flask
from flask_caching import Cache

from flask_mcp import MCP, Context
from flask_mcp.stores.context_state import CacheStateStore
from flask_mcp.testing import MCPTestClient

from ..conftest import START, Clock, worker_app


def test_values_expire_each_after_its_own_ttl(cache: Cache) -> None:
    clock = Clock(START)
    store = CacheStateStore(cache, ttl=60, max_bytes=1000, clock=clock)
    store.set("principal:ada", "short", '"s"', 5)
    store.set("principal:ada", "long", '"l"', None)
    clock.advance(6)
    assert store.get("principal:ada", "short") is None
    assert store.get("principal:ada", "long") == '"l"'
    clock.advance(60)
    assert store.get("principal:ada", "long") is None


def test_scopes_do_not_share_keys(cache: Cache) -> None:
    store = CacheStateStore(cache, ttl=60, max_bytes=1000)
    store.set("session:a", "k", "1", None)
    assert store.get("session:b", "k") is None and store.get("principal:a", "k") is None
    store.delete("session:b", "k")
    assert store.get("session:a", "k") == "1"
    store.delete("session:a", "k")
    assert store.get("session:a", "k") is None


def test_a_scope_holds_at_most_max_bytes(cache: Cache) -> None:
    """Keys and texts count together; the refused set changes nothing, and deleting makes room."""
    store = CacheStateStore(cache, ttl=60, max_bytes=20)
    store.set("s", "a", "x" * 9, None)  # 10 bytes
    store.set("s", "b", "y" * 9, None)  # 20 bytes: at the bound
    with pytest.raises(ValueError, match="MCP_CONTEXT_STATE_MAX_BYTES"):
        store.set("s", "c", "1", None)
    with pytest.raises(ValueError):
        store.set("s", "a", "x" * 10, None)  # replacing counts the new text
    assert store.get("s", "a") == "x" * 9 and store.get("s", "c") is None
    store.delete("s", "b")
    store.set("s", "c", "1", None)
    assert store.get("s", "c") == "1"


def test_expired_values_make_room(cache: Cache) -> None:
    clock = Clock(START)
    store = CacheStateStore(cache, ttl=60, max_bytes=20, clock=clock)
    store.set("s", "a", "x" * 18, 5)
    clock.advance(6)
    store.set("s", "b", "y" * 18, None)
    assert store.get("s", "b") == "y" * 18


def test_concurrent_writers_of_one_scope_keep_every_key(cache: Cache) -> None:
    store = CacheStateStore(cache, ttl=60, max_bytes=10_000)
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda n: store.set("s", f"k{n}", str(n), None), range(40)))
    assert [store.get("s", f"k{n}") for n in range(40)] == [str(n) for n in range(40)]


# -- through the extension -------------------------------------------------------------------------


def counter(mcp: MCP) -> None:
    @mcp.tool(permissions=[])
    def remember(key: str, value: t.Any, ctx: Context) -> None:
        ctx.state.set(key, value)

    @mcp.tool(permissions=[])
    def recall(key: str, ctx: Context) -> str:
        return json.dumps(ctx.state.get(key, "unset"))


def recalled(client: MCPTestClient, key: str) -> t.Any:
    return json.loads(client.call_tool("recall", {"key": key})["content"][0]["text"])


@pytest.mark.filterwarnings("ignore::flask_mcp.UnprotectedToolWarning")  # the workers' own "add"
def test_a_value_set_in_one_worker_is_read_in_the_other(redis_url: str, prefix: str) -> None:
    """Two apps on one Redis, as two processes: per principal in the modern era, per session in the handshake era."""
    tokens = {"ada-token": "ada", "eve-token": "eve"}
    a, b = (worker_app(redis_url, prefix, counter, MCP_AUTH_TOKENS=tokens) for _ in range(2))
    MCPTestClient(a, era="modern", token="ada-token").call_tool("remember", {"key": "k", "value": {"n": 1}})
    assert recalled(MCPTestClient(b, era="modern", token="ada-token"), "k") == {"n": 1}
    assert recalled(MCPTestClient(b, era="modern", token="eve-token"), "k") == "unset"
    # A handshake session keys its own state, shared by the workers serving it.
    in_a = MCPTestClient(a, token="ada-token")
    in_a.initialize()
    in_a.call_tool("remember", {"key": "k", "value": "session"})
    in_b = MCPTestClient(b, era="handshake", token="ada-token")
    in_b.session_id, in_b.protocol_version = in_a.session_id, in_a.protocol_version
    assert recalled(in_b, "k") == "session"
    assert recalled(MCPTestClient(a, era="modern", token="ada-token"), "k") == {"n": 1}


def test_an_anonymous_modern_caller_gets_a_tool_error(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    counter(mcp)
    client = MCPTestClient(make_app(mcp), era="modern")
    result = client.call_tool("recall", {"key": "k"})
    assert result["isError"] is True


def test_the_settings_reach_the_store(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    counter(mcp)
    app = make_app(mcp, MCP_CONTEXT_STATE_MAX_BYTES=8, MCP_AUTH_TOKENS={"t": "ada"})
    client = MCPTestClient(app, era="modern", token="t")
    assert client.call_tool("remember", {"key": "k", "value": 1}).get("isError") is not True
    assert client.call_tool("remember", {"key": "k", "value": "too long"})["isError"] is True
    assert recalled(client, "k") == 1
