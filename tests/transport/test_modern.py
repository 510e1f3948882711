"""The 2026-07-28 revision over Streamable HTTP: stateless requests beside the handshake era.

Every response of the modern era is validated against the official
2026-07-28 schema (the ``make_client(..., era="modern")`` clients do it for
each answer); the raw requests here pin down the statuses and error codes
the revision's transport defines.
"""

from __future__ import annotations

import http.client
import json
import queue
import threading
import typing as t
import urllib.parse
import uuid
from datetime import timedelta

import pytest
from flask import Flask
from marshmallow import Schema, fields

from flask_mcp import MCP, Context, Elicit, ListRoots, Sample, ScopeRequired
from flask_mcp.protocol.envelope import CLIENT_CAPABILITIES, LOG_LEVEL, PROTOCOL_VERSION, SERVER_INFO
from flask_mcp.protocol.versions import ALL_PROTOCOL_VERSIONS
from flask_mcp.testing import MCPTestClient, SchemaValidator
from flask_mcp.testing.client import ACCEPT

from .test_streaming import gunicorn

MODERN = "2026-07-28"
META = {PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: {}}
NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


class RegionArgs(Schema):
    region = fields.String(required=True, metadata={"x-mcp-header": "Region"})
    limit = fields.Integer(load_default=10, metadata={"x-mcp-header": "Limit"})
    query = fields.String(required=True)


def build_mcp() -> MCP:
    mcp = MCP(name="modern", version="2.0.0", instructions="Be brief.")

    @mcp.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @mcp.tool(input_schema=RegionArgs)
    def search(region: str, limit: int, query: str) -> str:
        return f"{query} in {region} (top {limit})"

    @mcp.tool()
    def greet(ctx: Context) -> str:
        answer = ctx.elicit("What is your name?", NAME_FORM, key="user_name")
        return f"Hello, {(answer.content or {}).get('name')}!"

    @mcp.tool()
    def survey(ctx: Context) -> dict[str, t.Any]:
        answers = ctx.ask(name=Elicit("Name?", NAME_FORM), model=Sample("Capital?", 5), roots=ListRoots())
        return {
            "name": (answers["name"].content or {}).get("name"),
            "model": answers["model"]["content"]["text"],
            "roots": len(answers["roots"]),
        }

    @mcp.tool()
    def chatter(ctx: Context) -> str:
        for level in ("debug", "info", "warning", "error"):
            ctx.log(level, f"{level} message")
        return "done"

    @mcp.resource("notes://{note_id}")
    def note(note_id: str) -> str:
        return f"note {note_id}"

    @mcp.resource("secret://vault")
    def vault(ctx: Context) -> str:
        code = ctx.elicit("Code?", {"type": "object", "properties": {"code": {"type": "string"}}}, key="code")
        return f"opened with {(code.content or {}).get('code')}"

    @mcp.prompt(description="Review with the user's focus.")
    def review(ctx: Context) -> str:
        focus = ctx.elicit("Focus?", {"type": "object", "properties": {"focus": {"type": "string"}}}, key="focus")
        return f"Review focusing on {(focus.content or {}).get('focus')}"

    return mcp


@pytest.fixture
def app(make_app: t.Callable[..., Flask]) -> Flask:
    return make_app(build_mcp(), SECRET_KEY="modern-tests")


@pytest.fixture
def client(app: Flask, make_client: t.Callable[..., MCPTestClient]) -> MCPTestClient:
    return make_client(app, era="modern", capabilities={"elicitation": {}, "sampling": {}, "roots": {}})


def raw(app: Flask, method: str, params: t.Any, request_id: t.Any = 7, **headers: str) -> t.Any:
    """POST a modern request with the routing headers a client sends (overridable); the response."""
    sent = {"Accept": ACCEPT, "MCP-Protocol-Version": MODERN, "Mcp-Method": method, **headers}
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return app.test_client().post("/mcp", json=body, headers={k: v for k, v in sent.items() if v is not None})


def error_of(response: t.Any, status: int, code: int, request_id: t.Any = 7) -> dict[str, t.Any]:
    assert (response.status_code, response.mimetype) == (status, "application/json"), response.get_data(True)
    body = response.get_json()
    assert body["id"] == request_id and body["error"]["code"] == code, body
    return t.cast(dict[str, t.Any], body["error"])


# -- discovery and result members ---------------------------------------------------------


def test_discover_names_every_revision_and_the_server(client: MCPTestClient) -> None:
    result = client.discover()
    assert result["supportedVersions"] == list(ALL_PROTOCOL_VERSIONS)
    assert set(result["capabilities"]) >= {"tools", "resources", "prompts"}
    assert result["instructions"] == "Be brief."
    assert result["_meta"][SERVER_INFO] == {"name": "modern", "version": "2.0.0"}
    assert (result["resultType"], result["ttlMs"], result["cacheScope"]) == ("complete", 0, "public")


@pytest.mark.parametrize(
    ("method", "params", "cacheable"),
    [
        ("tools/list", {}, True),
        ("prompts/list", {}, True),
        ("resources/list", {}, True),
        ("resources/templates/list", {}, True),
        ("resources/read", {"uri": "notes://1"}, True),
        ("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}, False),
        (
            "completion/complete",
            {"ref": {"type": "ref/resource", "uri": "notes://{note_id}"}, "argument": {"name": "note_id", "value": ""}},
            False,
        ),
    ],
)
def test_every_result_carries_its_type_and_the_server(
    client: MCPTestClient, method: str, params: dict[str, t.Any], cacheable: bool
) -> None:
    result = client.request(method, params)
    assert result["resultType"] == "complete"
    assert result["_meta"][SERVER_INFO]["name"] == "modern"
    assert ("ttlMs" in result and "cacheScope" in result) is cacheable


def test_tools_are_listed_in_registration_order_every_time(client: MCPTestClient) -> None:
    names = [[tool["name"] for tool in client.list_tools()] for _ in range(3)]
    assert names[0] == ["add", "search", "greet", "survey", "chatter"] and names.count(names[0]) == 3


def test_cache_hints_follow_the_settings(make_app: t.Callable[..., Flask], make_client: t.Callable[..., t.Any]) -> None:
    app = make_app(build_mcp(), MCP_CLIENT_CACHE_TTL=timedelta(minutes=5), MCP_CLIENT_CACHE_SCOPE="private")
    result = make_client(app, era="modern").request("tools/list", {})
    assert (result["ttlMs"], result["cacheScope"]) == (300_000, "private")


@pytest.mark.filterwarnings("ignore::flask_mcp.UnprotectedToolWarning")
def test_answers_of_an_authenticated_app_are_private(make_app: t.Callable[..., Flask]) -> None:
    mcp = build_mcp()
    app = make_app(mcp, MCP_AUTH_TOKENS={"t0ken": "ada"})
    response = raw(app, "tools/list", {"_meta": META}, Authorization="Bearer t0ken")
    assert response.get_json()["result"]["cacheScope"] == "private"


def test_the_session_header_is_ignored_and_none_is_minted(app: Flask, client: MCPTestClient) -> None:
    response = raw(app, "tools/list", {"_meta": META}, **{"Mcp-Session-Id": "not-a-session", "Last-Event-ID": "x:1"})
    assert response.status_code == 200 and "Mcp-Session-Id" not in response.headers


def test_a_handshake_session_and_a_modern_client_share_the_endpoint(app: Flask, make_client: t.Any) -> None:
    legacy = make_client(app)
    legacy.initialize()
    assert legacy.call_tool("add", {"a": 2, "b": 2})["structuredContent"] == {"result": 4}
    assert "resultType" not in legacy.call_tool("add", {"a": 2, "b": 2})
    modern = make_client(app, era="modern")
    assert modern.call_tool("add", {"a": 2, "b": 2})["resultType"] == "complete"
    assert legacy.request("ping") == {}


# -- errors and their statuses ----------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({}, "params._meta"),
        ({"_meta": {CLIENT_CAPABILITIES: {}}}, PROTOCOL_VERSION),
        ({"_meta": {PROTOCOL_VERSION: MODERN}}, CLIENT_CAPABILITIES),
        ({"_meta": {**META, LOG_LEVEL: "loud"}}, LOG_LEVEL),
    ],
)
def test_a_broken_envelope_is_400_invalid_params(app: Flask, params: dict[str, t.Any], named: str) -> None:
    assert named in error_of(raw(app, "server/discover", params), 400, -32602)["message"]


def test_an_unsupported_revision_is_400_with_the_supported_ones(app: Flask) -> None:
    params = {"_meta": {**META, PROTOCOL_VERSION: "v999.0.0"}}
    error = error_of(raw(app, "server/discover", params, **{"MCP-Protocol-Version": "v999.0.0"}), 400, -32022)
    assert error["data"] == {"supported": list(ALL_PROTOCOL_VERSIONS), "requested": "v999.0.0"}


@pytest.mark.parametrize(
    ("method", "params", "headers", "named"),
    [
        ("tools/list", {}, {"MCP-Protocol-Version": None}, "MCP-Protocol-Version"),
        ("tools/list", {}, {"MCP-Protocol-Version": "2025-11-25"}, "MCP-Protocol-Version"),
        ("tools/list", {}, {"Mcp-Method": None}, "Mcp-Method"),
        ("tools/list", {}, {"Mcp-Method": "prompts/list"}, "Mcp-Method"),
        ("tools/list", {}, {"Mcp-Method": "TOOLS/LIST"}, "Mcp-Method"),
        ("tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}}, {}, "Mcp-Name"),
        ("tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}}, {"Mcp-Name": "sub"}, "Mcp-Name"),
        ("prompts/get", {"name": "review"}, {"Mcp-Name": "other"}, "Mcp-Name"),
        ("resources/read", {"uri": "notes://1"}, {"Mcp-Name": "notes://2"}, "Mcp-Name"),
        ("resources/read", {"uri": "notes://1"}, {"Mcp-Name": "=?base64?bm90ZXM6Ly8x?"}, "Mcp-Name"),
    ],
)
def test_routing_headers_that_disagree_with_the_body_are_400_header_mismatch(
    app: Flask, method: str, params: dict[str, t.Any], headers: dict[str, t.Any], named: str
) -> None:
    response = raw(app, method, {**params, "_meta": META}, **headers)
    assert named in error_of(response, 400, -32020)["message"]


def test_names_travel_base64_encoded_when_they_must(make_app: t.Callable[..., Flask]) -> None:
    mcp = MCP(name="names")

    @mcp.resource("notes://{title}")
    def note(title: str) -> str:
        return title

    app = make_app(mcp)
    uri = "notes://café"
    encoded = "=?base64?bm90ZXM6Ly9jYWbDqQ==?="
    response = raw(app, "resources/read", {"uri": uri, "_meta": META}, **{"Mcp-Name": encoded})
    assert response.status_code == 200, response.get_json()
    error_of(raw(app, "resources/read", {"uri": uri, "_meta": META}, **{"Mcp-Name": "notes://cafe"}), 400, -32020)


@pytest.mark.parametrize(
    ("arguments", "headers", "accepted"),
    [
        ({"region": "eu", "query": "q"}, {"Mcp-Param-Region": "eu"}, True),
        ({"region": "eu", "query": "q", "limit": 5}, {"Mcp-Param-Region": "eu", "Mcp-Param-Limit": "5"}, True),
        ({"region": "São Paulo", "query": "q"}, {"Mcp-Param-Region": "=?base64?U8OjbyBQYXVsbw==?="}, True),
        ({"region": "eu", "query": "q"}, {}, False),
        ({"region": "eu", "query": "q"}, {"Mcp-Param-Region": "us"}, False),
        ({"region": "eu", "query": "q"}, {"Mcp-Param-Region": "eu", "Mcp-Param-Limit": "5"}, False),
        ({"region": "eu", "query": "q", "limit": 5}, {"Mcp-Param-Region": "eu", "Mcp-Param-Limit": "6"}, False),
        ({"region": "Hello", "query": "q"}, {"Mcp-Param-Region": "=?base64?SGVsbG8?="}, False),
    ],
)
def test_annotated_arguments_must_match_their_param_headers(
    app: Flask, arguments: dict[str, t.Any], headers: dict[str, str], accepted: bool
) -> None:
    params = {"name": "search", "arguments": arguments, "_meta": META}
    response = raw(app, "tools/call", params, **{"Mcp-Name": "search", **headers})
    if accepted:
        assert response.status_code == 200 and not response.get_json()["result"].get("isError")
    else:
        assert "Mcp-Param-" in error_of(response, 400, -32020)["message"]


def test_the_header_annotation_is_advertised(client: MCPTestClient) -> None:
    search = next(tool for tool in client.list_tools() if tool["name"] == "search")
    assert search["inputSchema"]["properties"]["region"]["x-mcp-header"] == "Region"


@pytest.mark.parametrize(
    "method",
    ["initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe", "unknown/method"],
)
def test_methods_the_revision_does_not_have_are_404_method_not_found(app: Flask, method: str) -> None:
    error = error_of(raw(app, method, {"uri": "notes://1", "_meta": META}), 404, -32601)
    assert error["data"] == method


def test_a_missing_capability_is_400_naming_it(app: Flask) -> None:
    response = raw(app, "tools/call", {"name": "greet", "arguments": {}, "_meta": META}, **{"Mcp-Name": "greet"})
    error = error_of(response, 400, -32021)
    assert error["data"] == {"requiredCapabilities": {"elicitation": {}}}


def test_an_unknown_resource_is_400_invalid_params_with_its_uri(app: Flask) -> None:
    uri = "nothing://here"
    error = error_of(raw(app, "resources/read", {"uri": uri, "_meta": META}, **{"Mcp-Name": uri}), 400, -32602)
    assert error["data"] == {"uri": uri}


def test_an_unknown_tool_is_400_invalid_params(app: Flask) -> None:
    error_of(raw(app, "tools/call", {"name": "nope", "_meta": META}, **{"Mcp-Name": "nope"}), 400, -32602)


def test_permission_denials_keep_their_403(make_app: t.Callable[..., Flask]) -> None:
    mcp = MCP(name="guarded")

    @mcp.tool(permissions=[ScopeRequired("admin")])
    def wipe() -> str:
        return "wiped"

    app = make_app(mcp, MCP_AUTH_TOKENS={"t0ken": "ada"})
    response = raw(
        app, "tools/call", {"name": "wipe", "_meta": META}, Authorization="Bearer t0ken", **{"Mcp-Name": "wipe"}
    )
    error_of(response, 403, -31403)


@pytest.mark.parametrize("verb", ["GET", "DELETE"])
def test_get_and_delete_are_405_without_a_handshake_session(app: Flask, verb: str) -> None:
    response = app.test_client().open("/mcp", method=verb, headers={"Accept": ACCEPT, "MCP-Protocol-Version": MODERN})
    assert (response.status_code, response.headers["Allow"]) == (405, "POST, OPTIONS")
    assert response.get_json()["error"]["code"] == -32600


def test_a_notification_is_accepted_and_a_client_response_refused(app: Flask) -> None:
    http = app.test_client()
    headers = {"Accept": ACCEPT, "MCP-Protocol-Version": MODERN}
    note = http.post(
        "/mcp",
        json={"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
        headers=headers,
    )
    assert (note.status_code, note.get_data()) == (202, b"")
    answer = http.post("/mcp", json={"jsonrpc": "2.0", "id": "srv-1", "result": {}}, headers=headers)
    error_of(answer, 400, -32600, request_id=None)


def test_the_modern_era_can_be_switched_off(make_app: t.Callable[..., Flask]) -> None:
    app = make_app(build_mcp(), MCP_MODERN_ERA=False)
    response = raw(app, "server/discover", {"_meta": META})
    assert response.status_code == 400 and "unsupported protocol version" in response.get_json()["error"]["message"]


# -- logs and progress ----------------------------------------------------------------------


def events_of(response: t.Any) -> list[dict[str, t.Any]]:
    assert response.mimetype == "text/event-stream"
    text = response.get_data(as_text=True)
    assert "\nid:" not in f"\n{text}"  # nothing to resume in the modern era
    return [json.loads(line[len("data: ") :]) for line in text.splitlines() if line.startswith("data: ")]


def test_no_log_messages_without_a_log_level(app: Flask) -> None:
    response = raw(app, "tools/call", {"name": "chatter", "_meta": META}, **{"Mcp-Name": "chatter"})
    assert response.mimetype == "application/json" and response.get_json()["result"]["resultType"] == "complete"


def test_log_messages_at_or_above_the_requested_level(app: Flask, modern_schema_checker: SchemaValidator) -> None:
    params = {"name": "chatter", "_meta": {**META, LOG_LEVEL: "warning"}}
    *logs, final = events_of(raw(app, "tools/call", params, **{"Mcp-Name": "chatter"}))
    assert [log["params"]["level"] for log in logs] == ["warning", "error"]
    for log in logs:
        modern_schema_checker.check("LoggingMessageNotification", log)
    modern_schema_checker.check_envelope("tools/call", final)


# -- input rounds over HTTP -----------------------------------------------------------------


def test_a_tool_round_trip(client: MCPTestClient) -> None:
    asked = client.call_tool("greet")
    assert asked["resultType"] == "input_required" and list(asked["inputRequests"]) == ["user_name"]
    done = client.call_tool("greet", answers={"user_name": {"action": "accept", "content": {"name": "Ada"}}})
    assert done["content"][0]["text"] == "Hello, Ada!"


def test_several_requests_in_one_round(client: MCPTestClient) -> None:
    seen: list[str] = []

    def answer(key: str, request: dict[str, t.Any]) -> t.Any:
        seen.append(request["method"])
        return {
            "name": {"action": "accept", "content": {"name": "Ada"}},
            "model": {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"},
            "roots": {"roots": [{"uri": "file:///srv"}]},
        }[key]

    result = client.call_tool("survey", answers=answer)
    assert result["structuredContent"] == {"name": "Ada", "model": "Paris", "roots": 1}
    assert seen == ["elicitation/create", "sampling/createMessage", "roots/list"]


def test_prompts_and_resources_ask_too(client: MCPTestClient) -> None:
    prompt = client.get_prompt("review", answers={"focus": {"action": "accept", "content": {"focus": "tests"}}})
    assert prompt["messages"][0]["content"]["text"] == "Review focusing on tests"
    [contents] = client.read_resource(
        "secret://vault", answers={"code": {"action": "accept", "content": {"code": "42"}}}
    )
    assert contents["text"] == "opened with 42"


def test_a_tampered_state_is_400_invalid_params(app: Flask, client: MCPTestClient) -> None:
    state = client.call_tool("greet")["requestState"]
    params = {
        "name": "greet",
        "_meta": {**META, CLIENT_CAPABILITIES: {"elicitation": {}}},
        "requestState": state + "-TAMPERED",
        "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Mallory"}}},
    }
    error = error_of(raw(app, "tools/call", params, **{"Mcp-Name": "greet"}), 400, -32602)
    assert error["data"] == {"reason": "invalid_request_state"}


@pytest.mark.filterwarnings("ignore::flask_mcp.UnprotectedToolWarning")
def test_another_callers_state_is_refused(make_app: t.Callable[..., Flask]) -> None:
    app = make_app(build_mcp(), MCP_AUTH_TOKENS={"ada-token": "ada", "eve-token": "eve"}, SECRET_KEY="s")
    caps = {**META, CLIENT_CAPABILITIES: {"elicitation": {}}}
    first = raw(
        app, "tools/call", {"name": "greet", "_meta": caps}, Authorization="Bearer ada-token", **{"Mcp-Name": "greet"}
    )
    state = first.get_json()["result"]["requestState"]
    retry = {"name": "greet", "_meta": caps, "requestState": state, "inputResponses": {}}
    stolen = raw(app, "tools/call", retry, Authorization="Bearer eve-token", **{"Mcp-Name": "greet"})
    assert "another caller" in error_of(stolen, 400, -32602)["message"]


def test_a_round_completes_on_another_app_with_the_same_secret(make_app: t.Callable[..., Flask]) -> None:
    """Nothing is kept between rounds: the retry may land on any worker that shares the key."""
    first, second = make_app(build_mcp(), SECRET_KEY="shared"), make_app(build_mcp(), SECRET_KEY="shared")
    caps = {**META, CLIENT_CAPABILITIES: {"elicitation": {}}}
    asked = raw(first, "tools/call", {"name": "greet", "_meta": caps}, **{"Mcp-Name": "greet"}).get_json()["result"]
    retry = {
        "name": "greet",
        "_meta": caps,
        "requestState": asked["requestState"],
        "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Ada"}}},
    }
    done = raw(second, "tools/call", retry, **{"Mcp-Name": "greet"}).get_json()["result"]
    assert done["content"][0]["text"] == "Hello, Ada!"
    other = make_app(build_mcp(), SECRET_KEY="not-shared")
    error_of(raw(other, "tools/call", retry, **{"Mcp-Name": "greet"}), 400, -32602)


# -- a round across processes ----------------------------------------------------------------


def post_live(url: str, method: str, params: dict[str, t.Any], request_id: int) -> tuple[str, dict[str, t.Any]]:
    """POST a modern request to a live server; the worker pid that answered and the body."""
    parsed = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parsed.hostname or "", parsed.port or 80, timeout=30)
    headers = {
        "Content-Type": "application/json",
        "Accept": ACCEPT,
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": method,
        "Mcp-Name": params["name"],
    }
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    try:
        connection.request("POST", parsed.path, json.dumps(body), headers)
        response = connection.getresponse()
        assert response.status == 200, response.read()
        return response.headers["X-Worker-Pid"], json.loads(response.read())
    finally:
        connection.close()


def test_each_round_may_land_on_another_process(redis_url: str, modern_schema_checker: SchemaValidator) -> None:
    """Two gunicorn processes share Redis and no configured secret: a call's rounds alternate between them."""
    env = {
        "MCP_CACHE_TYPE": "RedisCache",
        "MCP_CACHE_REDIS_URL": redis_url,
        "MCP_CACHE_KEY_PREFIX": f"flask_mcp_rounds:{uuid.uuid4().hex}:",
    }
    meta = {**META, CLIENT_CAPABILITIES: {"sampling": {}, "elicitation": {}}}
    call = {"name": "interview", "arguments": {"prompt": "ping"}, "_meta": meta}
    with gunicorn(**env) as server_a, gunicorn(**env) as server_b:
        pid_a, first = post_live(server_a.url, "tools/call", call, 1)
        modern_schema_checker.check_envelope("tools/call", first)
        [(sample_key, sample)] = first["result"]["inputRequests"].items()
        assert sample["method"] == "sampling/createMessage"
        answer = {"role": "assistant", "content": {"type": "text", "text": "PONG"}, "model": "m"}
        retry = {**call, "inputResponses": {sample_key: answer}, "requestState": first["result"]["requestState"]}
        pid_b, second = post_live(server_b.url, "tools/call", retry, 2)
        modern_schema_checker.check_envelope("tools/call", second)
        [(elicit_key, elicit)] = second["result"]["inputRequests"].items()
        assert elicit["method"] == "elicitation/create"
        profile = {"action": "accept", "content": {"name": "Ada"}}
        last = {**call, "inputResponses": {elicit_key: profile}, "requestState": second["result"]["requestState"]}
        pid_c, done = post_live(server_a.url, "tools/call", last, 3)
    modern_schema_checker.check_envelope("tools/call", done)
    assert pid_a != pid_b
    outcome = done["result"]["structuredContent"]
    assert (outcome["reply"], outcome["action"], outcome["content"]) == ("PONG", "accept", {"name": "Ada"})
    assert str(outcome["pid"]) == pid_c == pid_a


# -- per-component options: header arguments and cache hints ---------------------------------


def test_a_tool_option_sends_arguments_in_headers(make_app: t.Callable[..., Flask], make_client: t.Any) -> None:
    mcp = MCP(name="routed")

    @mcp.tool(headers={"tenant": "Tenant", "shard": "Shard"})
    def lookup(tenant: str, shard: int, key: str) -> str:
        return f"{tenant}/{shard}/{key}"

    app = make_app(mcp)
    [tool] = make_client(app, era="modern").list_tools()
    assert tool["inputSchema"]["properties"]["tenant"]["x-mcp-header"] == "Tenant"
    assert tool["inputSchema"]["properties"]["shard"]["x-mcp-header"] == "Shard"
    assert "x-mcp-header" not in tool["inputSchema"]["properties"]["key"]
    arguments = {"tenant": "acme", "shard": 3, "key": "k"}
    assert make_client(app, era="modern").call_tool("lookup", arguments)["content"][0]["text"] == "acme/3/k"
    params = {"name": "lookup", "arguments": arguments, "_meta": META}
    headers = {"Mcp-Name": "lookup", "Mcp-Param-Tenant": "acme", "Mcp-Param-Shard": "4"}
    assert "Mcp-Param-Shard" in error_of(raw(app, "tools/call", params, **headers), 400, -32020)["message"]


@pytest.mark.parametrize(
    ("headers", "message"),
    [
        ({"nope": "Nope"}, "not an argument"),
        ({"ratio": "Ratio"}, "only strings, integers and booleans"),
        ({"key": "Bad Name"}, "HTTP token"),
        ({"key": "Key", "tenant": "KEY"}, "HTTP token"),
    ],
)
def test_header_arguments_are_checked_at_registration(headers: dict[str, str], message: str) -> None:
    mcp = MCP(name="routed")
    with pytest.raises(ValueError, match=message):

        @mcp.tool(headers=headers)
        def lookup(tenant: str, key: str, ratio: float = 1.0) -> str:
            return key


def test_components_set_their_own_cache_hints(make_app: t.Callable[..., Flask], make_client: t.Any) -> None:
    """A read takes its resource's hints; a listing the shortest ttl of its kind and private if any is."""
    mcp = MCP(name="cached")

    @mcp.resource("config://app", cache_ttl=timedelta(hours=1))
    def config() -> str:
        return "on"

    @mcp.resource("me://profile", cache_ttl=5, cache_scope="private")
    def profile() -> str:
        return "me"

    @mcp.prompt(description="Static.", cache_ttl=60)
    def hello() -> str:
        return "hello"

    client = make_client(make_app(mcp, MCP_CLIENT_CACHE_TTL=120), era="modern")

    def hints(method: str, params: dict[str, t.Any]) -> tuple[int, str]:
        result = client.request(method, params)
        return result["ttlMs"], result["cacheScope"]

    assert hints("resources/read", {"uri": "config://app"}) == (3_600_000, "public")
    assert hints("resources/read", {"uri": "me://profile"}) == (5_000, "private")
    assert hints("resources/list", {}) == (5_000, "private")
    assert hints("prompts/list", {}) == (60_000, "public")
    assert hints("resources/templates/list", {}) == (120_000, "public")
    assert hints("server/discover", {}) == (120_000, "public")


@pytest.mark.parametrize(("ttl", "scope"), [(-1, None), ("soon", None), (None, "shared")])
def test_cache_options_are_checked_at_registration(ttl: t.Any, scope: t.Any) -> None:
    mcp = MCP(name="cached")
    with pytest.raises(ValueError, match="cache_"):

        @mcp.resource("config://app", cache_ttl=ttl, cache_scope=scope)
        def config() -> str:
            return "on"


def test_a_sentinel_shaped_name_must_be_encoded_even_when_it_equals_the_body(make_app: t.Callable[..., Flask]) -> None:
    """A proxy decodes the header and would route on "Hello": the literal value does not match the body."""
    mcp = MCP(name="odd names")

    @mcp.prompt(name="=?base64?SGVsbG8=?=", description="A prompt with a name shaped like an encoded header.")
    def odd() -> str:
        return "odd"

    app = make_app(mcp)
    params = {"name": "=?base64?SGVsbG8=?=", "_meta": META}
    error_of(raw(app, "prompts/get", params, **{"Mcp-Name": "=?base64?SGVsbG8=?="}), 400, -32020)
    encoded = "=?base64?PT9iYXNlNjQ/U0dWc2JHOD0/PQ==?="
    assert raw(app, "prompts/get", params, **{"Mcp-Name": encoded}).status_code == 200


def test_closing_the_response_stream_cancels_the_call(make_app: t.Callable[..., Flask], live_server: t.Any) -> None:
    """The modern era has no notifications/cancelled over HTTP: a client that goes away cancels."""
    outcome: queue.Queue[bool] = queue.Queue()
    mcp = MCP(name="cancel")

    @mcp.tool()
    def slow(ctx: Context) -> str:
        ctx.report_progress(1, total=2)
        pause = threading.Event()
        for _ in range(1500):  # bounded: 15 s at most
            if ctx.cancelled or pause.wait(0.01):
                break
        outcome.put(ctx.cancelled)
        return "done"

    app = make_app(mcp, MCP_SSE_KEEPALIVE=0.05)
    with live_server(app) as server:
        parsed = urllib.parse.urlsplit(f"{server.url}/mcp")
        connection = http.client.HTTPConnection(parsed.hostname or "", parsed.port or 80, timeout=30)
        params = {"name": "slow", "arguments": {}, "_meta": {**META, "progressToken": "p"}}
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        headers = {"Content-Type": "application/json", "Accept": ACCEPT, "MCP-Protocol-Version": MODERN}
        connection.request(
            "POST", parsed.path, json.dumps(body), {**headers, "Mcp-Method": "tools/call", "Mcp-Name": "slow"}
        )
        response = connection.getresponse()
        assert response.headers["Content-Type"] == "text/event-stream"
        line = response.readline()
        while not line.startswith(b"data:"):
            line = response.readline()
        assert json.loads(line[5:])["method"] == "notifications/progress"
        response.close()  # the response holds the socket: both must go for the client to be gone
        connection.close()
        assert outcome.get(timeout=15) is True
