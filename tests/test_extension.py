"""The MCP extension: decorators, app setup and Flask integration."""

from __future__ import annotations

import asyncio
import typing as t

import pytest
from flask import Flask, abort, current_app, g, request
from marshmallow import Schema, fields

from flask_mcp import MCP
from flask_mcp.config.settings import DEFAULTS


class Out(Schema):
    total = fields.Integer(required=True)


def test_decorators_work_with_and_without_parentheses(mcp: MCP) -> None:
    @mcp.tool
    def bare(x: int) -> int:
        return x

    @mcp.tool(name="renamed", title="Renamed", description="Custom.", annotations={"readOnlyHint": True})
    def called() -> str:
        """Docstring that is overridden."""
        return "x"

    @mcp.prompt
    def greeting(name: str) -> str:
        """Say hello."""
        return name

    assert bare(3) == 3  # the decorator returns the function unchanged
    assert set(mcp.tools) == {"bare", "renamed"}
    descriptor = mcp.tools["renamed"].descriptor
    assert (descriptor["title"], descriptor["description"], descriptor["annotations"]) == (
        "Renamed",
        "Custom.",
        {"readOnlyHint": True},
    )
    assert mcp.prompts["greeting"].descriptor["description"] == "Say hello."


def test_resource_decorator_splits_static_and_templates(mcp: MCP) -> None:
    @mcp.resource("config://app", mime_type="application/json", size=10, icons=["https://x/icon.png"])
    def config() -> dict[str, int]:
        return {}

    @mcp.resource("items://{item_id}/detail")
    def item(item_id: int) -> str:
        return str(item_id)

    assert mcp.resources["config://app"].descriptor == {
        "uri": "config://app",
        "name": "config",
        "mimeType": "application/json",
        "size": 10,
        "icons": [{"src": "https://x/icon.png"}],
    }
    assert mcp.resource_templates["items://{item_id}/detail"].descriptor["uriTemplate"] == "items://{item_id}/detail"


def test_template_must_fit_the_function(mcp: MCP) -> None:
    with pytest.raises(TypeError, match="variables without a parameter"):

        @mcp.resource("x://{missing}")
        def nothing() -> str:
            return ""

    with pytest.raises(TypeError, match="required parameters without a variable"):

        @mcp.resource("x://{a}")
        def extra(a: str, b: str) -> str:
            return a + b


@pytest.mark.parametrize("name", ["", "has space", "x" * 129, "slash/name"])
def test_invalid_tool_names_are_refused(mcp: MCP, name: str) -> None:
    with pytest.raises(ValueError, match="invalid tool name"):
        mcp.tool(name=name)(lambda: None)


def test_init_app_applies_documented_defaults(mcp: MCP) -> None:
    app = Flask(__name__)
    mcp.init_app(app)
    for key, value in DEFAULTS.items():
        assert app.config[key] == value
    state = app.extensions["mcp"]
    assert state.mcp is mcp and state.sessions is not None
    assert state.server.name == mcp.name == "test-server"


def test_one_extension_serves_several_apps(mcp: MCP, make_app, make_client) -> None:
    @mcp.tool
    def which() -> str:
        return current_app.name

    first, second = make_app(mcp), Flask("second")
    second.config["MCP_URL_PREFIX"] = "/other"
    mcp.init_app(second)
    for app, path in ((first, "/mcp"), (second, "/other")):
        client = make_client(app, path)
        client.initialize()
        assert client.call_tool("which")["content"][0]["text"] == app.name


def test_a_second_extension_on_the_same_app_is_refused(mcp: MCP, make_app) -> None:
    app = make_app(mcp)
    with pytest.raises(RuntimeError, match="already set up"):
        MCP(app)


def test_registering_the_blueprint_directly(mcp: MCP, make_client) -> None:
    app = Flask(__name__)
    app.register_blueprint(mcp.blueprint)
    assert "mcp" in app.extensions
    assert make_client(app).initialize()["serverInfo"]["name"] == "test-server"


def test_server_name_defaults_to_the_app_name(make_client) -> None:
    app = Flask("my_shop")
    MCP(app)
    assert make_client(app).initialize()["serverInfo"]["name"] == "my_shop"


def test_constructor_with_app_and_server_info(make_client) -> None:
    app = Flask(__name__)
    extension = MCP(app, name="shop", version="2.0", title="Shop", instructions="Be nice.")
    assert app.extensions["mcp"].mcp is extension
    result = make_client(app).initialize()
    assert result["serverInfo"] == {"name": "shop", "version": "2.0", "title": "Shop"}
    assert result["instructions"] == "Be nice."


def test_tools_run_in_the_request_context(mcp: MCP, make_app, make_client) -> None:
    app = make_app(mcp)

    @app.before_request
    def tag_request() -> None:
        g.tag = request.headers.get("X-Tag", "none")

    @mcp.tool
    def context() -> dict[str, t.Any]:
        return {"tag": g.tag, "path": request.path, "app": current_app.name}

    client = make_client(app)
    client.initialize()
    response = client.post(
        {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "context"}}, **{"X-Tag": "abc"}
    )
    assert response.get_json()["result"]["structuredContent"] == {"tag": "abc", "path": "/mcp", "app": app.name}


def test_async_tools_run_through_ensure_sync(mcp: MCP, make_app, make_client) -> None:
    @mcp.tool
    async def slow_double(x: int) -> int:
        await asyncio.sleep(0)
        return 2 * x

    client = make_client(make_app(mcp))
    client.initialize()
    assert client.call_tool("slow_double", {"x": 21})["structuredContent"] == {"result": 42}


def test_masking_follows_debug_switched_on_after_init_app(mcp: MCP, make_app, make_client) -> None:
    @mcp.tool
    def crash() -> None:
        raise KeyError("internal-key")

    app = make_app(mcp)
    client = make_client(app)
    client.initialize()
    assert "internal-key" not in client.call_tool("crash")["content"][0]["text"]
    app.debug = True  # what app.run(debug=True) does, after init_app
    assert "internal-key" in client.call_tool("crash")["content"][0]["text"]


def test_output_schema_is_advertised_and_applied(mcp: MCP, make_app, make_client) -> None:
    @mcp.tool(output_schema=Out)
    def total(values: list[int]) -> dict[str, int]:
        return {"total": sum(values), "ignored": 1}

    client = make_client(make_app(mcp))
    client.initialize()
    tool = client.request("tools/list")["tools"][0]
    assert tool["outputSchema"]["properties"] == {"total": {"type": "integer"}}
    assert client.call_tool("total", {"values": [1, 2, 3]})["structuredContent"] == {"total": 6}


@pytest.mark.parametrize(
    ("debug", "mask", "masked"), [(False, None, True), (True, None, False), (True, True, True), (False, False, False)]
)
def test_error_masking_follows_debug_unless_configured(
    mcp: MCP, make_client, debug: bool, mask: bool | None, masked: bool
) -> None:
    @mcp.tool
    def crash() -> None:
        raise KeyError("internal-key")

    app = Flask(__name__)
    app.debug = debug
    app.config["MCP_MASK_ERRORS"] = mask
    mcp.init_app(app)
    client = make_client(app)
    client.initialize()
    text = client.call_tool("crash")["content"][0]["text"]
    assert ("internal-key" in text) is not masked


@pytest.mark.parametrize(
    "register",
    [
        lambda mcp: mcp.tool(nmae="typo"),
        lambda mcp: mcp.prompt(nmae="typo"),
        lambda mcp: mcp.resource("x://a", nmae="typo"),
    ],
    ids=["tool", "prompt", "resource"],
)
def test_unknown_decorator_keywords_are_refused(mcp: MCP, register: t.Callable[[MCP], t.Any]) -> None:
    with pytest.raises(TypeError, match=r"unexpected keyword argument.*nmae"):
        register(mcp)(lambda: "x")


def test_abort_in_handlers_reaches_the_client(mcp: MCP, make_app, make_client) -> None:
    @mcp.tool
    def guarded() -> None:
        abort(403, "members only")

    @mcp.resource("orders://{order_id}")
    def order(order_id: str) -> str:
        abort(404)

    client = make_client(make_app(mcp))
    client.initialize()
    result = client.call_tool("guarded")
    assert result["isError"] is True
    assert result["content"][0]["text"] == "Error executing tool: 403 Forbidden: members only"
    error = client.error("resources/read", {"uri": "orders://7"})
    assert (error["code"], error["data"]) == (-32002, {"uri": "orders://7"})
