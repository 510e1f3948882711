"""Several MCP servers on one app: each its own URL, settings, components and auth."""

from __future__ import annotations

import typing as t
import warnings

import pytest
from flask import Flask

from flask_mcp import MCP, Context, current_mcp
from flask_mcp.config.settings import UnknownSettingWarning
from flask_mcp.globals import current_state, servers_of, state_of, use_server
from flask_mcp.testing import MCPTestClient

ADMIN_TOKENS = {"root-token": {"subject": "root", "scopes": ["admin"]}}


def two_servers(**config: t.Any) -> tuple[Flask, MCP, MCP]:
    public = MCP(name="public")
    admin = MCP(name="admin", config_prefix="ADMIN_MCP", blueprint_name="admin_mcp")

    @public.tool()
    def hello(name: str) -> str:
        return f"hello {name}"

    @public.tool()
    def who_serves(ctx: Context) -> str:
        return f"{current_mcp.name} {current_state().settings.config_prefix}"

    @admin.tool(permissions=[])
    def purge(ctx: Context) -> str:
        return f"purged by {ctx.principal.subject if ctx.principal else 'nobody'} on {current_mcp.name}"

    @admin.resource("admin://stats")
    def stats() -> dict[str, int]:
        return {"users": 3}

    app = Flask("two_servers")
    app.config.update(TESTING=True, ADMIN_MCP_AUTH_TOKENS=ADMIN_TOKENS, ADMIN_MCP_PAGE_SIZE=1, **config)
    public.init_app(app)
    admin.init_app(app)
    return app, public, admin


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_each_server_has_its_url_components_and_auth(era: str) -> None:
    app, _, _ = two_servers()
    outside = MCPTestClient(app, era=era)
    if era == "handshake":
        outside.initialize()
    assert outside.path == "/mcp"
    assert [tool["name"] for tool in outside.list_tools()] == ["hello", "who_serves"]
    assert outside.call_tool("hello", {"name": "Ada"})["content"][0]["text"] == "hello Ada"
    assert outside.call_tool("who_serves")["content"][0]["text"] == "public MCP"
    assert outside.error("tools/call", {"name": "purge", "arguments": {}})["code"] == -32602

    stranger = MCPTestClient(app, server="admin_mcp", era=era)
    assert stranger.path == "/admin_mcp"  # ADMIN_MCP_URL_PREFIX's default: the blueprint's name
    stranger.error("tools/list")
    assert stranger.last_response is not None and stranger.last_response.status_code == 401

    root = MCPTestClient(app, server="admin_mcp", era=era, token="root-token")
    if era == "handshake":
        root.initialize()
        assert root.request("tools/list", {})["tools"][0]["name"] == "purge"
    assert root.call_tool("purge")["content"][0]["text"] == "purged by root on admin"
    assert root.read_resource("admin://stats")[0]["text"] == '{"users":3}'
    # ADMIN_MCP_PAGE_SIZE is the admin server's alone.
    assert state_of(app, "admin_mcp").settings.page_size == 1 and state_of(app).settings.page_size == 100


def test_the_first_server_is_the_default_and_each_is_found_by_name() -> None:
    app, public, admin = two_servers()
    assert app.extensions["mcp"].mcp is public
    assert list(servers_of(app).by_name) == ["mcp", "admin_mcp"]
    with app.app_context():
        assert current_mcp.name == "public"
        with use_server("admin_mcp"):
            assert current_mcp.name == "admin" and state_of(app).mcp is admin
        assert current_state().mcp is public
    with pytest.raises(RuntimeError, match="no MCP server named 'billing' on this app; its servers are mcp, admin_mcp"):
        state_of(app, "billing")


def test_each_server_keeps_its_own_store_keys_and_rest_routes() -> None:
    # The protected admin server publishes its document; MCP_AUTH_OPENAPI is the other server's key.
    app, _, _ = two_servers(ADMIN_MCP_AUTH_OPENAPI=False, MCP_AUTH_OPENAPI=True)
    assert state_of(app).settings.cache_config["CACHE_KEY_PREFIX"] == "flask_mcp:"
    assert state_of(app, "admin_mcp").settings.cache_config["CACHE_KEY_PREFIX"] == "flask_mcp:admin_mcp:"
    http = app.test_client()
    public_document = http.get("/mcp/rest/openapi.json").get_json()
    assert {"/mcp/rest/tools/hello", "/mcp/rest/tools/who_serves"} <= set(public_document["paths"])
    assert not any("purge" in path for path in public_document["paths"])
    admin_document = http.get("/admin_mcp/rest/openapi.json")  # ADMIN_MCP_AUTH_OPENAPI holds
    assert admin_document.status_code == 200 and "/admin_mcp/rest/tools/purge" in admin_document.get_json()["paths"]
    assert http.get("/mcp/rest/openapi.json").status_code == 200  # a server without a backend: nothing to ask for
    answer = http.post("/admin_mcp/rest/tools/purge", json={}, headers={"Authorization": "Bearer root-token"})
    assert answer.status_code == 200 and answer.get_json() == {"result": "purged by root on admin"}
    assert http.post("/mcp/rest/tools/purge", json={}).status_code == 404
    # The metadata of each protected server is at its own path.
    assert http.get("/.well-known/oauth-protected-resource/admin_mcp").status_code == 200


def test_a_second_server_needs_its_own_prefix_name_and_url() -> None:
    app = Flask("clash")
    MCP().init_app(app)
    with pytest.raises(RuntimeError, match=r"reading the MCP_\* keys is already set up.*blueprint_name"):
        MCP(config_prefix="MCP", blueprint_name="other").init_app(app)
    with pytest.raises(RuntimeError, match="blueprint name 'mcp' is already set up"):
        MCP().init_app(app)
    with pytest.raises(RuntimeError, match="blueprint name 'mcp' is already set up"):
        MCP(config_prefix="OTHER_MCP").init_app(app)
    app.config["OTHER_MCP_URL_PREFIX"] = "/mcp"
    with pytest.raises(RuntimeError, match="already is: set OTHER_MCP_URL_PREFIX"):
        MCP(config_prefix="OTHER_MCP", blueprint_name="other").init_app(app)
    with pytest.raises(ValueError, match="config_prefix must be upper-case"):
        MCP(config_prefix="admin-mcp")


@pytest.mark.parametrize(
    ("blueprint_name", "prefix"), [("admin", "ADMIN_MCP"), ("admin_mcp", "ADMIN_MCP"), ("billing-v2", "BILLING_V2_MCP")]
)
def test_a_further_server_derives_its_prefix_from_its_blueprint_name(blueprint_name: str, prefix: str) -> None:
    public = MCP(name="public")
    admin = MCP(name="admin", blueprint_name=blueprint_name)

    @admin.tool(permissions=[])
    def purge() -> str:
        return "purged"

    app = Flask("derived_prefix")
    app.config.update(TESTING=True, **{f"{prefix}_AUTH_TOKENS": ADMIN_TOKENS, f"{prefix}_PAGE_SIZE": 1})
    public.init_app(app)
    admin.init_app(app)
    state = state_of(app, blueprint_name)
    assert state.settings.config_prefix == prefix and state.settings.page_size == 1
    assert state_of(app).settings.config_prefix == "MCP" and state_of(app).settings.page_size == 100
    root = MCPTestClient(app, server=blueprint_name, token="root-token")
    assert root.path == f"/{blueprint_name}"
    assert root.call_tool("purge")["content"][0]["text"] == "purged"


def test_a_lone_server_with_a_blueprint_name_of_its_own_still_reads_mcp_keys() -> None:
    app = Flask("lone")
    app.config["MCP_PAGE_SIZE"] = 2
    MCP(blueprint_name="tools").init_app(app)
    assert state_of(app).settings.config_prefix == "MCP" and state_of(app).settings.page_size == 2
    assert state_of(app).endpoint_path == "/mcp"


def test_a_blueprint_name_no_prefix_can_be_derived_from_asks_for_one() -> None:
    app = Flask("underivable")
    MCP().init_app(app)
    with pytest.raises(RuntimeError, match=r"no config_prefix can be derived from the blueprint name '2fa'.*prefix="):
        MCP(blueprint_name="2fa").init_app(app)


def test_unknown_keys_are_named_as_each_server_spells_them() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        two_servers(ADMIN_MCP_PAGE_SIZ=3)
    messages = [str(w.message) for w in caught if issubclass(w.category, UnknownSettingWarning)]
    assert messages == [
        "ADMIN_MCP_PAGE_SIZ is not a flask_mcp setting and is ignored; did you mean ADMIN_MCP_PAGE_SIZE?"
    ]


def test_a_prefix_under_mcp_is_not_mistaken_for_typos_of_the_default() -> None:
    public = MCP(name="public")
    admin = MCP(name="admin", config_prefix="MCP_ADMIN", blueprint_name="admin")
    app = Flask("nested_prefix")
    app.config.update(MCP_ADMIN_URL_PREFIX="/internal/mcp")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnknownSettingWarning)
        public.init_app(app)
        admin.init_app(app)
    assert state_of(app, "admin").endpoint_path == "/internal/mcp"
    assert state_of(app).settings.url_prefix == "/mcp"


def test_the_cli_chooses_a_server() -> None:
    app, _, _ = two_servers(ADMIN_MCP_LOCAL_PRINCIPAL="root")
    runner = app.test_cli_runner()
    default = runner.invoke(args=["mcp", "list"])
    assert default.exit_code == 0 and "hello" in default.output and "purge" not in default.output
    chosen = runner.invoke(args=["mcp", "--server", "admin_mcp", "call", "purge", "--raw"])
    assert chosen.exit_code == 0, chosen.output
    assert chosen.output.strip() == "purged by root on admin"
    wrong = runner.invoke(args=["mcp", "--server", "billing", "list"])
    assert wrong.exit_code == 2 and "no MCP server named 'billing'" in wrong.output


def test_the_fixture_factory_takes_a_server(mcp_client_factory: t.Any) -> None:
    app, _, _ = two_servers()
    client = mcp_client_factory(app, server="admin_mcp", token="root-token")
    assert client.path == "/admin_mcp"
    assert [tool["name"] for tool in client.list_tools()] == ["purge"]
