"""Tools taking and returning pydantic models, end to end, in both eras: listed, validated, bound, dumped."""

from __future__ import annotations

import datetime
import json
import typing as t

import marshmallow as ma
import pytest
from flask import Flask
from openapi_spec_validator import validate
from pydantic import BaseModel, ConfigDict, Field

from flask_mcp import MCP
from flask_mcp.testing import MCPTestClient


class Tag(BaseModel):
    label: str


class Item(BaseModel):
    name: str
    qty: t.Annotated[int, Field(ge=1)]
    tags: list[Tag] = []


class Receipt(BaseModel):
    item: Item
    at: datetime.datetime


class Node(BaseModel):
    value: int
    children: list[Node] = []


class Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")
    a: int


class InvoiceIn(ma.Schema):
    amount = ma.fields.Integer(required=True)


AT = datetime.datetime(2024, 5, 1, 12, 0, tzinfo=datetime.UTC)


@pytest.fixture
def shop() -> MCP:
    mcp = MCP(name="shop", version="1")
    seen: list[t.Any] = []

    @mcp.tool
    def buy(item: Item, count: t.Annotated[int, Field(ge=1, le=10)] = 1) -> Receipt:
        """A nested model argument beside a constrained one; the model comes back as structured output."""
        seen.append(item)
        return Receipt(item=item, at=AT)

    @mcp.tool(input_schema=Item)
    def stock(name: str, qty: int, tags: list[Tag]) -> dict[str, t.Any]:
        """The model is the whole arguments object, spread into keywords."""
        return {"name": name, "qty": qty, "labels": [tag.label for tag in tags]}

    @mcp.tool(argument_binding="bundle")
    def restock(data: Item) -> str:
        """The model is the whole arguments object, bundled as data=."""
        return f"{type(data).__name__}: {data.qty} x {data.name}"

    @mcp.tool(output_schema=Item)
    def cheapest() -> dict[str, t.Any]:
        return {"name": "pen", "qty": 3}

    @mcp.tool
    def tree(node: Node) -> Node:
        return node

    @mcp.tool(input_schema=Closed)
    def closed(a: int) -> int:
        return a

    mcp.seen = seen  # type: ignore[attr-defined]
    return mcp


@pytest.fixture(params=["handshake", "modern"])
def client(
    request: pytest.FixtureRequest,
    shop: MCP,
    make_app: t.Callable[..., Flask],
    make_client: t.Callable[..., MCPTestClient],
) -> MCPTestClient:
    """A client of either era; every answer is checked against that era's MCP schema."""
    client = make_client(make_app(shop, MCP_STATELESS=request.param == "modern"), era=request.param)
    if request.param == "handshake":
        client.initialize()
    return client


def _listed(client: MCPTestClient) -> dict[str, dict[str, t.Any]]:
    return {tool["name"]: tool for tool in client.list_tools()}


def test_the_listing_carries_pydantic_s_schemas(client: MCPTestClient) -> None:
    tools = _listed(client)
    buy = tools["buy"]["inputSchema"]
    assert buy["type"] == "object" and buy["required"] == ["item"]
    assert buy["properties"]["item"]["properties"]["qty"] == {"minimum": 1, "title": "Qty", "type": "integer"}
    assert buy["properties"]["item"]["properties"]["tags"]["items"] == {"$ref": "#/$defs/Tag"}
    assert set(buy["$defs"]) == {"Tag"}
    assert buy["properties"]["count"] == {"type": "integer", "minimum": 1, "maximum": 10, "default": 1}
    receipt = tools["buy"]["outputSchema"]
    assert receipt["type"] == "object" and receipt["properties"]["at"]["format"] == "date-time"
    for name in ("stock", "restock"):
        assert tools[name]["inputSchema"]["required"] == ["name", "qty"]
    assert tools["tree"]["inputSchema"]["$defs"]["Node"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert tools["tree"]["outputSchema"]["type"] == "object"  # a recursive model's root is written out
    assert tools["closed"]["inputSchema"]["additionalProperties"] is False


def test_a_model_argument_arrives_as_a_model(client: MCPTestClient, shop: MCP) -> None:
    result = client.call_tool("buy", {"item": {"name": "pen", "qty": 2, "tags": [{"label": "blue"}]}})
    assert shop.seen == [Item(name="pen", qty=2, tags=[Tag(label="blue")])]  # type: ignore[attr-defined]
    expected = {"item": {"name": "pen", "qty": 2, "tags": [{"label": "blue"}]}, "at": "2024-05-01T12:00:00Z"}
    assert result["structuredContent"] == expected
    assert json.loads(result["content"][0]["text"]) == expected


def test_constraints_are_enforced_and_worded_like_marshmallow_s(client: MCPTestClient) -> None:
    result = client.call_tool("buy", {"item": {"name": "pen", "qty": 0, "tags": [{}]}, "count": 11})
    assert result["isError"] is True
    assert result["content"][0]["text"] == (
        "Error executing tool: Invalid arguments: item.qty: Input should be greater than or equal to 1; "
        "item.tags.0.label: Field required; count: Input should be less than or equal to 10"
    )


def test_the_error_detail_nests_like_marshmallow_s(
    shop: MCP, make_app: t.Callable[..., Flask], make_client: t.Callable[..., MCPTestClient]
) -> None:
    client = make_client(make_app(shop, MCP_ERROR_FORMAT="json"))
    client.initialize()
    result = client.call_tool("buy", {"item": {"name": "pen", "qty": 0, "tags": [{}]}})
    error = json.loads(result["content"][0]["text"])["error"]
    assert error["type"] == "validation_error"
    assert error["detail"] == {
        "item": {"qty": ["Input should be greater than or equal to 1"], "tags": {"0": {"label": ["Field required"]}}}
    }


def test_a_whole_arguments_model_spreads_or_bundles(client: MCPTestClient) -> None:
    spread = client.call_tool("stock", {"name": "pen", "qty": 2, "tags": [{"label": "x"}]})
    assert spread["structuredContent"] == {"name": "pen", "qty": 2, "labels": ["x"]}
    assert client.call_tool("restock", {"name": "pen", "qty": 4})["content"][0]["text"] == "Item: 4 x pen"
    failed = client.call_tool("restock", {"name": "pen", "qty": 0})
    assert failed["content"][0]["text"].endswith("qty: Input should be greater than or equal to 1")


def test_unknown_arguments_follow_the_model_s_extra_setting(client: MCPTestClient) -> None:
    # pydantic ignores extra names by default, and so does the tool.
    assert client.call_tool("stock", {"name": "pen", "qty": 1, "colour": "red"})["structuredContent"]["qty"] == 1
    refused = client.call_tool("closed", {"a": 1, "b": 2, "c": 3})
    assert refused["content"][0]["text"] == "Error executing tool: Invalid arguments: unknown argument(s): b, c"


def test_an_output_model_validates_and_dumps_a_plain_value(client: MCPTestClient) -> None:
    assert client.call_tool("cheapest")["structuredContent"] == {"name": "pen", "qty": 3, "tags": []}
    assert client.call_tool("tree", {"node": {"value": 1, "children": [{"value": 2}]}})["structuredContent"] == {
        "value": 1,
        "children": [{"value": 2, "children": []}],
    }


def test_rest_calls_validate_and_dump_alike(shop: MCP, make_app: t.Callable[..., Flask]) -> None:
    http = make_app(shop, MCP_STATELESS=True).test_client()
    answer = http.post("/mcp/rest/tools/buy", json={"item": {"name": "pen", "qty": 1}})
    assert answer.get_json() == {
        "result": {"item": {"name": "pen", "qty": 1, "tags": []}, "at": "2024-05-01T12:00:00Z"}
    }
    refused = http.post("/mcp/rest/tools/buy", json={"item": {"name": "pen", "qty": 0}})
    assert (refused.status_code, refused.get_json()) == (
        400,
        {"error": "Invalid arguments: item.qty: Input should be greater than or equal to 1"},
    )


@pytest.mark.parametrize("annotation", [Item, InvoiceIn])
def test_a_data_schema_without_bundle_is_refused(annotation: type) -> None:
    """``data`` holds the validated arguments: annotated with a schema under spread, it would validate nothing."""
    mcp = MCP(name="checks")

    def create(data):  # type: ignore[no-untyped-def]
        return "created"

    create.__annotations__ = {"data": annotation, "return": str}
    with pytest.raises(ValueError, match=rf"data parameter is annotated with {annotation.__name__}.*'bundle'"):
        mcp.tool(create)
    assert mcp.tool(argument_binding="bundle")(create) is create


def test_the_openapi_document_describes_them(shop: MCP, make_app: t.Callable[..., Flask]) -> None:
    document = make_app(shop, MCP_STATELESS=True).test_client().get("/mcp/rest/openapi.json").get_json()
    validate(document)
    schemas = document["components"]["schemas"]
    # apispec knows nothing of pydantic's $defs: the properties come written out.
    assert schemas["buy_arguments"]["properties"]["item"]["properties"]["tags"]["items"]["required"] == ["label"]
    assert schemas["buy_arguments"]["properties"]["count"]["maximum"] == 10
