"""``@mcp.tool(input_schema=...)`` stacked on a route: the URL's variables are arguments beside the schema's.

Whichever decorator runs first, on an app's route or a blueprint's, whether
the routes exist when the app is set up or come later, and for every app of
a factory sharing one module-level ``MCP``.
"""

from __future__ import annotations

import logging
import typing as t
import uuid

import marshmallow as ma
import pytest
from flask import Blueprint, Flask, current_app, request
from marshmallow import fields
from werkzeug.routing import BaseConverter

from flask_mcp import MCP
from flask_mcp.routes import expose_routes


class OrderIn(ma.Schema):
    item = fields.String(required=True)
    quantity = fields.Integer(load_default=1)


#: The merged ``inputSchema`` of ``create_order`` on ``/orders/<int:customer>``.
ORDER_SCHEMA = {
    "type": "object",
    "properties": {
        "customer": {
            "type": "integer",
            "minimum": 0,
            "description": "The customer part of the URL /orders/<int:customer>.",
        },
        "item": {"type": "string"},
        "quantity": {"type": "integer", "default": 1},
    },
    "required": ["customer", "item"],
    "additionalProperties": False,
}


class Shop:
    """An app (or blueprint) with ``create_order`` stacked on ``POST /orders/<int:customer>``."""

    def __init__(self, tool_above: bool, blueprint: bool, routes_first: bool) -> None:
        self.mcp = MCP(name="shop")
        self.app = Flask("shop")
        self.app.config.update(TESTING=True)
        self.seen: list[dict[str, t.Any]] = []
        if not routes_first:
            self.mcp.init_app(self.app)  # the routes come after: found when first listed or called
        target: Flask | Blueprint = Blueprint("orders", __name__) if blueprint else self.app
        seen = self.seen

        def create_order(customer: int) -> dict[str, t.Any]:
            """Order an item for a customer."""
            seen.append({"customer": customer})
            return {"customer": customer, "type": type(customer).__name__, "order": request.get_json()}

        route, tool = target.post("/orders/<int:customer>"), self.mcp.tool(input_schema=OrderIn)
        if tool_above:
            tool(route(create_order))
        else:
            route(tool(create_order))
        if blueprint:
            self.app.register_blueprint(t.cast(Blueprint, target))
        if routes_first:
            self.mcp.init_app(self.app)


@pytest.fixture(
    params=[
        (tool_above, blueprint, routes_first)
        for tool_above in (True, False)
        for blueprint in (False, True)
        for routes_first in (True, False)
    ],
    ids=lambda p: "-".join(
        [
            "tool above route" if p[0] else "route above tool",
            "blueprint" if p[1] else "app",
            "init_app after routes" if p[2] else "init_app before routes",
        ]
    ),
)
def shop(request: pytest.FixtureRequest) -> Shop:
    return Shop(*request.param)


def connect(make_client: t.Any, app: Flask, era: str) -> t.Any:
    client = make_client(app, era=era)
    if era == "handshake":
        client.initialize()
    return client


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_the_url_variables_and_the_schema_make_one_input_schema(shop: Shop, make_client: t.Any, era: str) -> None:
    (tool,) = connect(make_client, shop.app, era).list_tools()  # each envelope checked by the official schema
    assert tool["name"] == "create_order"
    assert tool["inputSchema"] == ORDER_SCHEMA


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_a_call_reaches_the_view_with_the_path_typed_and_the_rest_as_the_body(
    shop: Shop, make_client: t.Any, era: str
) -> None:
    client = connect(make_client, shop.app, era)
    result = client.call_tool("create_order", {"customer": 7, "item": "tea"})
    assert result["structuredContent"] == {"customer": 7, "type": "int", "order": {"item": "tea", "quantity": 1}}
    # The route still answers HTTP clients, and the REST surface calls the same route.
    http = shop.app.test_client().post("/orders/3", json={"item": "jam"})
    assert http.get_json() == {"customer": 3, "type": "int", "order": {"item": "jam"}}
    rest = shop.app.test_client().post("/mcp/rest/tools/create_order", json={"customer": 4, "item": "oat"})
    assert rest.get_json()["result"]["order"] == {"item": "oat", "quantity": 1}


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("seven", "Not a valid integer"),
        ("7", "Not a valid integer"),
        (7.5, "Not a valid integer"),
        (-1, "greater than or equal to 0"),
        (None, "Field may not be null"),
        ("7/../admin", "Not a valid integer"),
    ],
    ids=repr,
)
@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_a_bad_path_value_is_a_clear_tool_error(
    shop: Shop, make_client: t.Any, era: str, value: t.Any, why: str
) -> None:
    client = connect(make_client, shop.app, era)
    result = client.call_tool("create_order", {"customer": value, "item": "tea"})
    assert result["isError"] is True
    assert "customer" in result["content"][0]["text"] and why in result["content"][0]["text"]
    missing = client.call_tool("create_order", {"item": "tea"})
    assert missing["isError"] is True and "customer: Missing data for required field" in missing["content"][0]["text"]
    both = client.call_tool("create_order", {"customer": "x", "quantity": "many"})
    assert all(name in both["content"][0]["text"] for name in ("customer", "item", "quantity"))
    assert shop.seen == []  # the view never ran


def test_a_bad_path_value_over_rest_is_a_400(shop: Shop) -> None:
    response = shop.app.test_client().post("/mcp/rest/tools/create_order", json={"customer": -3, "item": "tea"})
    assert response.status_code == 400 and "customer" in response.get_json()["error"]
    assert shop.seen == []


# -- the app comes later: a module-level MCP and an application factory ------------------------------


def shop_factory() -> tuple[MCP, t.Callable[[str], Flask]]:
    """The getting-started layout: ``mcp`` and the blueprint at module level, apps made by ``create_app``."""
    mcp = MCP(name="shop")
    orders = Blueprint("orders", __name__, url_prefix="/api")

    @orders.post("/orders/<int:customer>")
    @mcp.tool(input_schema=OrderIn)
    def create_order(customer: int) -> dict[str, t.Any]:
        """Order an item for a customer."""
        return {"customer": customer, "app": current_app.name, "order": request.get_json()}

    def create_app(name: str) -> Flask:
        app = Flask(name)
        app.config.update(TESTING=True)
        app.register_blueprint(orders)
        mcp.init_app(app)
        return app

    return mcp, create_app


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_every_app_of_a_factory_serves_the_merged_tool(make_client: t.Any, era: str) -> None:
    mcp, create_app = shop_factory()
    # Before any app: nothing tells the URL yet, and the schema is the tool's own.
    assert set(mcp.tools["create_order"].descriptor["inputSchema"]["properties"]) == {"item", "quantity"}
    first, second = create_app("first"), create_app("second")
    for app in (first, second, first):
        client = connect(make_client, app, era)
        (tool,) = client.list_tools()
        assert tool["inputSchema"]["required"] == ["customer", "item"]
        assert tool["inputSchema"]["properties"]["customer"]["description"].endswith("/api/orders/<int:customer>.")
        result = client.call_tool("create_order", {"customer": 5, "item": "tea"})
        assert result["structuredContent"] == {"customer": 5, "app": app.name, "order": {"item": "tea", "quantity": 1}}


def test_a_listing_made_before_the_route_was_known_is_made_again(make_client: t.Any) -> None:
    """One MCP on two apps, set up before their routes; the one without the route lists first."""
    mcp = MCP(name="shop")
    orders = Blueprint("orders", __name__)

    @orders.post("/orders/<int:customer>")
    @mcp.tool(input_schema=OrderIn)
    def create_order(customer: int) -> dict[str, t.Any]:
        return {"customer": customer}

    bare, shop = Flask("bare"), Flask("shop")
    for app in (bare, shop):
        app.config.update(TESTING=True)
        mcp.init_app(app)
    shop.register_blueprint(orders)  # after init_app: known only when listed or called
    (before,) = make_client(bare, era="modern").list_tools()
    assert "customer" not in before["inputSchema"]["properties"]  # nothing routes to it there (yet)
    for app in (shop, bare):
        (tool,) = make_client(app, era="modern").list_tools()
        assert tool["inputSchema"]["required"] == ["customer", "item"]


# -- other methods, bindings and schemas -------------------------------------------------------------


class OrdersQuery(ma.Schema):
    status = fields.String(load_default="open")
    tags = fields.List(fields.String())


def test_a_get_route_sends_the_rest_as_the_query_string(make_client: t.Any) -> None:
    mcp = MCP(name="query")
    app = Flask("query")
    app.config.update(TESTING=True)

    @app.get("/customers/<int:customer>/orders")
    @mcp.tool(input_schema=OrdersQuery)
    def list_orders(customer: int) -> dict[str, t.Any]:
        return {"customer": customer, "args": request.args.to_dict(flat=False)}

    mcp.init_app(app)
    client = make_client(app, era="modern")
    (tool,) = client.list_tools()
    assert list(tool["inputSchema"]["properties"]) == ["customer", "status", "tags"]
    result = client.call_tool("list_orders", {"customer": 3, "tags": ["a", "b"]})
    assert result["structuredContent"] == {"customer": 3, "args": {"status": ["open"], "tags": ["a", "b"]}}


def test_a_bundled_tool_on_a_route_is_merged_alike(make_client: t.Any) -> None:
    mcp = MCP(name="bundle")
    app = Flask("bundle")
    app.config.update(TESTING=True)

    @app.post("/orders/<int:customer>")
    @mcp.tool(input_schema=OrderIn, argument_binding="bundle")
    def create_order(customer: int, data: dict[str, t.Any] | None = None) -> dict[str, t.Any]:
        return {"customer": customer, "order": request.get_json()}

    mcp.init_app(app)
    client = make_client(app, era="modern")
    assert client.list_tools()[0]["inputSchema"]["required"] == ["customer", "item"]
    assert client.call_tool("create_order", {"customer": 2, "item": "x"})["structuredContent"] == {
        "customer": 2,
        "order": {"item": "x", "quantity": 1},
    }


def test_a_pydantic_model_input_schema_is_merged(make_client: t.Any) -> None:
    pydantic = pytest.importorskip("pydantic")

    class Order(pydantic.BaseModel):  # type: ignore[name-defined,misc]
        item: str
        quantity: int = 1

    mcp = MCP(name="pydantic")
    app = Flask("pydantic")
    app.config.update(TESTING=True)

    @app.post("/orders/<int:customer>")
    @mcp.tool(input_schema=Order)
    def create_order(customer: int) -> dict[str, t.Any]:
        return {"customer": customer, "order": request.get_json()}

    mcp.init_app(app)
    client = make_client(app, era="modern")
    (tool,) = client.list_tools()
    assert tool["inputSchema"]["required"] == ["customer", "item"]
    assert client.call_tool("create_order", {"customer": 2, "item": "x"})["structuredContent"] == {
        "customer": 2,
        "order": {"item": "x", "quantity": 1},
    }
    refused = client.call_tool("create_order", {"customer": -2, "item": 5})
    assert "customer" in refused["content"][0]["text"] and "item" in refused["content"][0]["text"]


def test_the_rest_page_describes_each_merged_tool_apart() -> None:
    mcp = MCP(name="documented")
    app = Flask("documented")
    app.config.update(TESTING=True)

    @app.post("/orders/<int:customer>")
    @mcp.tool(input_schema=OrderIn)
    def create_order(customer: int) -> dict[str, t.Any]:
        return {}

    @app.put("/shops/<uuid:shop>/orders")
    @mcp.tool(input_schema=OrderIn)
    def stock_order(shop: uuid.UUID) -> dict[str, t.Any]:
        return {}

    mcp.init_app(app)
    document = app.test_client().get("/mcp/rest/openapi.json").get_json()

    def request_schema(tool: str) -> dict[str, t.Any]:
        body = document["paths"][f"/mcp/rest/tools/{tool}"]["post"]["requestBody"]
        name = body["content"]["application/json"]["schema"]["$ref"].rpartition("/")[2]
        return t.cast(dict[str, t.Any], document["components"]["schemas"][name])

    assert set(request_schema("create_order")["properties"]) == {"customer", "item", "quantity"}
    assert set(request_schema("stock_order")["properties"]) == {"shop", "item", "quantity"}
    assert set(request_schema("stock_order")["required"]) == {"item", "shop"}


# -- what each converter makes of its variable ------------------------------------------------------


class CodeConverter(BaseConverter):
    """A converter of the app's own."""

    regex = "[A-Z]{3}"


def test_each_converter_types_its_variable(make_client: t.Any) -> None:
    mcp = MCP(name="converters")
    app = Flask("converters")
    app.config.update(TESTING=True)
    app.url_map.converters["code"] = CodeConverter
    rule = (
        "/<int(signed=True, max=5):step>/<float:ratio>/<uuid:key>/<any(draft, sent):box>/<name>/<code:code>/<path:rest>"
    )

    @app.put(rule)
    @mcp.tool(input_schema={"note": fields.String(required=True)})
    def put_everything(**values: t.Any) -> dict[str, t.Any]:
        return {name: [type(value).__name__, str(value)] for name, value in values.items()}

    mcp.init_app(app)
    client = make_client(app, era="modern")
    (tool,) = client.list_tools()
    properties = {
        name: {key: value for key, value in prop.items() if key != "description"}
        for name, prop in tool["inputSchema"]["properties"].items()
    }
    assert properties == {
        "box": {"type": "string", "enum": ["draft", "sent"]},
        "code": {"type": "string"},
        "key": {"type": "string", "format": "uuid"},
        "name": {"type": "string"},
        "ratio": {"type": "number", "minimum": 0},
        "rest": {"type": "string"},
        "step": {"type": "integer", "maximum": 5},
        "note": {"type": "string"},
    }
    key = uuid.uuid4()
    arguments = {
        "step": -2,
        "ratio": 0.5,
        "key": str(key),
        "box": "sent",
        "name": "n",
        "code": "ABC",
        "rest": "a/b",
        "note": "hi",
    }
    assert client.call_tool("put_everything", arguments)["structuredContent"] == {
        "step": ["int", "-2"],
        "ratio": ["float", "0.5"],
        "key": ["UUID", str(key)],
        "box": ["str", "sent"],
        "name": ["str", "n"],
        "code": ["str", "ABC"],
        "rest": ["str", "a/b"],
    }
    for name, bad in (("step", 6), ("box", "trash"), ("key", "not-a-uuid"), ("ratio", -1.0)):
        refused = client.call_tool("put_everything", {**arguments, name: bad})
        assert refused["isError"] is True and f"{name}:" in refused["content"][0]["text"]


def test_a_json_schema_input_schema_is_merged_too(make_client: t.Any) -> None:
    mcp = MCP(name="raw")
    app = Flask("raw")
    app.config.update(TESTING=True)

    @app.post("/orders/<int:customer>")
    @mcp.tool(input_schema={"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]})
    def create_order(customer: int) -> dict[str, t.Any]:
        return {"customer": customer, "order": request.get_json()}

    mcp.init_app(app)
    client = make_client(app, era="modern")
    (tool,) = client.list_tools()
    assert tool["inputSchema"]["required"] == ["customer", "item"]
    assert client.call_tool("create_order", {"customer": 1, "item": "x"})["structuredContent"] == {
        "customer": 1,
        "order": {"item": "x"},
    }
    assert client.call_tool("create_order", {"customer": "one", "item": "x"})["isError"] is True


# -- what is refused -------------------------------------------------------------------------------


class Clashing(ma.Schema):
    customer = fields.String(required=True)
    item = fields.String(required=True)


def test_a_variable_the_schema_declares_too_is_refused_when_the_app_is_set_up() -> None:
    mcp = MCP(name="clash")
    app = Flask("clash")

    @app.post("/orders/<int:customer>")
    @mcp.tool(input_schema=Clashing)
    def create_order(customer: int) -> dict[str, t.Any]:
        return {}

    with pytest.raises(ValueError, match=r"'customer' is both a variable of the URL /orders/<int:customer>"):
        mcp.init_app(app)


def test_a_variable_the_schema_declares_too_found_later_answers_every_call(
    make_client: t.Any, caplog: pytest.LogCaptureFixture
) -> None:
    mcp = MCP(name="clash")
    app = Flask("clash")
    app.config.update(TESTING=True)
    mcp.init_app(app)

    @app.post("/orders/<int:customer>")
    @mcp.tool(input_schema=Clashing)
    def create_order(customer: int) -> dict[str, t.Any]:
        raise AssertionError("never runs")

    client = make_client(app, era="modern")
    with caplog.at_level(logging.ERROR, logger="flask_mcp"):
        assert [tool["name"] for tool in client.list_tools()] == ["create_order"]
    assert "'customer' is both a variable of the URL" in caplog.text
    for arguments in ({"customer": "1", "item": "x"}, {}):
        refused = client.call_tool("create_order", arguments)
        assert refused["isError"] is True
        assert "take it out of the input schema" in refused["content"][0]["text"]


def test_a_parameter_neither_the_url_nor_the_schema_supplies_is_refused() -> None:
    mcp = MCP(name="missing")
    app = Flask("missing")

    @app.post("/orders/<int:customer>")
    @mcp.tool(input_schema=OrderIn)
    def create_order(customer: int, shop: str) -> dict[str, t.Any]:
        return {}

    with pytest.raises(ValueError, match=r"parameter 'shop' is required, but nothing supplies it \(neither"):
        mcp.init_app(app)


def test_a_url_variable_with_a_reserved_name_is_refused() -> None:
    mcp = MCP(name="reserved")
    app = Flask("reserved")

    @app.post("/users/<user>")
    @mcp.tool(input_schema=OrderIn)
    def order_for(**values: t.Any) -> dict[str, t.Any]:
        return {}

    with pytest.raises(ValueError, match=r"variable 'user' of the URL /users/<user> \(order_for\) has a name"):
        mcp.init_app(app)


def test_a_function_no_route_supplies_is_refused_when_the_app_is_set_up() -> None:
    mcp = MCP(name="plain")

    @mcp.tool(input_schema=OrderIn)
    def create_order(customer: int, item: str, quantity: int) -> dict[str, t.Any]:
        raise AssertionError("never runs")

    app = Flask("plain")
    with pytest.raises(ValueError) as refused:
        mcp.init_app(app)
    message = str(refused.value)
    assert "tool 'create_order': parameter 'customer' is required, but nothing supplies it" in message
    assert "the function is the view of no route of the app" in message
    assert "give it a default, declare it in the input schema, or supply it with a kwargs= provider" in message


def app_whose_blueprint_comes_later(name: str) -> Flask:
    """An app set up before the blueprint whose view ``create_order`` is: a parameter nothing supplies."""
    mcp = MCP(name=name)
    orders = Blueprint(f"{name}_orders", __name__)

    @orders.post("/orders")
    @mcp.tool(input_schema=OrderIn)
    def create_order(customer: int, item: str, quantity: int) -> dict[str, t.Any]:
        raise AssertionError("never runs")

    app = Flask(name)
    app.config.update(TESTING=True)
    mcp.init_app(app)  # the function is a blueprint's view: nothing said yet
    app.register_blueprint(orders)
    return app


def test_a_function_a_later_blueprint_routes_is_checked_at_the_first_request(
    make_client: t.Any, caplog: pytest.LogCaptureFixture
) -> None:
    """init_app cannot know yet: the blueprint registered after it routes the function, or does not."""
    client = make_client(app_whose_blueprint_comes_later("later"), era="modern")
    with caplog.at_level(logging.ERROR, logger="flask_mcp"):
        client.list_tools()
    logged = "parameter 'customer' is required, but nothing supplies it (neither the input schema nor the URL /orders"
    assert logged in caplog.text
    refused = client.call_tool("create_order", {"item": "tea"})
    assert refused["isError"] is True
    assert "parameter 'customer' is required, but nothing supplies it" in refused["content"][0]["text"]


def test_inspect_shows_a_parameter_nothing_supplies() -> None:
    result = app_whose_blueprint_comes_later("inspected").test_cli_runner().invoke(args=["mcp", "inspect"])
    assert result.exit_code == 0, result.output
    assert "Problems (1)" in result.stderr
    assert "tool 'create_order': parameter 'customer' is required, but nothing supplies it" in result.stderr


def test_a_tool_without_input_schema_types_its_url_variables_by_their_converters(make_client: t.Any) -> None:
    """Typed by the function's hints, a URL variable is still the converter's: the schema expose_routes gives."""
    mcp = MCP(name="hints")
    app = Flask("hints")
    app.config.update(TESTING=True)

    @app.get("/notes/<int:note_id>")
    @mcp.tool
    def read_note(note_id: int) -> dict[str, t.Any]:
        return {"id": note_id}

    exposed = MCP(name="exposed", blueprint_name="exposed_mcp")
    expose_routes(exposed, app, ["read_note"])
    mcp.init_app(app)
    exposed.init_app(app)
    client = make_client(app, era="modern")
    (tool,) = client.list_tools()
    (exposed_tool,) = make_client(app, "/exposed_mcp", era="modern").list_tools()
    assert tool["inputSchema"]["properties"] == exposed_tool["inputSchema"]["properties"]
    assert tool["inputSchema"]["properties"]["note_id"]["minimum"] == 0
    assert client.call_tool("read_note", {"note_id": 2})["structuredContent"] == {"id": 2}
    negative = client.call_tool("read_note", {"note_id": -1})
    assert negative["isError"] is True
    assert negative["content"][0]["text"].endswith("Invalid arguments: note_id: Must be greater than or equal to 0.")
