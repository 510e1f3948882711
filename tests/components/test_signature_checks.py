"""Signatures no call could satisfy are refused at registration, naming the parameter and the way out."""

from __future__ import annotations

import typing as t

import marshmallow as ma
import pytest
from marshmallow import fields

from flask_mcp import MCP, Context, Principal
from flask_mcp.components.build import build_tool


class InvoiceIn(ma.Schema):
    amount = fields.Integer(required=True)


@pytest.mark.parametrize("hint", [str, int, "str | None", bool | None])
def test_a_reserved_name_annotated_as_a_plain_value_is_refused(hint: t.Any) -> None:
    mcp = MCP(name="checks")

    def send_message(user: str, text: str) -> str:
        return text

    send_message.__annotations__["user"] = hint
    with pytest.raises(
        ValueError, match=r"parameter 'user' has a reserved name.*rename it \(for example 'user_name'\)"
    ):
        mcp.tool(send_message)


@pytest.mark.parametrize("hint", [list[str], "list[int] | None", tuple, set[str], bytes, float])
def test_a_data_parameter_that_cannot_hold_the_arguments_is_refused(hint: t.Any) -> None:
    """``data`` holds the validated arguments (a dict): a list, a tuple... was meant as the client's argument."""
    mcp = MCP(name="checks")

    def save(data: t.Any, note: str = "") -> str:
        return "saved"

    save.__annotations__["data"] = hint
    with pytest.raises(
        ValueError, match=r"parameter 'data' has a reserved name.*rename it \(for example 'data_value'\)"
    ):
        mcp.tool(save)
    assert "save" not in mcp.tools


@pytest.mark.parametrize("hint", [dict[str, t.Any], None, t.Any])
def test_a_data_parameter_with_no_argument_beside_it_is_refused(hint: t.Any) -> None:
    """With nothing else declared, ``data`` would always arrive empty: it was meant as the client's argument."""
    mcp = MCP(name="checks")

    def save(data):  # type: ignore[no-untyped-def]
        return "saved"

    if hint is not None:
        save.__annotations__["data"] = hint
    with pytest.raises(ValueError, match=r"parameter 'data' has a reserved name.*argument_binding='bundle'"):
        mcp.tool(save)
    # Bundled with a schema, it is what data is for.
    assert mcp.tool(argument_binding="bundle", input_schema=InvoiceIn)(save) is save


def test_a_spread_data_parameter_beside_arguments_still_gets_them_all(make_app: t.Any, make_client: t.Any) -> None:
    mcp = MCP(name="checks")

    @mcp.tool
    def total(data: dict[str, t.Any], a: int, b: int = 2) -> dict[str, t.Any]:
        return {"seen": data, "sum": a + b}

    client = make_client(make_app(mcp, MCP_STATELESS=True), era="modern")
    assert client.call_tool("total", {"a": 1})["structuredContent"] == {"seen": {"a": 1, "b": 2}, "sum": 3}


def test_reserved_names_that_take_what_the_server_passes_still_register() -> None:
    mcp = MCP(name="checks")

    @mcp.tool
    def whoami(user: Principal | None, request: t.Any, context: Context, text: str) -> str:
        return text

    @mcp.tool
    def plain(user, data: dict[str, t.Any], text: str) -> str:  # type: ignore[no-untyped-def]
        return text

    assert set(mcp.tools) == {"whoami", "plain"}


def test_a_required_parameter_nothing_supplies_is_refused() -> None:
    mcp = MCP(name="checks")
    with pytest.raises(
        ValueError, match=r"parameter 'tenant_id' is required, but nothing supplies it \(with argument_binding='bundle'"
    ):

        @mcp.tool(argument_binding="bundle")
        def create_invoice(data: InvoiceIn, tenant_id: int) -> str:
            return "created"


def bill(amount: int, note: str) -> str:
    return note


def test_an_explicit_schema_must_declare_what_the_function_needs() -> None:
    with pytest.raises(ValueError, match=r"parameter 'note' is required.*the input schema does not declare it"):
        build_tool(bill, input_schema=InvoiceIn)


def test_what_an_explicit_schema_leaves_out_is_left_to_a_route_and_refused_at_init_app_without_one(
    make_app: t.Any,
) -> None:
    """The function may be a view whose URL supplies it (see routes.rst); set up on an app, it is none."""
    mcp = MCP(name="checks")
    assert mcp.tool(input_schema=InvoiceIn)(bill) is bill
    assert mcp.tools["bill"].unsupplied == {"note"}
    with pytest.raises(ValueError, match=r"parameter 'note' is required, but nothing supplies it .* no route"):
        make_app(mcp, MCP_STATELESS=True)


def test_a_default_or_a_provider_supplies_it() -> None:
    mcp = MCP(name="checks")

    @mcp.tool(argument_binding="bundle")
    def with_default(data: InvoiceIn, tenant_id: int = 1) -> str:
        return "ok"

    @mcp.tool(argument_binding="bundle", kwargs=lambda ctx: {"tenant_id": 7})
    def with_provider(data: InvoiceIn, tenant_id: int) -> str:
        return "ok"

    assert set(mcp.tools) == {"with_default", "with_provider"}
