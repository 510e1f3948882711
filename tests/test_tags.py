"""Tags, ``include_tags``/``exclude_tags``, and removing components at run time."""

from __future__ import annotations

import typing as t

import pytest
from flask import Flask

from flask_mcp import MCP
from flask_mcp.components.build import TAGS_META
from flask_mcp.stores.events import BROADCAST
from flask_mcp.testing import MCPTestClient, SchemaValidator
from tests.conftest import LiveServer
from tests.transport.test_listen import (
    PROMPTS_CHANGED,
    RESOURCES_CHANGED,
    TOOLS_CHANGED,
    Endpoint,
    acknowledged,
    build_mcp,
    changes,
)

ERAS = ["handshake", "modern"]


def tagged_server(**options: t.Any) -> MCP:
    server = MCP(name="tags", **options)

    @server.tool(tags={"public", "math"})
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool(tags=["admin"])
    def wipe() -> str:
        return "wiped"

    @server.tool
    def plain() -> str:
        return "plain"

    @server.resource("data://public", tags=["public"])
    def public_data() -> str:
        return "public"

    @server.resource("data://secret", tags=["admin"])
    def secret_data() -> str:
        return "secret"

    @server.resource("users://{user_id}", tags=["admin"])
    def user(user_id: int) -> str:
        return f"user {user_id}"

    @server.prompt(tags=["public"])
    def greet(name: str) -> str:
        return f"Hello {name}"

    @server.prompt(tags=["admin"])
    def audit() -> str:
        return "Audit"

    return server


def connect(make_client: t.Callable[..., MCPTestClient], app: Flask, era: str) -> MCPTestClient:
    client = make_client(app, era=era)
    if era == "handshake":
        client.initialize()
    return client


def serving(client: MCPTestClient) -> dict[str, list[str]]:
    return {
        "tools": [tool["name"] for tool in client.list_tools()],
        "resources": [resource["uri"] for resource in client.list_resources()],
        "templates": [template["uriTemplate"] for template in client.list_resource_templates()],
        "prompts": [prompt["name"] for prompt in client.list_prompts()],
    }


def broadcasts(app: Flask) -> list[str]:
    state = app.extensions["mcp"]
    with app.app_context():
        return [message["method"] for _, message in state.events.after(None, BROADCAST, 0)]


def test_tags_are_listed_in_meta(make_app: t.Callable[..., Flask], make_client: t.Callable[..., MCPTestClient]) -> None:
    server = tagged_server()
    server.tool(name="noted", meta={"owner": "ops"}, tags=["b", "a"])(lambda: "x")
    client = connect(make_client, make_app(server), "handshake")
    tools = {tool["name"]: tool for tool in client.list_tools()}
    assert tools["add"]["_meta"] == {TAGS_META: ["math", "public"]}
    assert tools["noted"]["_meta"] == {"owner": "ops", TAGS_META: ["a", "b"]}
    assert "_meta" not in tools["plain"]
    assert server.tools["add"].tags == frozenset({"public", "math"})
    assert client.list_resource_templates()[0]["_meta"] == {TAGS_META: ["admin"]}


def test_tags_must_be_strings() -> None:
    server = MCP(name="tags")
    with pytest.raises(TypeError, match="tags must be an iterable of strings"):
        server.tool(name="x", tags="admin")(lambda: "x")


@pytest.mark.parametrize("era", ERAS)
def test_include_tags_serve_only_the_tagged(
    era: str, make_app: t.Callable[..., Flask], make_client: t.Callable[..., MCPTestClient]
) -> None:
    app = make_app(tagged_server(include_tags=["public"]))
    client = connect(make_client, app, era)
    assert serving(client) == {"tools": ["add"], "resources": ["data://public"], "templates": [], "prompts": ["greet"]}
    assert client.call_tool("add", {"a": 1, "b": 2})["structuredContent"] == {"result": 3}
    error = client.error("tools/call", {"name": "plain", "arguments": {}})
    assert error["code"] == -32602 and "plain" in error["message"]
    assert (
        client.error("resources/read", {"uri": "users://7"})["code"]
        == client.error("resources/read", {"uri": "data://nowhere"})["code"]
    )
    assert "audit" in client.error("prompts/get", {"name": "audit"})["message"]


@pytest.mark.parametrize("era", ERAS)
def test_exclude_tags_from_the_config(
    era: str, make_app: t.Callable[..., Flask], make_client: t.Callable[..., MCPTestClient]
) -> None:
    app = make_app(tagged_server(), MCP_EXCLUDE_TAGS="admin")
    client = connect(make_client, app, era)
    assert serving(client) == {
        "tools": ["add", "plain"],
        "resources": ["data://public"],
        "templates": [],
        "prompts": ["greet"],
    }
    assert client.error("tools/call", {"name": "wipe", "arguments": {}})["code"] == -32602


def test_exclusion_wins_and_the_constructor_wins_over_the_config(
    make_app: t.Callable[..., Flask], make_client: t.Callable[..., MCPTestClient]
) -> None:
    server = tagged_server(include_tags=["public", "admin"], exclude_tags=["math"])
    app = make_app(server, MCP_INCLUDE_TAGS=["nothing"], MCP_EXCLUDE_TAGS=["public"])
    client = connect(make_client, app, "handshake")
    assert serving(client)["tools"] == ["wipe"]
    server.tool(name="late_public", tags=["public"])(lambda: "late")  # registered later: filtered the same way
    server.tool(name="late_plain")(lambda: "late")
    assert serving(client)["tools"] == ["wipe", "late_public"]


def test_excluded_tools_are_absent_from_rest_and_openapi(make_app: t.Callable[..., Flask]) -> None:
    app = make_app(tagged_server(exclude_tags=["admin"]), MCP_STATELESS=True)
    http = app.test_client()
    assert http.post("/mcp/rest/tools/add", json={"a": 1, "b": 1}).status_code == 200
    assert http.post("/mcp/rest/tools/wipe", json={}).status_code == 404
    paths = t.cast(dict[str, t.Any], http.get("/mcp/rest/openapi.json").json)["paths"]
    assert any(path.endswith("/tools/add") for path in paths)
    assert not any(path.endswith("/tools/wipe") for path in paths)


def test_apps_sharing_an_extension_must_agree_on_tags(make_app: t.Callable[..., Flask]) -> None:
    server = tagged_server()
    make_app(server, MCP_EXCLUDE_TAGS=["admin"])
    with pytest.raises(RuntimeError, match="agree on include_tags"):
        make_app(server, MCP_EXCLUDE_TAGS=["public"])


@pytest.mark.parametrize("era", ERAS)
def test_remove_each_kind_and_announce_it(
    era: str, make_app: t.Callable[..., Flask], make_client: t.Callable[..., MCPTestClient]
) -> None:
    server = tagged_server()
    app = make_app(server)
    client = connect(make_client, app, era)
    with app.app_context():
        server.remove_tool("wipe")
        server.remove_resource("data://secret")
        server.remove_template("users://{user_id}")
        server.remove_prompt("audit")
    assert serving(client) == {
        "tools": ["add", "plain"],
        "resources": ["data://public"],
        "templates": [],
        "prompts": ["greet"],
    }
    assert client.error("tools/call", {"name": "wipe", "arguments": {}})["code"] == -32602
    assert broadcasts(app) == [
        "notifications/tools/list_changed",
        "notifications/resources/list_changed",
        "notifications/resources/list_changed",
        "notifications/prompts/list_changed",
    ]
    with app.app_context(), pytest.raises(KeyError, match="no tool 'wipe'"):
        server.remove_tool("wipe")
    # Gone, not hidden: the name can be registered again.
    with app.app_context():
        server.tool(name="wipe")(lambda: "again")
    assert client.call_tool("wipe")["content"] == [{"type": "text", "text": "again"}]


def test_removed_and_disabled_tools_leave_rest_and_openapi(make_app: t.Callable[..., Flask]) -> None:
    server = tagged_server()
    app = make_app(server)
    http = app.test_client()

    def documented() -> set[str]:
        paths = t.cast(dict[str, t.Any], http.get("/mcp/rest/openapi.json").json)["paths"]
        return {path.rpartition("/")[2] for path in paths if "/tools/" in path}

    assert {"add", "plain"} <= documented()  # built and cached
    with app.app_context():
        server.remove_tool("add")
        server.disable("plain")
    assert http.post("/mcp/rest/tools/add", json={"a": 1, "b": 1}).status_code == 404
    assert http.post("/mcp/rest/tools/plain", json={}).status_code == 404
    assert documented() == {"wipe"}


def test_remove_at_import_time_drops_it_everywhere(make_app: t.Callable[..., Flask]) -> None:
    server = tagged_server()
    server.remove_tool("wipe")
    app = make_app(server)
    assert "wipe" not in server.tools
    assert broadcasts(app) == []
    with pytest.raises(KeyError):
        server.remove_prompt("nope")


@pytest.mark.parametrize("era", ERAS)
def test_disable_and_enable_a_template(
    era: str, make_app: t.Callable[..., Flask], make_client: t.Callable[..., MCPTestClient]
) -> None:
    server = tagged_server()
    app = make_app(server)
    client = connect(make_client, app, era)
    with app.app_context():
        server.disable("users://{user_id}", kind="template")
    assert serving(client)["templates"] == []
    assert client.error("resources/read", {"uri": "users://7"})
    with app.app_context():
        server.enable("users://{user_id}", kind="template")
    assert client.read_resource("users://7")[0]["text"] == "user 7"
    assert broadcasts(app) == ["notifications/resources/list_changed"] * 2


def test_a_disabled_excluded_component_stays_out(
    make_app: t.Callable[..., Flask], make_client: t.Callable[..., MCPTestClient]
) -> None:
    server = tagged_server(exclude_tags=["admin"])
    app = make_app(server)
    client = connect(make_client, app, "handshake")
    with app.app_context():
        server.disable("wipe")
        server.enable("wipe")
    assert "wipe" not in serving(client)["tools"]


def test_a_removal_reaches_modern_listen_streams(
    make_app: t.Callable[..., Flask], modern_schema_checker: SchemaValidator
) -> None:
    """In the modern era the change arrives on ``subscriptions/listen`` streams."""
    wanted = {"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True}
    server = build_mcp()
    app = make_app(server)
    with LiveServer(app) as live, Endpoint(f"{live.url}/mcp").listen("watch", wanted) as stream:
        acknowledged(modern_schema_checker, stream, "watch")
        with app.app_context():
            server.remove_tool("search")
            server.remove_prompt("greet")
            server.remove_resource("notes://2")
        assert changes(modern_schema_checker, stream, "watch", 3) == [
            (TOOLS_CHANGED, None),
            (PROMPTS_CHANGED, None),
            (RESOURCES_CHANGED, None),
        ]
