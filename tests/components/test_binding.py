"""Argument binding, kwargs providers, reserved names and unknown-argument policies."""

from __future__ import annotations

import json
import typing as t

import marshmallow as ma
import pytest
from flask import Flask, request

from flask_mcp import MCP, ArgumentBinding, Context, Principal, UnknownArguments
from flask_mcp.components.binding import MAX_LISTED_UNKNOWN, RESERVED_NAMES
from flask_mcp.core.client import ClientState
from flask_mcp.core.direct_calls import DirectCallFailed, call_tool_json
from flask_mcp.protocol import jsonrpc
from flask_mcp.testing import MCPTestClient


class InvoiceSchema(ma.Schema):
    amount = ma.fields.Integer(required=True)
    currency = ma.fields.String(load_default="EUR")


def _client(mcp: MCP, make_app: t.Callable[..., Flask], make_client: t.Callable[..., MCPTestClient]) -> MCPTestClient:
    client = make_client(make_app(mcp))
    client.initialize()
    return client


def _tool(client: MCPTestClient, name: str) -> dict[str, t.Any]:
    return next(tool for tool in client.list_tools() if tool["name"] == name)


def test_spread_is_the_default(mcp: MCP, make_app: t.Any, make_client: t.Any) -> None:
    @mcp.tool
    def add(a: int, b: int = 2) -> int:
        return a + b

    result = _client(mcp, make_app, make_client).call_tool("add", {"a": 40})
    assert result["structuredContent"] == {"result": 42}


@pytest.mark.parametrize("binding", [ArgumentBinding.BUNDLE, "bundle"])
def test_bundle_passes_one_data_dict(mcp: MCP, make_app: t.Any, make_client: t.Any, binding: t.Any) -> None:
    seen: list[t.Any] = []

    @mcp.tool(argument_binding=binding, input_schema=InvoiceSchema)
    def create(data: dict[str, t.Any]) -> dict[str, t.Any]:
        seen.append(data)
        return {"created": data["amount"]}

    client = _client(mcp, make_app, make_client)
    assert client.call_tool("create", {"amount": 5})["structuredContent"] == {"created": 5}
    assert seen == [{"amount": 5, "currency": "EUR"}]
    assert set(_tool(client, "create")["inputSchema"]["properties"]) == {"amount", "currency"}


def test_bundle_takes_the_schema_from_the_data_annotation(mcp: MCP, make_app: t.Any, make_client: t.Any) -> None:
    @mcp.tool(argument_binding="bundle")
    def create(data: InvoiceSchema) -> str:
        return f"{data['amount']} {data['currency']}"  # type: ignore[index]

    client = _client(mcp, make_app, make_client)
    assert _tool(client, "create")["inputSchema"]["required"] == ["amount"]
    assert client.call_tool("create", {"amount": 3})["content"][0]["text"] == "3 EUR"


def test_bundle_without_a_schema_is_refused(mcp: MCP) -> None:
    with pytest.raises(ValueError, match=r"bundle.*needs input_schema"):

        @mcp.tool(argument_binding="bundle")
        def create(data: dict[str, t.Any]) -> None: ...


def test_bad_binding_value_names_the_choices(mcp: MCP) -> None:
    with pytest.raises(ValueError, match="argument_binding must be one of 'spread', 'bundle', not 'merge'"):

        @mcp.tool(argument_binding="merge")
        def f() -> None: ...


@pytest.mark.parametrize(
    ("precedence", "expected"), [(None, "t-provider"), ("provider", "t-provider"), ("caller", "t-caller")]
)
def test_kwargs_provider_and_precedence(
    mcp: MCP, make_app: t.Any, make_client: t.Any, precedence: str | None, expected: str
) -> None:
    contexts: list[t.Any] = []

    def with_tenant(context: Context) -> dict[str, t.Any]:
        contexts.append(context)
        return {"tenant": "t-provider", "region": request.headers.get("X-Region", "none")}

    options: dict[str, t.Any] = {"kwargs": with_tenant}
    if precedence is not None:
        options["kwargs_precedence"] = precedence

    @mcp.tool(**options)
    def whoami(tenant: str = "", region: str = "") -> str:
        return f"{tenant}/{region}"

    client = _client(mcp, make_app, make_client)
    result = client.call_tool("whoami", {"tenant": "t-caller"})
    assert result["content"][0]["text"] == f"{expected}/none"
    assert isinstance(contexts[0], Context)


def test_provider_must_be_callable(mcp: MCP) -> None:
    with pytest.raises(TypeError, match="kwargs must be a callable"):
        mcp.tool(kwargs={"tenant": 1}, name="t")(lambda: None)  # type: ignore[typeddict-item]


@pytest.mark.parametrize("name", sorted(RESERVED_NAMES))
def test_reserved_names_cannot_be_declared_arguments(mcp: MCP, name: str) -> None:
    schema = ma.Schema.from_dict({name: ma.fields.String()})
    with pytest.raises(ValueError, match=f"argument name\\(s\\) {name} are reserved"):
        mcp.tool(input_schema=schema, name="t")(lambda **kwargs: None)


def test_seed_parameters_are_filled_by_the_server(mcp: MCP, make_app: t.Any) -> None:
    seen: dict[str, t.Any] = {}

    @mcp.tool
    def inspect_seeds(
        x: int, request: t.Any = None, user: t.Any = None, data: t.Any = None, context: t.Any = None
    ) -> str:
        seen.update(request=request, user=user, data=data, context=context)
        return "ok"

    app = make_app(mcp)
    state = app.extensions["mcp"]
    principal = Principal("alice", frozenset({"read"}))
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "inspect_seeds", "arguments": {"x": 1}},
    }
    from flask_mcp.protocol import jsonrpc

    with app.test_request_context("/mcp", method="POST"):
        response = state.server.handle(jsonrpc.parse_message(message), ClientState(), principal=principal)
        current = request._get_current_object()  # type: ignore[attr-defined]
    assert response["result"]["content"][0]["text"] == "ok"
    assert set(_schema_properties(state, "inspect_seeds")) == {"x"}
    assert seen["request"] is current
    assert seen["user"] is principal
    assert seen["data"] == {"x": 1}
    assert isinstance(seen["context"], Context)


def _schema_properties(state: t.Any, name: str) -> dict[str, t.Any]:
    return t.cast(dict[str, t.Any], state.server.registry.tools[name].descriptor["inputSchema"]["properties"])


def test_client_cannot_override_seeds_through_passthrough(mcp: MCP, make_app: t.Any, make_client: t.Any) -> None:
    @mcp.tool(unknown_arguments="passthrough")
    def echo(x: int, **extra: t.Any) -> dict[str, t.Any]:
        return extra

    result = _client(mcp, make_app, make_client).call_tool(
        "echo", {"x": 1, "user": "root", "request": "forged", "context": 1, "data": 2, "note": "kept"}
    )
    assert result["structuredContent"] == {"note": "kept"}


def test_reject_lists_unknown_names_sorted(mcp: MCP, make_app: t.Any, make_client: t.Any) -> None:
    @mcp.tool
    def add(a: int) -> int:
        return a

    client = _client(mcp, make_app, make_client)
    assert _tool(client, "add")["inputSchema"]["additionalProperties"] is False
    result = client.call_tool("add", {"zeta": 1, "a": "x", "beta": 2})
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert text == "Error executing tool: Invalid arguments: unknown argument(s): beta, zeta; a: Not a valid integer."


@pytest.mark.parametrize("policy", [UnknownArguments.PASSTHROUGH, "ignore"])
def test_lenient_policies_advertise_additional_properties(
    mcp: MCP, make_app: t.Any, make_client: t.Any, policy: t.Any
) -> None:
    @mcp.tool(unknown_arguments=policy, argument_binding="bundle", input_schema=InvoiceSchema)
    def create(data: dict[str, t.Any]) -> dict[str, t.Any]:
        return data

    client = _client(mcp, make_app, make_client)
    assert _tool(client, "create")["inputSchema"]["additionalProperties"] is True
    result = client.call_tool("create", {"amount": 1, "memo": "hi"})
    expected = {"amount": 1, "currency": "EUR"}
    if UnknownArguments(policy) is UnknownArguments.PASSTHROUGH:
        expected["memo"] = "hi"
    assert result["structuredContent"] == expected


def test_passthrough_with_spread_needs_var_keywords(mcp: MCP) -> None:
    with pytest.raises(ValueError, match=r"passthrough.*\*\*kwargs"):

        @mcp.tool(unknown_arguments="passthrough")
        def f(a: int) -> None: ...


def test_raw_json_schema_follows_an_explicit_policy(mcp: MCP, make_app: t.Any, make_client: t.Any) -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}

    @mcp.tool(input_schema=schema, unknown_arguments="reject")
    def search(q: str) -> str:
        return q

    client = _client(mcp, make_app, make_client)
    assert _tool(client, "search")["inputSchema"]["additionalProperties"] is False
    text = client.call_tool("search", {"q": 1, "z": 0})["content"][0]["text"]
    assert text.startswith("Error executing tool: Invalid arguments: unknown argument(s): z; q: ")
    assert json.dumps(schema)  # the caller's dict is left alone
    assert "additionalProperties" not in schema


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"input_schema": {"type": "object", "properties": {"a": {"type": "integer"}}}, "unknown_arguments": "reject"},
    ],
    ids=["hints", "json-schema"],
)
def test_many_unknown_arguments_are_refused_in_linear_time(
    mcp: MCP, make_app: t.Any, options: dict[str, t.Any]
) -> None:
    """50,000 unknown names: refused naming the first 20, sorted (quadratic handling took minutes here)."""

    @mcp.tool(error_format="json", **options)
    def add(a: int) -> int:
        return a

    unknown = {f"k{i:05d}": i for i in range(50_000)}
    arguments = {**unknown, "a": "not a number"}
    app = make_app(mcp)
    server = app.extensions["mcp"].server
    message = jsonrpc.Request(id=1, method="tools/call", params={"name": "add", "arguments": arguments})
    with app.test_request_context():
        result = t.cast(dict[str, t.Any], server.handle(message, ClientState()))["result"]
        with pytest.raises(DirectCallFailed) as direct:  # the REST and CGI adapters' way in
            call_tool_json(server, "add", arguments)
    assert direct.value.reason == "invalid_arguments"
    assert direct.value.message.count("Unknown argument.") == MAX_LISTED_UNKNOWN
    assert result["isError"] is True
    error = json.loads(result["content"][0]["text"])["error"]
    first = sorted(unknown)[:MAX_LISTED_UNKNOWN]
    assert error["message"] == (
        f"Invalid arguments: unknown argument(s): {', '.join(first)} and {50_000 - MAX_LISTED_UNKNOWN} more; "
        + ("a: Not a valid integer." if not options else "a: 'not a number' is not of type 'integer'")
    )
    assert set(error["detail"]) == {*first, "a"}
