"""mcp.mount(other, prefix=...): another server's components under a namespace."""

from __future__ import annotations

import typing as t

import pytest

from flask_mcp import MCP, ScopeRequired
from flask_mcp.components.mounting import mounted_name, mounted_uri


def billing_server() -> MCP:
    billing = MCP(name="billing", default_permissions=[ScopeRequired("billing")])

    @billing.tool()
    def invoice(amount: int) -> str:
        return f"invoiced {amount}"

    @billing.tool(permissions=[])
    def prices() -> list[int]:
        return [1, 2]

    @billing.resource("billing://ledger")
    def ledger() -> str:
        return "ledger"

    @billing.resource("billing://invoices/{number}")
    def invoice_doc(number: int) -> str:
        return f"invoice #{number}"

    @billing.prompt(permissions=[])
    def dunning(customer: str) -> str:
        return f"Remind {customer}"

    return billing


def test_names_and_uris_follow_the_documented_rule() -> None:
    assert mounted_name("billing", "invoice") == "billing_invoice"
    assert mounted_uri("billing", "billing://invoices/{number}") == "billing://billing/invoices/{number}"
    assert mounted_uri(None, "urn:x") == "urn:x"
    with pytest.raises(ValueError, match="only scheme://"):
        mounted_uri("billing", "urn:x")


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_a_mounted_servers_components_are_served_under_the_prefix(
    make_app: t.Any, make_client: t.Any, era: str
) -> None:
    main = MCP(name="main")

    @main.tool(permissions=[])
    def hello() -> str:
        return "hello"

    main.mount(billing_server(), prefix="billing")
    tokens = {"clerk": {"subject": "clerk", "scopes": ["billing"]}, "guest": "guest"}
    app = make_app(main, MCP_AUTH_TOKENS=tokens)
    clerk = make_client(app, era=era, token="clerk")
    if era == "handshake":
        clerk.initialize()
    assert [tool["name"] for tool in clerk.list_tools()] == ["hello", "billing_invoice", "billing_prices"]
    assert clerk.call_tool("billing_invoice", {"amount": 3})["content"][0]["text"] == "invoiced 3"
    assert clerk.read_resource("billing://billing/ledger")[0]["text"] == "ledger"
    assert clerk.read_resource("billing://billing/invoices/7")[0]["text"] == "invoice #7"
    templates = clerk.list_resource_templates()
    assert [template["uriTemplate"] for template in templates] == ["billing://billing/invoices/{number}"]
    assert clerk.get_prompt("billing_dunning", {"customer": "Ada"})["messages"][0]["content"]["text"] == "Remind Ada"
    # The old names are not served here.
    assert clerk.error("tools/call", {"name": "invoice", "arguments": {"amount": 1}})["code"] == -32602

    guest = make_client(app, era=era, token="guest")
    if era == "handshake":
        guest.initialize()
    # The mounted server's default permissions stay with its components; its public ones stay public.
    assert guest.error("tools/call", {"name": "billing_invoice", "arguments": {"amount": 1}})["code"] == -31403
    assert guest.call_tool("billing_prices")["structuredContent"] == {"result": [1, 2]}
    guest.error("resources/read", {"uri": "billing://billing/ledger"})
    assert guest.last_response is not None and guest.last_response.status_code == 403


def test_later_changes_of_the_mounted_server_follow(make_app: t.Any, make_client: t.Any) -> None:
    main = MCP(name="main")
    billing = billing_server()
    main.mount(billing, prefix="billing")
    app = make_app(main, MCP_AUTH_TOKENS={"clerk": {"subject": "clerk", "scopes": ["billing"]}})
    client = make_client(app, era="modern", token="clerk")

    @billing.tool(permissions=[])
    def refund(amount: int) -> str:
        return f"refunded {amount}"

    assert client.call_tool("billing_refund", {"amount": 2})["content"][0]["text"] == "refunded 2"
    billing.remove_tool("invoice")
    names = [tool["name"] for tool in client.list_tools()]
    assert names == ["billing_prices", "billing_refund"]


def test_mounting_without_a_prefix_merges_and_refuses_clashes() -> None:
    main = MCP(name="main")

    @main.tool()
    def prices() -> str:
        return "main's"

    with pytest.raises(ValueError, match="tool 'prices' is already registered"):
        main.mount(billing_server())


def test_mount_cycles_and_bad_prefixes_are_refused() -> None:
    first, second = MCP(name="first"), MCP(name="second")
    first.mount(second, prefix="second")
    with pytest.raises(ValueError, match="cannot mount itself, or a server that mounts it"):
        second.mount(first, prefix="first")
    with pytest.raises(ValueError, match="cannot mount itself"):
        first.mount(first, prefix="me")
    with pytest.raises(ValueError, match="a mount prefix is letters"):
        first.mount(MCP(name="third"), prefix="bad/prefix")


def test_a_server_can_be_served_alone_and_mounted(make_app: t.Any, make_client: t.Any) -> None:
    billing = billing_server()
    main = MCP(name="main")
    main.mount(billing, prefix="billing")
    tokens = {"clerk": {"subject": "clerk", "scopes": ["billing"]}}
    alone = make_client(make_app(billing, MCP_AUTH_TOKENS=tokens), era="modern", token="clerk")
    together = make_client(make_app(main, MCP_AUTH_TOKENS=tokens), era="modern", token="clerk")
    assert alone.call_tool("invoice", {"amount": 1})["content"][0]["text"] == "invoiced 1"
    assert together.call_tool("billing_invoice", {"amount": 1})["content"][0]["text"] == "invoiced 1"


def _app_with_view(tmp_path: t.Any, server: MCP, **config: t.Any) -> t.Any:
    from flask import Flask

    (tmp_path / "templates").mkdir(exist_ok=True)
    (tmp_path / "templates" / "chart.html").write_text("<!DOCTYPE html><p>{{ tool }}</p>")
    app = Flask("mounted_views", root_path=str(tmp_path))
    app.config.update(TESTING=True, **config)
    server.init_app(app)
    return app


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_a_mounted_tools_view_link_names_the_view_as_mounted(tmp_path: t.Any, make_client: t.Any, era: str) -> None:
    charts = MCP(name="charts")

    @charts.tool(app="chart.html")
    def plot() -> str:
        return "plotted"

    main = MCP(name="main")
    main.mount(charts, prefix="charts")
    app = _app_with_view(tmp_path, main)
    client = make_client(app, era=era)
    if era == "handshake":
        client.initialize()
    (tool,) = client.list_tools()
    assert tool["name"] == "charts_plot"
    advertised = tool["_meta"]["ui"]["resourceUri"]
    assert advertised == tool["_meta"]["ui/resourceUri"] == "ui://charts/plot/view"
    (view,) = client.read_resource(advertised)  # the view is served where the link says
    assert view["text"] == "<!DOCTYPE html><p>plot</p>"
    assert advertised in {resource["uri"] for resource in client.list_resources()}
    # The mounted view follows the mounted tool.
    with app.app_context():
        main.disable("charts_plot")
    assert advertised not in {resource["uri"] for resource in client.list_resources()}
    assert "result" not in client.envelope("resources/read", {"uri": advertised})
    with app.app_context():
        main.enable("charts_plot")
    assert client.read_resource(advertised)


def test_a_nested_mount_renames_the_link_at_every_level(tmp_path: t.Any, make_client: t.Any) -> None:
    charts = MCP(name="charts")

    @charts.tool(app="chart.html")
    def plot() -> str:
        return "plotted"

    middle = MCP(name="middle")
    middle.mount(charts, prefix="charts")
    top = MCP(name="top")
    top.mount(middle, prefix="middle")
    client = make_client(_app_with_view(tmp_path, top), era="modern")
    (tool,) = client.list_tools()
    assert tool["name"] == "middle_charts_plot"
    (view,) = client.read_resource(tool["_meta"]["ui"]["resourceUri"])
    assert view["text"] == "<!DOCTYPE html><p>plot</p>"
