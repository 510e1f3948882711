"""A Host header the router cannot use: JSON on the MCP server's paths, the app's own answer elsewhere."""

from __future__ import annotations

import typing as t

import pytest
from flask import Flask, jsonify

from flask_mcp import MCP
from flask_mcp.transport.bad_host import MESSAGE

#: werkzeug cannot encode an empty label with IDNA: routing fails before any view runs.
BAD_HOST = "a..b"


@pytest.fixture
def app(make_app: t.Callable[..., Flask]) -> Flask:
    mcp = MCP()

    @mcp.tool()
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    app = make_app(mcp, MCP_REST_PREFIX="/api/tools")

    @app.get("/hello")
    def hello() -> str:
        return "hello"

    return app


@pytest.mark.parametrize("method", ["GET", "POST", "DELETE", "OPTIONS", "PUT"])
@pytest.mark.parametrize("path", ["/mcp", "/mcp/elsewhere", "/api/tools/tools/add"])
def test_the_mcp_servers_paths_answer_json(app: Flask, method: str, path: str) -> None:
    response = app.test_client().open(
        path, method=method, headers={"Host": BAD_HOST, "Content-Type": "application/json"}, data=b"{}"
    )
    assert response.status_code == 400 and response.content_type == "application/json"
    assert response.get_json()["error"]["message"] == MESSAGE


def test_the_apps_own_paths_answer_as_without_flask_mcp(app: Flask) -> None:
    response = app.test_client().get("/hello", headers={"Host": BAD_HOST})
    assert response.status_code == 400 and response.content_type.startswith("text/html")
    assert app.test_client().get("/hello", headers={"Host": "localhost"}).status_code == 200


@pytest.mark.parametrize("registered", [400, Exception])
def test_the_apps_own_handler_answers_its_own_paths(app: Flask, registered: t.Any) -> None:
    @app.errorhandler(registered)
    def handled(error: t.Any) -> t.Any:
        return jsonify(mine=True), 418

    response = app.test_client().get("/hello", headers={"Host": BAD_HOST})
    assert response.status_code == 418 and response.get_json() == {"mine": True}
    assert app.test_client().get("/mcp", headers={"Host": BAD_HOST}).get_json()["error"]["message"] == MESSAGE


def test_two_servers_share_one_handler(make_app: t.Callable[..., Flask]) -> None:
    app = make_app(MCP())
    MCP(blueprint_name="admin").init_app(app)  # at /admin
    handlers = app.error_handler_spec[None][400]
    assert len(handlers) == 1
    for path in ("/mcp", "/admin"):
        assert app.test_client().post(path, headers={"Host": BAD_HOST}).content_type == "application/json"
