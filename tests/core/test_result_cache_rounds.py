"""Cached results of tools that ask the client: the answers are part of the key.

A modern call's answers (``inputResponses`` and ``requestState``) are
known before it runs and go into the key; a handshake-era call learns its
answers while it runs, so a run that asked the client is never kept.
"""

from __future__ import annotations

import typing as t

import pytest
from flask import Flask

from flask_mcp import MCP, Context

READ_ONLY = {"readOnlyHint": True}
ACCOUNT = {"type": "object", "properties": {"account": {"type": "string"}}}


def accept(account: str) -> dict[str, t.Any]:
    return {"action": "accept", "content": {"account": account}}


@pytest.fixture
def ran() -> list[str]:
    return []


@pytest.fixture(params=["public", "private"])
def app(request: pytest.FixtureRequest, ran: list[str], make_app: t.Any) -> Flask:
    mcp = MCP(name="asking")

    @mcp.tool(cache=60, cache_scope=request.param, annotations=READ_ONLY)
    def balance(ctx: Context) -> str:
        answer = ctx.elicit("Which account?", ACCOUNT, key="account")
        account = answer.content["account"]
        ran.append(account)
        return f"balance of {account}"

    return t.cast(Flask, make_app(mcp))


def test_a_modern_caller_is_asked_and_never_served_anothers_answer(
    app: Flask, make_client: t.Any, ran: list[str]
) -> None:
    capabilities = {"elicitation": {}}
    mallory = make_client(app, era="modern", capabilities=capabilities)
    done = mallory.call_tool("balance", answers={"account": accept("mallory")})
    assert done["content"][0]["text"] == "balance of mallory"
    alice = make_client(app, era="modern", capabilities=capabilities)
    asked = alice.call_tool("balance")
    assert asked["resultType"] == "input_required" and "account" in asked["inputRequests"]
    assert alice.call_tool("balance", answers={"account": accept("alice")})["content"][0]["text"] == "balance of alice"
    # The same answers are the same call: answered from what was kept.
    again = make_client(app, era="modern", capabilities=capabilities)
    assert again.call_tool("balance", answers={"account": accept("alice")})["content"][0]["text"] == "balance of alice"
    assert ran == ["mallory", "alice"]


def test_a_handshake_run_that_asked_is_never_kept(app: Flask, make_client: t.Any, ran: list[str]) -> None:
    def session(account: str) -> tuple[t.Any, list[str], t.Callable[..., dict[str, t.Any]]]:
        client = make_client(app)
        client.initialize(capabilities={"elicitation": {}})
        asked: list[str] = []

        def answer(key: str, request: dict[str, t.Any]) -> dict[str, t.Any]:
            asked.append(key)
            return accept(account)

        return client, asked, answer

    mallory, _, answer = session("mallory")
    assert mallory.call_tool("balance", answers=answer)["content"][0]["text"] == "balance of mallory"
    alice, asked, answer = session("alice")
    assert alice.call_tool("balance", answers=answer)["content"][0]["text"] == "balance of alice"
    assert len(asked) == 1 and ran == ["mallory", "alice"]
