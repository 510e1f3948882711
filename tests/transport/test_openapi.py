"""The OpenAPI document of the REST routes, and the docs page."""

from __future__ import annotations

import json
import typing as t

import pytest
from flask import Flask
from marshmallow import Schema, fields
from openapi_spec_validator import validate

from flask_mcp import MCP
from flask_mcp.transport.openapi import ERROR_SCHEMA

ERROR_REF = {"$ref": "#/components/schemas/Error"}


class Address(Schema):
    street = fields.String(required=True)


class Customer(Schema):
    name = fields.String(required=True, metadata={"description": "Full name"})
    address = fields.Nested(Address)


class Receipt(Schema):
    total = fields.Integer()


RAW_INPUT = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}


@pytest.fixture
def app(mcp: MCP, make_app: t.Callable[..., Flask]) -> Flask:
    @mcp.tool(input_schema=Customer, title="Create a customer")
    def create_customer(name: str, address: dict[str, str] | None = None) -> Receipt:
        """Create a customer.

        Longer explanation.
        """
        return {"total": 1}  # type: ignore[return-value]

    @mcp.tool(input_schema=Customer)
    def update_customer(name: str, address: dict[str, str] | None = None) -> Receipt:
        """Update a customer."""
        return {"total": 2}  # type: ignore[return-value]

    @mcp.tool(input_schema=RAW_INPUT)
    def search(q: str) -> list[str]:
        return [q]

    @mcp.tool()
    def add(a: int, b: int = 0) -> int:
        """Add two integers."""
        return a + b

    @mcp.resource("notes://{note_id}")
    def note(note_id: str) -> str:
        return note_id

    return make_app(mcp, MCP_STATELESS=True)


@pytest.fixture
def document(app: Flask) -> dict[str, t.Any]:
    response = app.test_client().get("/mcp/rest/openapi.json")
    assert response.status_code == 200
    assert response.mimetype == "application/json"
    return t.cast(dict[str, t.Any], json.loads(response.get_data()))


def tool_operations(document: dict[str, t.Any]) -> dict[str, dict[str, t.Any]]:
    prefix = "/mcp/rest/tools/"
    return {path[len(prefix) :]: item["post"] for path, item in document["paths"].items() if path.startswith(prefix)}


def test_document_is_valid_openapi_31(document: dict[str, t.Any]) -> None:
    assert document["openapi"] == "3.1.0"
    validate(document)


def test_one_operation_per_tool(document: dict[str, t.Any]) -> None:
    operations = tool_operations(document)
    assert set(operations) == {"create_customer", "update_customer", "search", "add"}
    for name, operation in operations.items():
        assert operation["operationId"] == name
    assert operations["create_customer"]["summary"] == "Create a customer"
    assert operations["create_customer"]["description"].startswith("Create a customer.\n\nLonger explanation.")
    assert operations["add"]["summary"] == "Add two integers."
    assert "summary" not in operations["search"]


def test_request_schemas(document: dict[str, t.Any]) -> None:
    operations = tool_operations(document)
    schemas = document["components"]["schemas"]

    def request_schema(name: str) -> dict[str, t.Any]:
        return t.cast(dict[str, t.Any], operations[name]["requestBody"]["content"]["application/json"]["schema"])

    assert request_schema("create_customer") == {"$ref": "#/components/schemas/Customer"}
    assert request_schema("update_customer") == {"$ref": "#/components/schemas/Customer"}
    assert schemas["Customer"]["required"] == ["name"]
    assert schemas["Customer"]["properties"]["name"]["description"] == "Full name"
    assert schemas["Customer"]["properties"]["address"] == {"$ref": "#/components/schemas/Address"}
    assert request_schema("search") == RAW_INPUT  # raw JSON Schema inline
    add_ref = request_schema("add")["$ref"]
    added = schemas[add_ref.rsplit("/", 1)[1]]
    assert added["required"] == ["a"]
    assert set(added["properties"]) == {"a", "b"}


def test_marshmallow_schemas_registered_once(document: dict[str, t.Any]) -> None:
    names = set(document["components"]["schemas"])
    assert {"Customer", "Address", "Receipt", "Error"} <= names
    assert not any(name.startswith(("Customer", "Address", "Receipt")) and name[-1].isdigit() for name in names)


def test_response_schemas(document: dict[str, t.Any]) -> None:
    operations = tool_operations(document)

    def result_schema(name: str) -> dict[str, t.Any]:
        schema = operations[name]["responses"]["200"]["content"]["application/json"]["schema"]
        assert schema["required"] == ["result"]
        return t.cast(dict[str, t.Any], schema["properties"]["result"])

    assert result_schema("create_customer") == {"$ref": "#/components/schemas/Receipt"}
    assert result_schema("add") == {}  # any JSON value


def test_error_component_referenced(document: dict[str, t.Any]) -> None:
    assert document["components"]["schemas"]["Error"] == ERROR_SCHEMA
    read = document["paths"]["/mcp/rest/resources"]["get"]
    for operation in [*tool_operations(document).values(), read]:
        for status in ("400", "404", "500"):
            assert operation["responses"][status]["content"]["application/json"]["schema"] == ERROR_REF


def test_resource_and_mcp_operations(document: dict[str, t.Any]) -> None:
    read = document["paths"]["/mcp/rest/resources"]["get"]
    assert read["parameters"] == [{"name": "uri", "in": "query", "required": True, "schema": {"type": "string"}}]
    mcp_post = document["paths"]["/mcp"]["post"]
    request_schema = mcp_post["requestBody"]["content"]["application/json"]["schema"]
    assert request_schema["properties"]["jsonrpc"] == {"const": "2.0"}
    assert "200" in mcp_post["responses"]


def test_document_cached_and_invalidated(app: Flask, mcp: MCP) -> None:
    client = app.test_client()
    first = client.get("/mcp/rest/openapi.json").get_data()
    assert client.get("/mcp/rest/openapi.json").get_data() == first
    site = app.extensions["mcp"].rest_site
    assert site.document.encoded() is site.document.encoded()  # built once

    @mcp.tool()
    def late(x: int) -> int:
        return x

    second = json.loads(client.get("/mcp/rest/openapi.json").get_data())
    assert "late" not in tool_operations(json.loads(first))
    assert tool_operations(second)["late"]["operationId"] == "late"
    validate(second)


def test_no_resources_no_resource_path(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    mcp.tool(name="one")(lambda: 1)
    app = make_app(mcp, MCP_STATELESS=True)
    document = app.test_client().get("/mcp/rest/openapi.json").get_json()
    assert "/mcp/rest/resources" not in document["paths"]
    validate(document)


def test_public_app_declares_no_security(document: dict[str, t.Any]) -> None:
    assert "securitySchemes" not in document["components"]
    assert "security" not in document
    for item in document["paths"].values():
        for operation in item.values():
            assert "security" not in operation
            assert "401" not in operation["responses"]


def test_openapi_json_post_is_json_405(app: Flask) -> None:
    response = app.test_client().post("/mcp/rest/openapi.json")
    assert response.status_code == 405
    assert response.get_json() == {"error": "Method Not Allowed: POST (allowed: GET, HEAD)"}
