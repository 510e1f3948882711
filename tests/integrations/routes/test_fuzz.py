"""Property-based tests of route tools: whatever a URL variable holds, the call stays in its own route.

Hypothesis sends any text (and texts built from the pieces that make paths
go elsewhere: ``/``, ``..``, ``?``, ``#``, percent escapes, control
characters) as the URL variables of route tools, exposed with
:func:`~flask_mcp.integrations.routes.expose.expose_routes` and stacked under ``@mcp.tool``, by
several callers, over the MCP endpoint and REST. Whatever they send:

* no view runs but the tool's own, and it sees exactly the value sent;
* the answer is never a 5xx and leaks nothing;
* a cached answer is never another caller's.

The profiles are those of ``tests/test_fuzz.py`` (``HYPOTHESIS_PROFILE=fuzz``
for thousands of examples).
"""

from __future__ import annotations

import json
import typing as t

from flask import Flask, request
from hypothesis import given
from hypothesis import strategies as st

from flask_mcp import MCP
from flask_mcp.integrations.routes.expose import expose_routes
from flask_mcp.testing import MCPTestClient

from ...test_fuzz import assert_sound

READ_ONLY = {"readOnlyHint": True}
TOKENS = {"Bearer alice-token": "alice", "Bearer bob-token": "bob"}
#: Tool -> the endpoint of the view it must run, and the URL variable it takes.
TOOLS = {
    "read_note": ("read_note", "name"),
    "read_file": ("read_file", "path"),
    "stacked_note": ("stacked_note", "name"),
    "stacked_file": ("stacked_file", "path"),
}


class Seen:
    """The views that ran, with the value each was given, since the last :meth:`take`."""

    def __init__(self) -> None:
        self.views: list[tuple[str, str]] = []

    def take(self) -> list[tuple[str, str]]:
        taken, self.views = self.views, []
        return taken


SEEN = Seen()


def answer(endpoint: str, value: str) -> dict[str, t.Any]:
    SEEN.views.append((endpoint, value))
    return {"value": value, "user": TOKENS.get(request.headers.get("Authorization", ""))}


def build_app() -> Flask:
    """Tools reading notes and files; around them the routes a call must never reach."""
    mcp = MCP(name="fuzz-routes")
    app = Flask("fuzz_routes")
    app.config.update(TESTING=True, MCP_SESSION_RATE_LIMIT=None, MCP_RATE_LIMIT=None)

    @app.get("/notes/<name>")
    def read_note(name: str) -> dict[str, t.Any]:
        """Read a note."""
        return answer("read_note", name)

    @app.get("/files/<path:path>")
    def read_file(path: str) -> dict[str, t.Any]:
        """Read a file."""
        return answer("read_file", path)

    @app.get("/stacked/<name>")
    @mcp.tool(cache=60, annotations=READ_ONLY)
    def stacked_note(name: str) -> dict[str, t.Any]:
        """Read a note, stacked."""
        return answer("stacked_note", name)

    @app.get("/stacked-files/<path:path>")
    @mcp.tool(cache=60, annotations=READ_ONLY)
    def stacked_file(path: str) -> dict[str, t.Any]:
        """Read a file, stacked."""
        return answer("stacked_file", path)

    # What no tool may reach: each answers as the others do, so only SEEN tells a wrong turn.
    for rule, endpoint in [
        ("/notes/<name>/purge", "purge"),
        ("/notes/", "index"),
        ("/notes/<a>/<b>", "two_parts"),
        ("/files/", "files_index"),
        ("/admin/<path:rest>", "admin"),
        ("/stacked/<name>/purge", "stacked_purge"),
        ("/stacked/", "stacked_index"),
        ("/", "root"),
    ]:
        app.add_url_rule(rule, endpoint, lambda endpoint=endpoint, **values: answer(endpoint, json.dumps(values)))
    app.add_url_rule("/notes/<name>", "delete_note", lambda name: answer("delete_note", name), methods=["DELETE"])

    mcp.init_app(app)
    expose_routes(mcp, app, ["read_note", "read_file"], cache=60, annotations=READ_ONLY)
    return app


APP = build_app()

# -- strategies ---------------------------------------------------------------------

#: The pieces that make a path go elsewhere, or that a URL must escape.
PIECES = ["x", "/", "//", ".", "..", "?", "#", "&", "=", "%", "%2F", "%2e%2e", "%00", "\\", ";", " ", "purge"]
PIECES += ["admin", "\x00", "\n", "\r", "\t", "\x7f", "\u0085", "\u2028", "ü", "😀", "", "~", "+", "@", ":"]
pieces = st.sampled_from(PIECES)
values = st.text(max_size=30) | st.lists(pieces, max_size=8).map("".join)
callers = st.lists(st.sampled_from([None, "alice-token", "bob-token", "mallory-token"]), min_size=1, max_size=3)


def headers_of(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token is not None else {}


def check_seen(tool: str, value: str, succeeded: bool) -> None:
    """Only the tool's own view ran, given the value sent; and it ran at most once (a hit runs nothing)."""
    endpoint, _ = TOOLS[tool]
    ran = SEEN.take()
    assert all(seen == (endpoint, value) for seen in ran), (tool, value, ran)
    assert len(ran) <= 1 and (succeeded or not ran), (tool, value, ran)


# -- properties ---------------------------------------------------------------------


@given(tool=st.sampled_from(sorted(TOOLS)), value=values, tokens=callers)
def test_a_route_tool_stays_in_its_route_over_mcp(tool: str, value: str, tokens: list[str | None]) -> None:
    variable = TOOLS[tool][1]
    SEEN.take()  # what an earlier example left, had it failed half-way
    for token in tokens:
        client = MCPTestClient(APP, era="modern", headers=headers_of(token))
        body = client.envelope("tools/call", {"name": tool, "arguments": {variable: value}})
        response = client.last_response
        assert response is not None
        assert_sound(response.status_code, response.content_type, response.get_data())
        result = body.get("result")
        assert result is not None, body  # a refusal is the tool's error result, not a protocol error
        succeeded = not result.get("isError")
        if succeeded:
            # Never another caller's answer, from the cache or not.
            expected_user = TOKENS.get(f"Bearer {token}")
            assert result["structuredContent"] == {"value": value, "user": expected_user}, (token, result)
        check_seen(tool, value, succeeded)


@given(tool=st.sampled_from(sorted(TOOLS)), value=values, token=st.sampled_from([None, "alice-token", "bob-token"]))
def test_a_route_tool_stays_in_its_route_over_rest(tool: str, value: str, token: str | None) -> None:
    variable = TOOLS[tool][1]
    SEEN.take()
    response = APP.test_client().post(f"/mcp/rest/tools/{tool}", json={variable: value}, headers=headers_of(token))
    assert_sound(response.status_code, response.content_type, response.get_data())
    succeeded = response.status_code == 200
    if succeeded:
        got = response.get_json()["result"]
        assert got == {"value": value, "user": TOKENS.get(f"Bearer {token}")}, (token, got)
    else:
        assert response.status_code == 400, response.get_data(as_text=True)
    check_seen(tool, value, succeeded)
