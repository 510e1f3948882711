"""Cached results of read-only tools: reused for the same arguments and caller, forgotten on demand."""

from __future__ import annotations

import datetime
import typing as t

import pytest
from flask import Flask

from flask_mcp import MCP, CallInfo, ToolError
from flask_mcp.signals import tool_called
from flask_mcp.testing import MCPTestClient

from ..conftest import worker_app

READ_ONLY = {"readOnlyHint": True}


class Counter:
    """How many times each tool really ran."""

    def __init__(self) -> None:
        self.runs: dict[str, int] = {}

    def ran(self, name: str) -> int:
        self.runs[name] = self.runs.get(name, 0) + 1
        return self.runs[name]


def catalog(counter: Counter) -> MCP:
    mcp = MCP(name="catalog")

    @mcp.tool(cache=60, annotations=READ_ONLY, tags={"catalog"})
    def price(sku: str) -> dict[str, t.Any]:
        return {"sku": sku, "run": counter.ran("price")}

    @mcp.tool(cache=datetime.timedelta(minutes=5), cache_scope="public", annotations=READ_ONLY)
    def rates() -> dict[str, int]:
        return {"run": counter.ran("rates")}

    @mcp.tool(cache=60, annotations=READ_ONLY)
    def flaky(sku: str) -> str:
        if counter.ran("flaky") == 1:
            raise ToolError("the backend hiccuped")
        return f"ok {sku}"

    return mcp


@pytest.fixture
def counter() -> Counter:
    return Counter()


@pytest.fixture
def app(counter: Counter, make_app: t.Any) -> Flask:
    tokens = {"ada-token": "ada", "eve-token": "eve"}
    with pytest.warns(UserWarning):  # the tools have no permissions while authentication is on
        return t.cast(Flask, make_app(catalog(counter), MCP_AUTH_TOKENS=tokens))


def test_the_same_arguments_are_answered_from_the_cache(app: Flask, make_client: t.Any, counter: Counter) -> None:
    ada = make_client(app, era="modern", token="ada-token")
    first = ada.call_tool("price", {"sku": "A1"})
    assert ada.call_tool("price", {"sku": "A1"}) == first
    assert counter.runs["price"] == 1
    assert ada.call_tool("price", {"sku": "B2"})["structuredContent"]["run"] == 2


def test_results_are_per_caller_unless_public(app: Flask, make_client: t.Any, counter: Counter) -> None:
    ada = make_client(app, era="modern", token="ada-token")
    eve = make_client(app, era="handshake", token="eve-token")
    eve.initialize()
    ada.call_tool("price", {"sku": "A1"})
    assert eve.call_tool("price", {"sku": "A1"})["structuredContent"]["run"] == 2  # eve's own entry
    ada.call_tool("rates")
    assert eve.call_tool("rates")["structuredContent"] == {"run": 1}  # cache_scope="public": shared
    assert counter.runs == {"price": 2, "rates": 1}


def test_a_direct_call_runs_the_tool_and_answers_its_plain_value(
    app: Flask, make_client: t.Any, counter: Counter
) -> None:
    """REST answers the tool's value, which the cache does not hold: a kept result neither answers nor is kept."""
    make_client(app, era="modern", token="ada-token").call_tool("rates")  # kept for everybody
    http = app.test_client()
    for run in (2, 3):
        response = http.post("/mcp/rest/tools/rates", json={}, headers={"Authorization": "Bearer ada-token"})
        assert response.get_json() == {"result": {"run": run}}
    assert counter.runs == {"rates": 3}


def test_error_results_are_never_kept(app: Flask, make_client: t.Any, counter: Counter) -> None:
    ada = make_client(app, era="modern", token="ada-token")
    assert ada.call_tool("flaky", {"sku": "A1"})["isError"] is True
    assert ada.call_tool("flaky", {"sku": "A1"})["content"][0]["text"] == "ok A1"
    assert ada.call_tool("flaky", {"sku": "A1"})["content"][0]["text"] == "ok A1"
    assert counter.runs["flaky"] == 2


def test_invalidate_a_tool_some_arguments_or_a_tag(app: Flask, make_client: t.Any, counter: Counter) -> None:
    ada = make_client(app, era="modern", token="ada-token")
    mcp = app.extensions["mcp"].mcp
    for sku in ("A1", "B2"):
        ada.call_tool("price", {"sku": sku})
    with app.app_context():
        mcp.invalidate("price", sku="A1")
    assert ada.call_tool("price", {"sku": "A1"})["structuredContent"]["run"] == 3
    assert ada.call_tool("price", {"sku": "B2"})["structuredContent"]["run"] == 2  # still kept
    with app.app_context():
        mcp.invalidate(tag="catalog")
    assert ada.call_tool("price", {"sku": "B2"})["structuredContent"]["run"] == 4
    with app.app_context():
        mcp.invalidate("rates")
        with pytest.raises(KeyError, match="no tool 'nope'"):
            mcp.invalidate("nope")
        with pytest.raises(ValueError, match="name a tool, or a tag"):
            mcp.invalidate()
    with pytest.raises(RuntimeError, match="needs an app context"):
        mcp.invalidate("price")


def test_hooks_and_signals_see_hits_and_misses(app: Flask, make_client: t.Any) -> None:
    mcp = app.extensions["mcp"].mcp
    seen: list[str | None] = []
    signalled: list[str | None] = []

    @mcp.after_call
    def note(info: CallInfo, result: t.Any) -> None:
        seen.append(info.cache)

    def receive(sender: t.Any, **data: t.Any) -> None:
        signalled.append(data["cache"])

    ada = make_client(app, era="modern", token="ada-token")
    with tool_called.connected_to(receive):
        ada.call_tool("price", {"sku": "A1"})
        ada.call_tool("price", {"sku": "A1"})
    assert seen == signalled == ["miss", "hit"]


def test_a_cached_tool_must_be_read_only() -> None:
    mcp = MCP(name="x")
    with pytest.raises(ValueError, match=r'annotations=\{"readOnlyHint": True\}'):
        mcp.tool(name="x", cache=60)(lambda: "x")
    with pytest.raises(ValueError, match="cache must be a positive number of seconds"):
        mcp.tool(name="x", cache=0, annotations=READ_ONLY)(lambda: "x")


def test_clients_may_reuse_a_cached_tools_listing_as_long(make_app: t.Any, make_client: t.Any) -> None:
    mcp = MCP(name="hinted")

    @mcp.tool(cache=30, annotations=READ_ONLY)
    def quote() -> str:
        return "q"

    listing = make_client(make_app(mcp), era="modern").request("tools/list", {})
    assert listing["ttlMs"] == 30_000


def test_one_worker_answers_from_what_another_kept(redis_url: str, prefix: str, counter: Counter) -> None:
    def setup(mcp: MCP) -> None:
        @mcp.tool(cache=60, cache_scope="public", annotations=READ_ONLY)
        def stock(sku: str) -> dict[str, int]:
            return {"run": counter.ran("stock")}

    first, second = worker_app(redis_url, prefix, setup), worker_app(redis_url, prefix, setup)
    assert MCPTestClient(first).call_tool("stock", {"sku": "A1"})["structuredContent"] == {"run": 1}
    assert MCPTestClient(second).call_tool("stock", {"sku": "A1"})["structuredContent"] == {"run": 1}
    with second.app_context():
        second.extensions["mcp"].mcp.invalidate("stock")
    assert MCPTestClient(first).call_tool("stock", {"sku": "A1"})["structuredContent"] == {"run": 2}
