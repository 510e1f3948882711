"""Every example, driven through Flask's test client and checked against the official schema."""

from __future__ import annotations

import importlib.util
import json
import typing as t
from pathlib import Path
from types import ModuleType

import pytest

from flask_mcp.testing import MCPTestClient, SchemaValidator

EXAMPLES = Path(__file__).resolve().parent
SCHEMA = SchemaValidator(EXAMPLES.parents[1] / "shared" / "mcp-schema" / "2025-11-25" / "schema.json")


def load_example(name: str) -> ModuleType:
    """Import ``examples/<name>/app.py`` as a module of its own."""
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / name / "app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def quickstart() -> ModuleType:
    return load_example("quickstart")


@pytest.fixture(params=[False, True], ids=["stateful", "stateless"])
def client(request: pytest.FixtureRequest, quickstart: ModuleType) -> MCPTestClient:
    app = quickstart.create_app({"TESTING": True, "MCP_STATELESS": request.param})
    client = MCPTestClient(app, validator=SCHEMA)
    client.initialize()
    return client


def test_quickstart_exposes_app_and_factory(quickstart: ModuleType) -> None:
    assert "mcp" in quickstart.app.extensions
    assert quickstart.create_app() is not quickstart.app


def test_quickstart_lists_everything(client: MCPTestClient) -> None:
    assert {tool["name"] for tool in client.list_tools()} == {"add", "greet", "get_note"}
    assert [r["uri"] for r in client.request("resources/list")["resources"]] == ["config://app"]
    templates = client.request("resources/templates/list")["resourceTemplates"]
    assert [t["uriTemplate"] for t in templates] == ["notes://{note_id}"]
    assert [p["name"] for p in client.request("prompts/list")["prompts"]] == ["review_code"]


@pytest.mark.parametrize(("a", "b"), [(2, 3), (-7, 100), (0, 0)])
def test_quickstart_add(client: MCPTestClient, a: int, b: int) -> None:
    assert client.call_tool("add", {"a": a, "b": b})["structuredContent"] == {"result": a + b}


def test_quickstart_add_rejects_strings(client: MCPTestClient) -> None:
    result = client.call_tool("add", {"a": "2", "b": 3})
    assert result["isError"] is True and "a:" in result["content"][0]["text"]


@pytest.mark.parametrize(("excited", "end"), [(False, "."), (True, "!")])
def test_quickstart_greet(client: MCPTestClient, excited: bool, end: str) -> None:
    result = client.call_tool("greet", {"name": "Ada", "excited": excited})
    assert result["content"] == [{"type": "text", "text": f"Hello, Ada{end}"}]


def test_quickstart_structured_note(client: MCPTestClient, quickstart: ModuleType) -> None:
    note_id, text = next(iter(quickstart.NOTES.items()))
    result = client.call_tool("get_note", {"note_id": note_id})
    assert result["structuredContent"] == {"id": note_id, "text": text, "length": len(text)}
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    missing = client.call_tool("get_note", {"note_id": "missing"})
    assert missing["isError"] is True and "missing" in missing["content"][0]["text"]


def test_quickstart_resources(client: MCPTestClient, quickstart: ModuleType) -> None:
    config = client.read_resource("config://app")[0]
    assert config["mimeType"] == "application/json" and json.loads(config["text"])["name"] == "quickstart"
    for note_id, text in quickstart.NOTES.items():
        assert client.read_resource(f"notes://{note_id}") == [
            {"uri": f"notes://{note_id}", "text": text, "mimeType": "text/plain"}
        ]
    error = client.error("resources/read", {"uri": "notes://nope"})
    assert error["code"] == -32002 and error["data"] == {"uri": "notes://nope"}


def test_quickstart_prompt_and_completions(client: MCPTestClient) -> None:
    messages = client.get_prompt("review_code", {"code": "print(1)", "language": "go"})["messages"]
    assert messages[0]["role"] == "user" and "go code" in messages[0]["content"]["text"]
    assert "print(1)" in messages[0]["content"]["text"]
    completion = client.request(
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "review_code"}, "argument": {"name": "language", "value": "ty"}},
    )["completion"]
    assert completion["values"] == ["typescript"]


def test_quickstart_ping_and_logging(client: MCPTestClient) -> None:
    assert client.request("ping") == {}
    assert client.request("logging/setLevel", {"level": "info"}) == {}


def every_example() -> t.Iterator[str]:
    yield from sorted(p.parent.name for p in EXAMPLES.glob("*/app.py"))


@pytest.mark.parametrize("name", list(every_example()))
def test_every_example_initializes(name: str) -> None:
    module = load_example(name)
    client = MCPTestClient(module.app, validator=SCHEMA)
    result = client.initialize()
    assert result["protocolVersion"] == "2025-11-25"
    client.list_tools()


@pytest.fixture(scope="module")
def conformance() -> MCPTestClient:
    client = MCPTestClient(load_example("conformance").create_app(), validator=SCHEMA)
    client.initialize(capabilities={"sampling": {}, "elicitation": {}})
    return client


def test_conformance_fixtures_without_context(conformance: MCPTestClient) -> None:
    assert (
        conformance.call_tool("test_simple_text")["content"][0]["text"] == "This is a simple text response for testing."
    )
    assert conformance.call_tool("test_audio_content")["content"][0]["mimeType"] == "audio/wav"
    assert conformance.call_tool("test_error_handling")["isError"] is True
    mixed = conformance.call_tool("test_multiple_content_types")["content"]
    assert [block["type"] for block in mixed] == ["text", "image", "resource"]
    assert "123" in conformance.read_resource("test://template/123/data")[0]["text"]
    messages = conformance.get_prompt("test_prompt_with_arguments", {"arg1": "x1", "arg2": "y2"})["messages"]
    assert "arg1='x1', arg2='y2'" in messages[0]["content"]["text"]


def test_conformance_raw_json_schema_is_advertised_verbatim(conformance: MCPTestClient) -> None:
    tool = next(t for t in conformance.list_tools() if t["name"] == "json_schema_2020_12_tool")
    schema = tool["inputSchema"]
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert set(schema["$defs"]) == {"address"} and schema["additionalProperties"] is False
    result = conformance.call_tool("json_schema_2020_12_tool", {"name": "Ada", "address": {"city": "X"}})
    assert '"name": "Ada"' in result["content"][0]["text"]
    rejected = conformance.call_tool("json_schema_2020_12_tool", {"name": 5})
    assert rejected["isError"] is True and "name" in rejected["content"][0]["text"]


def test_conformance_context_tool_answers_with_an_event_stream(conformance: MCPTestClient) -> None:
    response = conformance.post(
        {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "test_tool_with_logging"}}
    )
    assert response.mimetype == "text/event-stream"
    body = response.get_data(as_text=True)
    assert body.count("notifications/message") == 3 and '"id":9' in body
