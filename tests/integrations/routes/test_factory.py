"""Route tools in an application factory: one module-level MCP, a new app per ``create_app()``."""

from __future__ import annotations

import typing as t

import pytest
from flask import Flask

from flask_mcp import MCP
from flask_mcp.integrations.routes.expose import expose_routes


def factory(mcp: MCP) -> t.Callable[[str], Flask]:
    """The getting-started pattern: ``mcp`` at module level, routes and exposure in ``create_app``."""

    def create_app(owner: str) -> Flask:
        app = Flask(f"shop_{owner}")
        app.config.update(TESTING=True)

        @app.get("/orders/<int:order_id>")
        def get_order(order_id: int) -> t.Any:
            """Read one order."""
            return {"order": order_id, "app": owner}

        mcp.init_app(app)
        expose_routes(mcp, app, ["get_order"])
        return app

    return create_app


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_each_app_of_a_factory_serves_its_own_routes(make_client: t.Any, era: str) -> None:
    mcp = MCP(name="shop")
    create_app = factory(mcp)
    first, second = create_app("first"), create_app("second")
    for app, owner in ((first, "first"), (second, "second"), (first, "first")):
        client = make_client(app, era=era)
        if era == "handshake":
            client.initialize()
        (tool,) = client.list_tools()
        assert tool["name"] == "get_order" and tool["inputSchema"]["properties"]["order_id"]["type"] == "integer"
        result = client.call_tool("get_order", {"order_id": 7})
        assert result["structuredContent"] == {"order": 7, "app": owner}
        # The route keeps answering HTTP clients of its own app.
        assert app.test_client().get("/orders/3").get_json() == {"order": 3, "app": owner}


def test_an_app_that_did_not_expose_the_route_does_not_run_it(make_client: t.Any) -> None:
    mcp = MCP(name="shop")
    exposing = factory(mcp)("first")
    other = Flask("other")
    other.config.update(TESTING=True)

    @other.get("/orders/<int:order_id>")
    def get_order(order_id: int) -> t.Any:
        return {"order": order_id, "app": "other"}

    mcp.init_app(other)
    refused = make_client(other, era="modern").call_tool("get_order", {"order_id": 1})
    assert refused["isError"] is True
    assert "this app does not expose the route GET /orders/<int:order_id>" in refused["content"][0]["text"]
    served = make_client(exposing, era="modern").call_tool("get_order", {"order_id": 1})
    assert served["structuredContent"]["app"] == "first"


def test_another_route_under_a_taken_name_is_refused_and_nothing_changes() -> None:
    mcp = MCP(name="shop")
    factory(mcp)("first")
    other = Flask("other")

    @other.get("/invoices/<int:order_id>")
    def get_order(order_id: int) -> t.Any:
        return {}

    mcp.init_app(other)
    with pytest.raises(ValueError, match=r"'get_order' is already registered for the route GET /orders/"):
        expose_routes(mcp, other, ["get_order"])
    assert EXPOSED not in other.extensions or not other.extensions[EXPOSED]


def test_the_same_route_with_other_options_is_refused() -> None:
    mcp = MCP(name="shop")
    create_app = factory(mcp)
    app = create_app("first")
    second = create_app("second")
    with pytest.raises(ValueError, match="with other options or schemas"):
        expose_routes(mcp, second, ["get_order"], annotations={"readOnlyHint": True})
    assert expose_routes(mcp, app, ["get_order"]) == ["get_order"]  # the same again: nothing to change


EXPOSED = "flask_mcp.routes"
