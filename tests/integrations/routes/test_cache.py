"""Cached results of route tools: one caller's answer is never served to another.

A route checks its caller itself (Flask-Login, a token decorator): the MCP
endpoint may authenticate nobody. The credentials the route is handed
(``Authorization``, ``Cookie``) and the address it sees are part of the key
a result is kept under, so a hit answers only a caller the route would have
answered the same.
"""

from __future__ import annotations

import typing as t

import pytest
from flask import Flask, jsonify, request

from flask_mcp import MCP
from flask_mcp.integrations.routes.expose import expose_routes, route_tool

READ_ONLY = {"readOnlyHint": True}
USERS = {"Bearer alice-token": "alice", "Bearer bob-token": "bob"}
SESSIONS = {"alice-session": "alice", "bob-session": "bob"}


def caller() -> str | None:
    """The route's own check: a bearer token, or a session cookie."""
    by_token = USERS.get(request.headers.get("Authorization", ""))
    return by_token or SESSIONS.get(request.cookies.get("sid", ""))


def private_view() -> t.Any:
    """The caller's private notes."""
    user = caller()
    if user is None:
        return jsonify(message="log in first"), 401
    return {"user": user, "notes": f"{user}'s secrets"}


def build(stacked: bool, **options: t.Any) -> tuple[Flask, list[str]]:
    mcp = MCP(name="cached-routes")
    app = Flask("cached_routes")
    app.config.update(TESTING=True)
    ran: list[str] = []

    def me() -> t.Any:
        """The caller's private notes."""
        ran.append(caller() or "nobody")
        return private_view()

    if stacked:
        app.get("/me")(mcp.tool(cache=60, annotations=READ_ONLY, **options)(me))
    else:
        app.get("/me")(me)
    mcp.init_app(app)
    if not stacked:
        expose_routes(mcp, app, ["me"], cache=60, annotations=READ_ONLY, **options)
    return app, ran


@pytest.fixture(params=[False, True], ids=["expose_routes", "stacked @mcp.tool"])
def cached(request: pytest.FixtureRequest) -> tuple[Flask, list[str]]:
    return build(request.param)


def text(result: dict[str, t.Any]) -> str:
    return t.cast(str, result["content"][0]["text"])


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_alices_answer_is_never_bobs_nor_an_anonymous_callers(
    cached: tuple[Flask, list[str]], make_client: t.Any, era: str
) -> None:
    app, ran = cached

    def client(**options: t.Any) -> t.Any:
        made = make_client(app, era=era, **options)
        if era == "handshake":
            made.initialize()
        return made

    alice = client(token="alice-token")
    assert alice.call_tool("me")["structuredContent"]["user"] == "alice"
    assert alice.call_tool("me")["structuredContent"]["user"] == "alice"
    assert ran == ["alice"]  # her second call was a hit
    assert client(token="bob-token").call_tool("me")["structuredContent"]["user"] == "bob"
    anonymous = client().call_tool("me")
    assert anonymous["isError"] is True and "401" in text(anonymous) and "alice" not in text(anonymous)
    wrong = client(token="mallory-token").call_tool("me")
    assert wrong["isError"] is True and "alice" not in text(wrong)
    assert ran == ["alice", "bob", "nobody", "nobody"]  # the route's own check ran for each of them


def test_session_cookies_are_keys_too(cached: tuple[Flask, list[str]], make_client: t.Any) -> None:
    app, ran = cached
    clients = {}
    for user in ("alice", "bob"):
        clients[user] = make_client(app, era="modern")
        clients[user].http.set_cookie("sid", f"{user}-session")
    assert clients["alice"].call_tool("me")["structuredContent"]["user"] == "alice"
    assert clients["bob"].call_tool("me")["structuredContent"]["user"] == "bob"
    assert clients["alice"].call_tool("me")["structuredContent"]["user"] == "alice"
    assert ran == ["alice", "bob"]


def test_rest_callers_are_keyed_alike(cached: tuple[Flask, list[str]], make_client: t.Any) -> None:
    app, ran = cached
    assert make_client(app, era="modern", token="alice-token").call_tool("me")["structuredContent"]["user"] == "alice"
    http = app.test_client()
    anonymous = http.post("/mcp/rest/tools/me", json={})
    assert "alice" not in anonymous.get_data(as_text=True)
    bob = http.post("/mcp/rest/tools/me", json={}, headers={"Authorization": "Bearer bob-token"})
    assert bob.get_json() == {"result": {"user": "bob", "notes": "bob's secrets"}}
    assert ran == ["alice", "nobody", "bob"]


def test_the_address_the_route_sees_is_part_of_the_key(make_client: t.Any) -> None:
    mcp = MCP(name="addresses")
    app = Flask("addresses")
    app.config.update(TESTING=True)

    @app.get("/where")
    def where() -> dict[str, t.Any]:
        """Where the caller is, by its address."""
        return {"addr": request.remote_addr}

    mcp.init_app(app)
    expose_routes(mcp, app, ["where"], cache=60, annotations=READ_ONLY)
    seen = []
    for address in ("198.51.100.1", "198.51.100.2"):
        client = make_client(app, era="modern")
        client.http.environ_base["REMOTE_ADDR"] = address
        seen.append(client.call_tool("where")["structuredContent"]["addr"])
    assert seen == ["198.51.100.1", "198.51.100.2"]


def test_public_results_of_an_exposed_route_are_refused_with_the_reason() -> None:
    with pytest.raises(ValueError, match=r'route tool \'me\': cache_scope="public" cannot be honoured.*Authorization'):
        build(False, cache_scope="public")

    mcp = MCP(name="marked")
    app = Flask("marked")

    @app.get("/other")  # routed first: it would be registered before the refusal
    def other() -> dict[str, str]:
        return {"other": "yes"}

    @app.get("/shared")
    @route_tool(cache=60, cache_scope="public", annotations=READ_ONLY)
    def shared() -> dict[str, str]:
        return {"shared": "yes"}

    mcp.init_app(app)
    with pytest.raises(ValueError, match='cache_scope="public" cannot be honoured'):
        expose_routes(mcp, app, ["other"], marked=True)
    assert dict(mcp.tools) == {}  # refused as a whole: not even the other route became a tool


def test_public_results_of_a_stacked_route_are_refused_when_it_is_found(make_client: t.Any) -> None:
    app, ran = build(True, cache_scope="public")
    alice = make_client(app, era="modern", token="alice-token")
    refused = alice.call_tool("me")
    assert refused["isError"] is True and 'cache_scope="public" cannot be honoured' in text(refused)
    bob = make_client(app, era="modern", token="bob-token").call_tool("me")
    assert bob["isError"] is True and "alice" not in text(bob)
    assert ran == []
