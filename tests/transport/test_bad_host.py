"""A Host header the router cannot use: JSON on the MCP server's paths, the app's own answer elsewhere."""

from __future__ import annotations

import typing as t

import pytest
from flask import Flask, jsonify
from werkzeug.exceptions import BadHost

from flask_mcp import MCP
from flask_mcp.transport.bad_host import MESSAGE

#: werkzeug cannot encode an empty label with IDNA: routing fails before any view runs.
BAD_HOST = "a..b"


@pytest.fixture
def app(make_app: t.Callable[..., Flask], adder: MCP) -> Flask:
    app = make_app(adder, MCP_REST_PREFIX="/api/tools")

    @app.get("/hello")
    def hello() -> str:
        return "hello"

    return app


@pytest.mark.parametrize("method", ["GET", "POST", "DELETE", "OPTIONS", "PUT"])
@pytest.mark.parametrize("path", ["/mcp", "/api/tools/tools/add", "/api/tools/elsewhere", "/api/tools"])
def test_the_mcp_servers_paths_answer_json(app: Flask, method: str, path: str) -> None:
    response = app.test_client().open(
        path, method=method, headers={"Host": BAD_HOST, "Content-Type": "application/json"}, data=b"{}"
    )
    assert response.status_code == 400 and response.content_type == "application/json"
    assert response.get_json()["error"]["message"] == MESSAGE


@pytest.mark.parametrize("path", ["/hello", "/mcp/below", "/mcpx", "/api/toolsx"])
def test_the_apps_own_paths_answer_as_without_flask_mcp(app: Flask, path: str) -> None:
    response = app.test_client().get(path, headers={"Host": BAD_HOST})
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


def test_a_handler_the_app_registered_before_still_answers_its_paths(make_app: t.Callable[..., Flask]) -> None:
    app = Flask("test_app")

    @app.errorhandler(BadHost)
    def handled(error: BadHost) -> t.Any:
        return jsonify(mine=True), 418

    MCP().init_app(app)
    assert app.test_client().get("/hello", headers={"Host": BAD_HOST}).status_code == 418
    assert app.test_client().post("/mcp", headers={"Host": BAD_HOST}).get_json()["error"]["message"] == MESSAGE


def test_an_endpoint_at_the_root_leaves_the_apps_other_paths(make_app: t.Callable[..., Flask]) -> None:
    app = make_app(MCP(), MCP_URL_PREFIX="/")
    assert app.test_client().post("/", headers={"Host": BAD_HOST}).content_type == "application/json"
    response = app.test_client().get("/hello", headers={"Host": BAD_HOST})
    assert response.status_code == 400 and response.content_type.startswith("text/html")


@pytest.mark.parametrize(
    ("path", "ours"),
    [
        ("/tools/add", True),
        ("/openapi.json", True),
        ("/docs", True),
        ("/docs/swagger-ui/index.css", True),
        ("/resources", True),
        ("/hello", False),
        ("/toolsx", False),
        ("/", False),
    ],
)
def test_rest_routes_at_the_root_are_the_only_paths_answered(
    make_app: t.Callable[..., Flask], path: str, ours: bool
) -> None:
    app = make_app(MCP(), MCP_REST_PREFIX="/")
    response = app.test_client().get(path, headers={"Host": BAD_HOST})
    assert response.status_code == 400
    assert (response.content_type == "application/json") is ours
