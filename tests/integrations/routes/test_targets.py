"""A route tool runs the one route it was made from: no value of its arguments reaches another view.

The URL of a call is built from the tool's own rule and matched back by the
app's URL map before anything is dispatched; a value that would make it
another rule's URL, another endpoint's, or another argument's is refused
with an invalid-arguments error, on every surface, never a 5xx.
"""

from __future__ import annotations

import typing as t

import pytest
from flask import Flask, request
from werkzeug.middleware.proxy_fix import ProxyFix
from werkzeug.routing import BaseConverter

from flask_mcp import MCP
from flask_mcp.integrations.routes.expose import expose_routes

#: Values a string URL variable may not hold, and why (the message names it).
HOSTILE = {
    "x/purge": "'/'",
    "x/purge/": "'/'",
    "/purge": "'/'",
    "..": "'.' or '..'",
    ".": "'.' or '..'",
    "x?format=admin": "'?'",
    "x#frag": "'#'",
    "x\x00y": "control character",
    "x\ny": "control character",
    "x\ry": "control character",
    "x\x7fy": "control character",
    "x\u0085y": "control character",
    "": "does not lead back",
}


class RawConverter(BaseConverter):
    """A converter that does not quote what it puts in the URL (as some hand-written ones do)."""

    regex = "[^/]+"

    def to_url(self, value: t.Any) -> str:
        return str(value)


class Calls:
    """What each view saw."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, t.Any]] = []


def build(stacked: bool) -> tuple[Flask, Calls]:
    """Notes readable by name; purging, and an admin area, are never tools."""
    mcp = MCP(name="targets")
    app = Flask("targets")
    app.config.update(TESTING=True)
    app.url_map.converters["raw"] = RawConverter
    calls = Calls()

    def read_note(name: str) -> dict[str, t.Any]:
        """Read a note."""
        calls.seen.append(("read_note", name))
        return {"name": name, "args": request.args.to_dict()}

    def read_file(path: str) -> dict[str, t.Any]:
        """Read a file of a note."""
        calls.seen.append(("read_file", path))
        return {"path": path}

    def read_raw(key: str) -> dict[str, t.Any]:
        """Read by a key the converter does not quote."""
        calls.seen.append(("read_raw", key))
        return {"key": key}

    @app.get("/notes/<name>/purge")
    def purge(name: str) -> dict[str, t.Any]:
        calls.seen.append(("purge", name))
        return {"purged": name}

    @app.route("/notes/<name>", methods=["DELETE"])
    def delete_note(name: str) -> dict[str, t.Any]:
        calls.seen.append(("delete_note", name))
        return {"deleted": name}

    @app.get("/admin/<path:rest>")
    def admin(rest: str) -> dict[str, t.Any]:
        calls.seen.append(("admin", rest))
        return {"admin": rest}

    @app.get("/raw/<raw:key>/secret")
    def raw_secret(key: str) -> dict[str, t.Any]:
        calls.seen.append(("raw_secret", key))
        return {"secret": key}

    routes = [("/notes/<name>", read_note), ("/files/<path:path>", read_file), ("/raw/<raw:key>", read_raw)]
    for rule, view in routes:
        if stacked:
            app.get(rule)(mcp.tool(view))
        else:
            app.get(rule)(view)
    mcp.init_app(app)
    if not stacked:
        expose_routes(mcp, app, ["read_note", "read_file", "read_raw"])
    return app, calls


@pytest.fixture(params=[False, True], ids=["expose_routes", "stacked @mcp.tool"])
def target(request: pytest.FixtureRequest) -> tuple[Flask, Calls]:
    return build(request.param)


def refusal(result: dict[str, t.Any]) -> str:
    assert result["isError"] is True, result
    return t.cast(str, result["content"][0]["text"])


@pytest.mark.parametrize("value", list(HOSTILE), ids=repr)
def test_a_value_that_would_leave_the_route_is_refused_before_dispatch(
    target: tuple[Flask, Calls], make_client: t.Any, value: str
) -> None:
    app, calls = target
    message = refusal(make_client(app, era="modern").call_tool("read_note", {"name": value}))
    assert "name: " in message and HOSTILE[value] in message
    assert calls.seen == []  # no view ran: not purge, not read_note


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_the_purge_of_the_issue_never_runs(target: tuple[Flask, Calls], make_client: t.Any, era: str) -> None:
    app, calls = target
    client = make_client(app, era=era)
    if era == "handshake":
        client.initialize()
    refusal(client.call_tool("read_note", {"name": "x/purge"}))
    assert ("purge", "x") not in calls.seen


@pytest.mark.parametrize("value", ["../admin/users", "a/../../admin/users", "a/./b", "a//b", "/admin/x", "a/b\x00"])
def test_a_path_variable_takes_slashes_but_no_dot_segments(
    target: tuple[Flask, Calls], make_client: t.Any, value: str
) -> None:
    app, calls = target
    client = make_client(app, era="modern")
    message = refusal(client.call_tool("read_file", {"path": value}))
    assert "path: may not" in message
    assert calls.seen == []
    assert client.call_tool("read_file", {"path": "a/b/c.txt"})["structuredContent"] == {"path": "a/b/c.txt"}


def test_a_converter_that_does_not_quote_is_caught_by_matching_the_url_back(
    target: tuple[Flask, Calls], make_client: t.Any
) -> None:
    app, calls = target
    client = make_client(app, era="modern")
    # "%2F" is no '/' to the checks, but this converter puts it in the URL as it is: a 404 at most, never
    # another route; and a key that the converter leaves as another route's URL is refused after building.
    message = refusal(client.call_tool("read_raw", {"key": "k%3Fa=1"}))
    assert "does not lead back to" in message and calls.seen == []
    assert client.call_tool("read_raw", {"key": "plain"})["structuredContent"] == {"key": "plain"}


def test_ordinary_values_still_reach_the_route_as_they_are(target: tuple[Flask, Calls], make_client: t.Any) -> None:
    app, calls = target
    client = make_client(app, era="modern")
    for value in ("x%2Fpurge", "ünïcödé", "a b", "...", "x..y", "a;b=c", "%00", "~user", "a+b&c"):
        assert client.call_tool("read_note", {"name": value})["structuredContent"]["name"] == value
    assert [seen for seen in calls.seen if seen[0] != "read_note"] == []


def test_a_refusal_over_rest_is_a_400_not_a_500(target: tuple[Flask, Calls]) -> None:
    app, calls = target
    response = app.test_client().post("/mcp/rest/tools/read_note", json={"name": "x/purge"})
    assert response.status_code == 400, response.get_data(as_text=True)
    assert "'/'" in response.get_json()["error"]
    assert calls.seen == []


# -- who the route sees calling -------------------------------------------------------------------


def addressed_app() -> Flask:
    mcp = MCP(name="addresses")
    app = Flask("addresses")
    app.config.update(TESTING=True)

    @app.get("/whoami")
    def whoami() -> dict[str, t.Any]:
        """The address the app sees."""
        return {"addr": request.remote_addr, "route": request.access_route, "host": request.host}

    mcp.init_app(app)
    expose_routes(mcp, app, ["whoami"])
    return app


def test_the_route_sees_the_callers_address(make_client: t.Any) -> None:
    app = addressed_app()
    client = make_client(app, era="modern")
    client.http.environ_base["REMOTE_ADDR"] = "198.51.100.7"
    seen = client.call_tool("whoami")["structuredContent"]
    assert seen["addr"] == "198.51.100.7" and seen["route"] == ["198.51.100.7"]


def test_behind_proxy_fix_the_route_sees_the_address_the_app_sees_and_no_forged_one(make_client: t.Any) -> None:
    app = addressed_app()
    app.wsgi_app = ProxyFix(app.wsgi_app, x_for=1)  # type: ignore[method-assign]
    client = make_client(app, era="modern", headers={"X-Forwarded-For": "203.0.113.9, 192.0.2.1"})
    client.http.environ_base["REMOTE_ADDR"] = "10.0.0.1"  # the proxy
    seen = client.call_tool("whoami")["structuredContent"]
    # ProxyFix trusts one hop: the address the proxy saw, not the one the caller wrote first.
    assert seen["addr"] == "192.0.2.1" and seen["route"] == ["192.0.2.1"]


def test_a_per_address_limit_counts_each_caller_apart(make_client: t.Any) -> None:
    """What Flask-Limiter's ``get_remote_address`` does: one budget per address, not one for every MCP caller."""
    mcp = MCP(name="limited")
    app = Flask("limited")
    app.config.update(TESTING=True)
    used: dict[str | None, int] = {}

    @app.get("/quote")
    def quote() -> t.Any:
        """One quote per address."""
        used[request.remote_addr] = used.get(request.remote_addr, 0) + 1
        if used[request.remote_addr] > 1:
            return {"message": "too many requests"}, 429
        return {"quote": "carpe diem"}

    mcp.init_app(app)
    expose_routes(mcp, app, ["quote"])
    results = []
    for address in ("198.51.100.1", "198.51.100.2", "198.51.100.1"):
        client = make_client(app, era="modern")
        client.http.environ_base["REMOTE_ADDR"] = address
        results.append(client.call_tool("quote").get("isError", False))
    assert results == [False, False, True]
    assert used == {"198.51.100.1": 2, "198.51.100.2": 1}
