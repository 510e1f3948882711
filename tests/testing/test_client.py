"""The in-process test client and the schema validator."""

from __future__ import annotations

import typing as t
from pathlib import Path

import jsonschema
import pytest

import flask_mcp
from flask_mcp import MCP, Context, Principal, ScopeRequired
from flask_mcp.testing import MCPTestClient, SchemaValidator
from flask_mcp.testing.schema_checks import OFFICIAL_REVISIONS, official_schema

from ..conftest import REPO_ROOT


@pytest.mark.parametrize("revision", OFFICIAL_REVISIONS)
def test_the_official_schemas_ship_with_the_package(revision: str) -> None:
    validator = SchemaValidator.official(revision)
    assert validator.available and validator.path.is_relative_to(Path(flask_mcp.__file__).parent)
    assert SchemaValidator.official(revision) is validator  # compiled once a process
    assert (validator.path.parents[1] / "LICENSE").read_text().startswith("The MCP project")


@pytest.mark.parametrize("revision", OFFICIAL_REVISIONS)
def test_the_shipped_schemas_are_the_specifications(revision: str) -> None:
    """Byte for byte the files of the specification's schema folder, where a copy of it is at hand."""
    reference = REPO_ROOT.parent / "shared" / "mcp-schema" / revision / "schema.json"
    if not reference.exists():
        pytest.skip("no copy of the specification's schema folder beside the checkout to compare with")
    assert official_schema(revision).read_bytes() == reference.read_bytes()


def test_older_handshake_revisions_are_checked_with_the_newest_of_their_era() -> None:
    assert SchemaValidator.official("2025-03-26") is SchemaValidator.official("2025-11-25")
    with pytest.raises(ValueError, match="shipped: 2025-11-25, 2026-07-28"):
        official_schema("2024-11-05")


def test_validator_rejects_what_the_schema_forbids(schema_checker: SchemaValidator) -> None:
    with pytest.raises(jsonschema.ValidationError):
        schema_checker.check("CallToolResult", {"content": "not a list"})
    with pytest.raises(AssertionError):
        schema_checker.check_envelope(
            "tools/call", {"jsonrpc": "2.0", "id": 1, "result": {"content": [], "isError": False}}
        )
    with pytest.raises(AssertionError):
        schema_checker.check_envelope(
            "ping", {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": ""}}
        )


def test_missing_schema_file_validates_nothing(tmp_path) -> None:
    validator = SchemaValidator(tmp_path / "absent.json")
    assert not validator.available
    validator.check("CallToolResult", {"content": "not a list"})


def test_list_tools_follows_cursors(mcp: MCP, make_app, schema_checker: SchemaValidator) -> None:
    names = [f"tool_{i}" for i in range(5)]
    for name in names:
        mcp.tool(name=name)(lambda: "x")
    client = MCPTestClient(make_app(mcp, MCP_PAGE_SIZE=2), validator=schema_checker)
    client.initialize()
    assert [tool["name"] for tool in client.list_tools()] == names
    first_page = client.request("tools/list")
    assert len(first_page["tools"]) == 2 and "nextCursor" in first_page


def test_read_resource_and_get_prompt(mcp: MCP, make_app) -> None:
    @mcp.resource("echo://{word}")
    def echo(word: str) -> str:
        return word * 2

    @mcp.prompt
    def shout(word: str) -> str:
        return word.upper()

    client = MCPTestClient(make_app(mcp))
    client.initialize()
    assert client.read_resource("echo://ab") == [{"uri": "echo://ab", "text": "abab"}]
    assert client.get_prompt("shout", {"word": "hey"})["messages"][0]["content"]["text"] == "HEY"


def test_list_resources_templates_and_prompts_follow_cursors(
    mcp: MCP, make_app, schema_checker: SchemaValidator
) -> None:
    for i in range(3):
        mcp.resource(f"res://{i}", name=f"res_{i}")(lambda: "x")
        mcp.resource(f"tpl{i}://{{v}}", name=f"tpl_{i}")(lambda v: v)
        mcp.prompt(name=f"prompt_{i}")(lambda: "x")
    client = MCPTestClient(make_app(mcp, MCP_PAGE_SIZE=2), validator=schema_checker)
    client.initialize()
    assert [r["uri"] for r in client.list_resources()] == ["res://0", "res://1", "res://2"]
    assert [r["uriTemplate"] for r in client.list_resource_templates()] == ["tpl0://{v}", "tpl1://{v}", "tpl2://{v}"]
    assert [p["name"] for p in client.list_prompts()] == ["prompt_0", "prompt_1", "prompt_2"]


def test_complete_sends_the_argument_and_context(mcp: MCP, make_app, schema_checker: SchemaValidator) -> None:
    seen: list[dict[str, str]] = []

    def languages(value: str, context: dict[str, str]) -> list[str]:
        seen.append(context)
        return [name for name in ("go", "python", "rust") if name.startswith(value)]

    @mcp.prompt(completions={"language": languages})
    def review(code: str, language: str) -> str:
        return code

    client = MCPTestClient(make_app(mcp), validator=schema_checker)
    client.initialize()
    ref = {"type": "ref/prompt", "name": "review"}
    assert client.complete(ref, "language", "py")["values"] == ["python"]
    assert client.complete(ref, "language", "", context={"code": "x"})["values"] == ["go", "python", "rust"]
    assert seen == [{}, {"code": "x"}]


# -- a protected app, event-stream answers and failing statuses ----------------------------


def protected_app(make_app: t.Any) -> t.Any:
    server = MCP(name="protected")

    @server.tool(permissions=[ScopeRequired("notes:read")])
    def notes(ctx: Context) -> str:
        ctx.report_progress(1, total=2, message="half")
        ctx.info("reading")
        return "the notes"

    @server.tool(permissions=[], rate_limit="1/minute")
    def once() -> str:
        return "once"

    tokens = {"ada-token": {"subject": "ada", "scopes": ["notes:read"]}, "eve-token": "eve"}
    return make_app(server, MCP_AUTH_TOKENS=tokens)


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_a_token_reaches_a_protected_app_in_either_era(make_app: t.Any, make_client: t.Any, era: str) -> None:
    app = protected_app(make_app)
    client = make_client(app, era=era, token="ada-token", log_level="info")
    if era == "handshake":
        client.initialize()
    meta = {"progressToken": "p"}
    result = client.request("tools/call", {"name": "notes", "arguments": {}, "_meta": meta})
    assert result["content"][0]["text"] == "the notes"
    # The answer was an event stream: the notifications before the response are kept.
    assert [note["method"] for note in client.notifications] == ["notifications/progress", "notifications/message"]
    assert client.notifications[0]["params"]["message"] == "half"


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_call_tool_asks_for_progress_and_keeps_what_came(make_app: t.Any, make_client: t.Any, era: str) -> None:
    server = MCP(name="counting")
    tokens: list[t.Any] = []

    @server.tool
    def count(ctx: Context) -> str:
        tokens.append(ctx.progress_token)
        ctx.report_progress(1, total=2, message="one")
        ctx.report_progress(2, total=2, message="two")
        return "counted"

    client = make_client(make_app(server), era=era)
    if era == "handshake":
        client.initialize()
    assert client.call_tool("count")["content"][0]["text"] == "counted"
    assert [(note["progress"], note["total"], note["message"]) for note in client.progress] == [
        (1, 2, "one"),
        (2, 2, "two"),
    ]
    assert {note["progressToken"] for note in client.progress} == {tokens[0]}
    # Each call its own token, as a client keeps one per request in flight.
    client.call_tool("count")
    assert tokens[1] is not None and tokens[1] != tokens[0]
    # Asked not to, the call sends none, and no progress comes.
    client.call_tool("count", progress=False)
    assert tokens[2] is None
    assert client.progress == []


def test_failures_are_testable_at_their_status(make_app: t.Any, make_client: t.Any) -> None:
    app = protected_app(make_app)
    unauthenticated = make_client(app, era="modern")
    refused = unauthenticated.error("tools/list")  # answered before the message is read: no id to echo
    assert "requires authentication" in refused["message"]
    assert unauthenticated.last_response is not None and unauthenticated.last_response.status_code == 401
    eve = make_client(app, era="modern", token="eve-token")
    denied = eve.error("tools/call", {"name": "notes"})
    assert denied["code"] == -31403 and eve.last_response is not None and eve.last_response.status_code == 403
    assert eve.call_tool("once")["content"][0]["text"] == "once"
    limited = eve.error("tools/call", {"name": "once"})
    assert limited["code"] == -31429 and eve.last_response.status_code == 429


def test_extra_headers_go_with_every_request(make_app: t.Any, make_client: t.Any) -> None:
    server = MCP(name="keyed")

    @server.tool(permissions=[])
    def ping_tool() -> str:
        return "pong"

    app = make_app(server, MCP_AUTH_TOKENS={"k3y": "svc"}, MCP_AUTH_API_KEY_HEADER="X-API-Key")
    client = make_client(app, era="modern", headers={"X-API-Key": "k3y"})
    assert client.call_tool("ping_tool")["content"][0]["text"] == "pong"


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_a_test_can_stand_in_for_a_principal(make_app: t.Any, make_client: t.Any, era: str) -> None:
    app = protected_app(make_app)
    ada = make_client(app, era=era, principal=Principal("ada", scopes=frozenset({"notes:read"})))
    if era == "handshake":
        ada.initialize()
    assert ada.call_tool("notes")["content"][0]["text"] == "the notes"
    # A bare subject is a caller with no scopes: the permission check still runs.
    eve = make_client(app, era=era, principal="eve")
    if era == "handshake":
        eve.initialize()
    assert eve.error("tools/call", {"name": "notes"})["code"] == -31403


def test_a_stand_in_principal_needs_testing_mode(make_app: t.Any, make_client: t.Any) -> None:
    app = protected_app(make_app)
    app.testing = False
    client = make_client(app, era="modern", principal=Principal("ada", scopes=frozenset({"notes:read"})))
    client.error("tools/list")
    assert client.last_response is not None and client.last_response.status_code == 401


def test_the_fixture_factory_takes_a_principal(make_app: t.Any, mcp_client_factory: t.Any) -> None:
    app = protected_app(make_app)
    client = mcp_client_factory(app, principal=Principal("ada", scopes=frozenset({"notes:read"})))
    assert client.call_tool("notes")["content"][0]["text"] == "the notes"


# -- requests on a handshake-era stream ----------------------------------------------------------

OK_SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}}


@pytest.fixture
def asking(make_app: t.Any) -> t.Any:
    mcp = MCP(name="asking")

    @mcp.tool()
    def order(item: str, ctx: Context) -> str:
        ctx.report_progress(1, total=2, message="asking")
        first = ctx.elicit(f"Order {item}?", OK_SCHEMA)
        model = ctx.sample("Which model?", max_tokens=5)
        return f"{item}: {first.action}, {model['content']['text']}"

    return make_app(mcp)


def test_a_handshake_client_answers_the_requests_on_the_stream(asking: t.Any, make_client: t.Any) -> None:
    client = make_client(asking)
    client.initialize(capabilities={"elicitation": {}, "sampling": {}})
    answers = {
        "elicitation-1": {"action": "accept", "content": {"ok": True}},
        "sampling-1": {"role": "assistant", "content": {"type": "text", "text": "small"}, "model": "m"},
    }
    params = {"name": "order", "arguments": {"item": "cake"}, "_meta": {"progressToken": "p"}}
    result = client.request("tools/call", params, answers=answers)
    assert result["content"][0]["text"] == "cake: accept, small"
    assert [note["method"] for note in client.notifications] == ["notifications/progress"]
    assert b"elicitation/create" in client.last_response.get_data()  # what was read stays readable

    asked: list[tuple[str, str]] = []

    def answer(key: str, request: dict[str, t.Any]) -> dict[str, t.Any]:
        asked.append((key, request["method"]))
        return answers[key]

    assert client.call_tool("order", {"item": "tea"}, answers=answer)["content"][0]["text"] == "tea: accept, small"
    assert asked == [("elicitation-1", "elicitation/create"), ("sampling-1", "sampling/createMessage")]


def test_a_request_without_an_answer_gets_an_error_at_once(asking: t.Any, make_client: t.Any) -> None:
    client = make_client(asking)
    client.initialize(capabilities={"elicitation": {}, "sampling": {}})
    # The default MCP_CLIENT_REQUEST_TIMEOUT is minutes: answered with an error, the tool does not wait for it.
    result = client.call_tool("order", {"item": "cake"})
    assert result["isError"] is True
    assert "MCPTestClient has no answer for elicitation/create (key 'elicitation-1'" in result["content"][0]["text"]
