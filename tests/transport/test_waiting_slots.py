"""One caller's handlers waiting for its answers hold at most ``MCP_MAX_WAITING_PER_CALLER`` threads of a process."""

from __future__ import annotations

import typing as t

import pytest
from flask import Flask
from hypothesis import given, settings
from hypothesis import strategies as st

from flask_mcp import MCP, Context
from flask_mcp.transport.waiting_slots import WaitingSlots

from ..stores.test_events import parse_events


@settings(max_examples=200, database=None)
@given(
    limit=st.integers(min_value=1, max_value=5),
    steps=st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.booleans()), max_size=60),
)
def test_a_caller_has_at_most_limit_handlers_waiting(limit: int, steps: list[tuple[str, bool]]) -> None:
    """Whatever the order of takes and gives, no caller passes the limit, and nobody else's count moves."""
    slots = WaitingSlots(limit)
    held: dict[str, int] = {}
    for caller, taking in steps:
        if taking:
            assert slots.take(caller) is (held.get(caller, 0) < limit)
            held[caller] = min(held.get(caller, 0) + 1, limit)
        elif held.get(caller):
            slots.give_back(caller)
            held[caller] -= 1
        for name in "abc":
            assert slots.waiting(name) == held.get(name, 0) <= limit
    assert len(slots._held) == sum(1 for count in held.values() if count)  # nobody kept at zero


@pytest.fixture
def asking(mcp: MCP) -> MCP:
    @mcp.tool
    def ask(ctx: Context) -> str:
        return str(len(ctx.list_roots()))

    return mcp


def _ask(client: t.Any, request_id: int, address: str = "127.0.0.1") -> t.Any:
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": "ask"}}
    return client.http.post(
        "/mcp", json=message, headers=client.headers(), buffered=False, environ_base={"REMOTE_ADDR": address}
    )


def test_past_the_limit_a_callers_question_fails_at_once_and_other_callers_still_ask(
    asking: MCP, make_app: t.Callable[..., Flask], make_client: t.Callable[..., t.Any]
) -> None:
    app = make_app(asking, MCP_MAX_WAITING_PER_CALLER=1)
    client = make_client(app)
    client.initialize(capabilities={"roots": {}})
    waiting = _ask(client, 1)
    events = parse_events(iter(waiting.response))
    next(events)  # priming
    question = next(events)["message"]
    assert question["method"] == "roots/list"  # the handler now waits for this client's answer
    refused = _ask(client, 2)
    assert refused.mimetype == "application/json"  # nothing was sent to the client: no stream
    result = refused.get_json()["result"]
    assert result["isError"] and "already has 1 requests" in result["content"][0]["text"]
    elsewhere = _ask(client, 3, address="10.0.0.9")  # another caller: its question goes out
    other = parse_events(iter(elsewhere.response))
    next(other)
    other_question = next(other)["message"]
    assert other_question["method"] == "roots/list"
    state = app.extensions["mcp"]
    assert state.waiting.waiting("a:127.0.0.1") == state.waiting.waiting("a:10.0.0.9") == 1
    for asked, stream, response in ((question, events, waiting), (other_question, other, elsewhere)):
        assert client.post({"jsonrpc": "2.0", "id": asked["id"], "result": {"roots": []}}).status_code == 202
        *_, last = list(stream)
        assert last["message"]["result"]["content"][0]["text"] == "0"
        response.close()
    assert state.waiting.waiting("a:127.0.0.1") == state.waiting.waiting("a:10.0.0.9") == 0  # free again
