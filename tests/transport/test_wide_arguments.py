"""Refusing (or ignoring) unknown argument keys costs at most linear work in how many there are.

A bound that is checked must not itself be the cost: an ``arguments`` object of
many unknown keys is refused by the binder below ``MCP_MAX_JSON_KEYS`` and by
the decoder above it, on the fast lane (a plain tool) and on the general path (a
tool with a :class:`~flask_mcp.Context`), in both eras and on REST. Time is not
asserted (the machine's speed moves); the Python lines the request executes are
counted instead, and four times the keys must cost at most about four times the
lines: a loop over the keys that grows worse than linear shows at once, as would
a per-key Python step where there was none.
"""

from __future__ import annotations

import json
import sys
import types
import typing as t

import pytest
from flask import Flask
from hypothesis import given, settings
from hypothesis import strategies as st

from flask_mcp import MCP, Context

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
#: The keys' limit of the app under test (MCP_MAX_JSON_KEYS): counts on both sides of it are drawn.
LIMIT = 3000
#: How much worse than linear the larger body may do: 4x the keys, at most 4.5x the lines (plus a constant).
SLACK = 4.5


def lines_run(request: t.Callable[[], t.Any]) -> int:
    """How many Python lines *request* executes in this thread."""
    count = 0

    def tracer(frame: types.FrameType, event: str, arg: t.Any) -> t.Any:
        nonlocal count
        if event == "line":
            count += 1
        return tracer

    sys.settrace(tracer)
    try:
        request()
    finally:
        sys.settrace(None)
    return count


@pytest.fixture(scope="module")
def app() -> Flask:
    mcp = MCP(name="wide")

    @mcp.tool
    def add(a: int, b: int) -> int:
        return a + b

    @mcp.tool
    def noted(a: int, b: int, ctx: Context) -> int:
        return a + b

    @mcp.tool(unknown_arguments="ignore")
    def tolerant(a: int, b: int) -> int:
        return a + b

    app = Flask("wide")
    app.config.update(TESTING=True, MCP_STATELESS=True, MCP_MAX_JSON_KEYS=LIMIT, MCP_ALLOWED_HOSTS=["*"])
    mcp.init_app(app)
    return app


def send(app: Flask, surface: str, tool: str, unknown: int) -> t.Callable[[], t.Any]:
    arguments = {"a": 1, "b": 2, **{f"unknown_{i}": i for i in range(unknown)}}
    client = app.test_client()
    if surface == "rest":
        body = json.dumps(arguments)
        return lambda: client.post(f"/mcp/rest/tools/{tool}", data=body, content_type="application/json")
    params: dict[str, t.Any] = {"name": tool, "arguments": arguments}
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if surface == "modern":
        params["_meta"] = META
        headers.update({"Mcp-Method": "tools/call", "Mcp-Name": tool, "MCP-Protocol-Version": "2026-07-28"})
    else:
        headers["MCP-Protocol-Version"] = "2025-11-25"
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    return lambda: client.post("/mcp", data=body, headers=headers)


@settings(max_examples=12, deadline=None)
@given(
    surface=st.sampled_from(["handshake", "modern", "rest"]),
    tool=st.sampled_from(["add", "noted", "tolerant"]),
    unknown=st.integers(200, LIMIT),
)
def test_four_times_the_unknown_keys_cost_at_most_four_times_the_work(
    app: Flask, surface: str, tool: str, unknown: int
) -> None:
    # Warm: what is built once (a plan, a schema's loader) is not the request's cost.
    send(app, surface, tool, 10)()
    base = lines_run(send(app, surface, tool, 0))
    small = lines_run(send(app, surface, tool, unknown)) - base
    large = lines_run(send(app, surface, tool, 4 * unknown)) - base
    assert large <= SLACK * max(small, 0) + 2_000, (surface, tool, unknown, small, large)


@pytest.mark.parametrize("surface", ["handshake", "modern", "rest"])
@pytest.mark.parametrize("tool", ["add", "noted"])
def test_unknown_keys_are_refused_below_the_limit_and_above_it(app: Flask, surface: str, tool: str) -> None:
    below = send(app, surface, tool, LIMIT // 2)()
    above = send(app, surface, tool, 2 * LIMIT)()
    if surface == "rest":
        assert below.status_code == 400 and "Unknown argument" in below.get_json()["error"]
        assert above.status_code == 400 and f"more than the limit of {LIMIT}" in above.get_json()["error"]
        return
    refused = below.get_json()["result"]
    assert refused["isError"] is True and "unknown argument(s): unknown_0, unknown_1" in refused["content"][0]["text"]
    assert f"and {LIMIT // 2 - 20} more" in refused["content"][0]["text"]
    assert above.status_code == 400 and f"more than the limit of {LIMIT}" in above.get_json()["error"]["message"]
