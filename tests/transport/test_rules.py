"""Rules that match every method but list the served ones (``flask routes``)."""

from __future__ import annotations

import typing as t

import pytest
from flask import Flask
from flask.cli import routes_command

from flask_mcp import MCP
from flask_mcp.transport.rules import ServedMethods


def test_served_methods_contain_every_method_and_list_the_served_ones() -> None:
    methods = ServedMethods(["POST", "OPTIONS"])
    assert "PROPFIND" in methods
    assert sorted(methods) == ["OPTIONS", "POST"]
    assert methods - {"OPTIONS"} == {"POST"}


def _routes(app: Flask) -> dict[str, str]:
    """``flask routes`` as {endpoint: methods column}."""
    output = app.test_cli_runner().invoke(routes_command).output
    rows = [line.split() for line in output.splitlines()[2:] if line.strip()]
    return {row[0]: " ".join(row[1:-1]) for row in rows}


def test_flask_routes_lists_the_methods_of_every_extension_route(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    app = make_app(mcp, MCP_AUTH_TOKENS={"secret": {"subject": "ada"}}, MCP_AUTH_RESOURCE="http://localhost/mcp")
    routes = _routes(app)
    assert routes["mcp.endpoint"] == "DELETE, GET, POST"
    assert routes["mcp.oauth_protected_resource"] == "GET"
    assert routes["mcp.rest_tool"] == "POST"
    assert routes["mcp.rest_docs"] == "GET"
    assert routes["mcp.rest_not_found_path"] == "ANY"
    assert all(methods for endpoint, methods in routes.items()), routes


def test_a_stateless_endpoint_lists_post_only(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    assert _routes(make_app(mcp, MCP_STATELESS=True))["mcp.endpoint"] == "POST"


@pytest.mark.parametrize("method", ["PUT", "PROPFIND"])
def test_methods_not_served_still_get_the_views_json_405(
    mcp: MCP, make_app: t.Callable[..., Flask], method: str
) -> None:
    response = make_app(mcp).test_client().open("/mcp", method=method)
    assert response.status_code == 405
    assert response.is_json
