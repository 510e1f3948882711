"""Every example, driven through Flask's test client and checked against the official schema."""

from __future__ import annotations

import collections
import importlib.util
import itertools
import json
import math
import re
import sys
import typing as t
from pathlib import Path
from types import ModuleType

import jsonschema
import pytest
from flask import Flask

from flask_mcp.testing import MCPTestClient, SchemaValidator

EXAMPLES = Path(__file__).resolve().parent
SCHEMA = SchemaValidator.official("2025-11-25")


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
    app, principal = module.app, None
    if hasattr(module, "OAuthServer"):
        # An example that is its own authorization server: the test stands in for a signed-in user.
        app, principal = module.create_app({"TESTING": True}), "alice"
    # An example protected by a bearer token names its own.
    client = MCPTestClient(app, validator=SCHEMA, token=getattr(module, "DEFAULT_TOKEN", None), principal=principal)
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
    assert {"allOf", "if", "then", "else"} <= set(schema) and schema["$defs"]["address"]["$anchor"] == "addressDef"
    arguments = {"name": "Ada", "address": {"city": "X"}, "contactMethod": "email", "email": "ada@example.org"}
    result = conformance.call_tool("json_schema_2020_12_tool", arguments)
    assert '"name": "Ada"' in result["content"][0]["text"]
    # if/then: a phone contact needs a phone number.
    assert conformance.call_tool("json_schema_2020_12_tool", {"contactMethod": "phone", "email": "a@b.c"})["isError"]
    rejected = conformance.call_tool("json_schema_2020_12_tool", {"name": 5})
    assert rejected["isError"] is True and "name" in rejected["content"][0]["text"]


def test_conformance_context_tool_answers_with_an_event_stream(conformance: MCPTestClient) -> None:
    response = conformance.post(
        {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "test_tool_with_logging"}}
    )
    assert response.mimetype == "text/event-stream"
    body = response.get_data(as_text=True)
    assert body.count("notifications/message") == 3 and '"id":9' in body


# docs_search: BM25 over docs/, an app template, a tool scaffold and one resource per page

DOCS = EXAMPLES.parent / "docs"


def load_sibling(example: str, module: str) -> ModuleType:
    """Import ``examples/<example>/<module>.py`` by its path, under a name of its own."""
    spec = importlib.util.spec_from_file_location(f"example_{example}_{module}", EXAMPLES / example / f"{module}.py")
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = loaded  # dataclasses look their module up while the class is built
    spec.loader.exec_module(loaded)
    return loaded


@pytest.fixture(scope="module")
def docs_search() -> ModuleType:
    return load_example("docs_search")


@pytest.fixture(scope="module")
def docs_index() -> ModuleType:
    return load_sibling("docs_search", "docs_index")


@pytest.fixture(params=[False, True], ids=["stateful", "stateless"])
def docs_client(request: pytest.FixtureRequest, docs_search: ModuleType) -> MCPTestClient:
    client = MCPTestClient(docs_search.create_app({"TESTING": True, "MCP_STATELESS": request.param}), validator=SCHEMA)
    client.initialize()
    return client


def doc_pages() -> list[str]:
    return sorted(p.stem for p in DOCS.glob("*.rst"))


def object_nodes(node: t.Any) -> t.Iterator[dict[str, t.Any]]:
    """Every JSON Schema object with ``properties`` inside *node*, *node* included."""
    if isinstance(node, dict):
        if "properties" in node:
            yield node
        for value in node.values():
            yield from object_nodes(value)
    elif isinstance(node, list):
        for value in node:
            yield from object_nodes(value)


def structured(client: MCPTestClient, name: str, arguments: dict[str, t.Any]) -> dict[str, t.Any]:
    """Call a tool that must succeed; its structured result, checked against its outputSchema."""
    result = client.call_tool(name, arguments)
    assert not result.get("isError"), result
    tool = next(tool for tool in client.list_tools() if tool["name"] == name)
    jsonschema.Draft202012Validator(tool["outputSchema"]).validate(result["structuredContent"])
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    return t.cast(dict[str, t.Any], result["structuredContent"])


def assert_names(result: dict[str, t.Any], field: str) -> None:
    """*result* is an error naming *field*: ``field: <problem>``, or among the unknown arguments."""
    text = result["content"][0]["text"]
    assert result["isError"] is True, result
    assert f"{field}:" in text or ("nknown" in text and re.search(rf"\b{re.escape(field)}\b", text)), text


def test_docs_search_tool_schemas(docs_client: MCPTestClient) -> None:
    tools = {tool["name"]: tool for tool in docs_client.list_tools()}
    assert set(tools) == {"search_docs", "get_app_template", "generate_tool_module"}
    for tool in tools.values():
        assert "outputSchema" in tool
        assert all(node["additionalProperties"] is False for node in object_nodes(tool["inputSchema"]))
    search = tools["search_docs"]["inputSchema"]
    assert search["required"] == ["query"]
    assert (search["properties"]["limit"]["minimum"], search["properties"]["limit"]["maximum"]) == (1, 50)
    assert search["properties"]["version"]["enum"] == ["latest", "all"]
    template = tools["get_app_template"]["inputSchema"]
    assert template["required"] == ["cache"] and template["properties"]["cache"]["enum"] == ["simple", "redis"]
    scaffold = tools["generate_tool_module"]["inputSchema"]
    assert sorted(scaffold["required"]) == ["fields", "name"]
    field_spec = scaffold["$defs"]["FieldSpec"]
    assert sorted(field_spec["required"]) == ["name", "type"] and field_spec["additionalProperties"] is False
    assert "date" in field_spec["properties"]["type"]["enum"]


def test_docs_search_bm25_by_hand(docs_index: ModuleType) -> None:
    # N = 3, avgdl = (3 + 2 + 4) / 3 = 3, k1 = 1.5, b = 0.75.
    bm25 = docs_index.BM25([["a", "b", "a"], ["b", "c"], ["c", "c", "c", "d"]])
    idf_a = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))
    idf_c = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    expected = [
        idf_a * 2 * 2.5 / (2 + 1.5 * (0.25 + 0.75 * 3 / 3)),
        idf_c * 1 * 2.5 / (1 + 1.5 * (0.25 + 0.75 * 2 / 3)),
        idf_c * 3 * 2.5 / (3 + 1.5 * (0.25 + 0.75 * 4 / 3)),
    ]
    assert bm25.scores(["a", "c"]) == pytest.approx(expected)
    assert bm25.scores(["a", "a", "c"]) == pytest.approx(expected)  # a repeated word counts once
    assert bm25.scores(["zzz"]) == [0.0, 0.0, 0.0]


def test_docs_search_index_of_a_small_folder(docs_index: ModuleType, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "_build").mkdir(parents=True)
    (docs / "_build" / "copy.rst").write_text("Copy\n====\n\nredis redis redis\n")
    (docs / "alpha.rst").write_text(
        "Alpha\n=====\n\nIntro with ``redis``.\n\nSetup\n-----\n\n" + "filler " * 40 + "then redis twice: redis.\n"
    )
    (docs / "beta.rst").write_text("Beta\n====\n\nNothing to see.\n")
    index = docs_index.DocsIndex(docs, tmp_path)
    assert list(index.pages) == ["alpha", "beta"]
    assert [s.id for s in index.sections] == ["alpha#alpha", "alpha#setup", "beta#beta"]
    results = index.search("Redis", limit=10)
    scores = dict(zip([s.id for s in index.sections], index.bm25.scores(["redis"]), strict=True))
    assert [r["id"] for r in results] == sorted(["alpha#alpha", "alpha#setup"], key=lambda id: -scores[id])
    top = scores[results[0]["id"]]
    assert [r["score"] for r in results] == [pytest.approx(scores[r["id"]] / top, abs=1e-6) for r in results]
    assert results[0]["score"] == 1.0 and 0 < results[1]["score"] < 1
    setup = next(r for r in results if r["id"] == "alpha#setup")
    assert setup["category"] == "Alpha" and setup["source"] == {"path": "docs/alpha.rst"}
    assert "redis" in setup["snippet"] and setup["snippet"].startswith("…") and len(setup["snippet"]) <= 162
    assert index.search("redis", limit=1) == results[:1]
    assert index.search(" \t") == [] and index.search("absent") == []


def test_docs_search_ranks_a_distinctive_term_first(docs_client: MCPTestClient, docs_search: ModuleType) -> None:
    sections = docs_search.docs().sections
    tokens = [set(re.findall(r"[a-z0-9]+", f"{s.title} {s.text}".lower())) for s in sections]
    counts = collections.Counter(token for found in tokens for token in found)
    distinctive = sorted(token for token, n in counts.items() if n == 1 and len(token) >= 8 and token.isalpha())
    assert distinctive, "the docs should hold words found in only one section"
    for term in distinctive[:: max(1, len(distinctive) // 5)]:
        section = sections[next(i for i, found in enumerate(tokens) if term in found)]
        assert term in (DOCS.parent / section.path).read_text().lower()
        payload = structured(docs_client, "search_docs", {"query": term.upper()})
        assert payload["query"] == term.upper() and payload["version"] == "all"
        assert [(r["id"], r["score"]) for r in payload["results"]] == [(section.id, 1.0)]
        assert term in payload["results"][0]["snippet"].lower()


def test_docs_search_orders_and_limits(docs_client: MCPTestClient) -> None:
    payload = structured(docs_client, "search_docs", {"query": "session cache redis", "limit": 5, "version": "latest"})
    scores = [r["score"] for r in payload["results"]]
    assert len(scores) == 5 and scores[0] == 1.0 and scores == sorted(scores, reverse=True) and scores[-1] > 0
    pages = set(doc_pages())
    assert all(r["page"] in pages and r["source"]["path"] == f"docs/{r['page']}.rst" for r in payload["results"])
    widest = structured(docs_client, "search_docs", {"query": "session cache redis", "limit": 50})
    assert widest["results"][:5] == payload["results"]


@pytest.mark.parametrize("query", ["", "   ", "?!"])
def test_docs_search_empty_query(docs_client: MCPTestClient, query: str) -> None:
    assert structured(docs_client, "search_docs", {"query": query}) == {"query": query, "version": "all", "results": []}


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"query": "x", "limit": 0}, "limit"),
        ({"query": "x", "limit": 51}, "limit"),
        ({"query": "x", "limit": "5"}, "limit"),
        ({"query": "x", "version": "v5"}, "version"),
        ({"query": "x", "page": 2}, "page"),
        ({}, "query"),
    ],
)
def test_docs_search_rejects_bad_arguments(docs_client: MCPTestClient, arguments: dict[str, t.Any], field: str) -> None:
    assert_names(docs_client.call_tool("search_docs", arguments), field)


@pytest.mark.parametrize(
    ("cache", "stateless", "rest", "auth"), list(itertools.product(["simple", "redis"], *[[False, True]] * 3))
)
def test_docs_search_app_template_compiles(
    docs_client: MCPTestClient, cache: str, stateless: bool, rest: bool, auth: bool
) -> None:
    arguments = {"cache": cache, "stateless": stateless, "rest": rest, "auth": auth}
    payload = structured(docs_client, "get_app_template", arguments)
    assert payload["configuration"] == arguments
    assert payload["dependencies"] == (["flask_mcp[redis]"] if cache == "redis" else ["flask_mcp"])
    for path, file in payload["files"].items():
        assert file["path"] == path and file["size"] == len(file["content"].encode())
    app_py = payload["files"]["app.py"]["content"]
    compile(app_py, "app.py", "exec")
    assert ('"RedisCache"' in app_py) is (cache == "redis") and ("MCP_STATELESS=True" in app_py) is stateless
    assert f"MCP_REST_ENABLED={rest}" in app_py and ("MCP_API_TOKEN" in app_py) is auth


def generated_app(docs_client: MCPTestClient, **arguments: t.Any) -> Flask:
    """Run the generated app.py of a configuration and return its ``app``."""
    source = structured(docs_client, "get_app_template", arguments)["files"]["app.py"]["content"]
    namespace: dict[str, t.Any] = {"__name__": "generated_app"}
    exec(compile(source, "app.py", "exec"), namespace)
    return t.cast(Flask, namespace["app"])


@pytest.mark.parametrize("stateless", [False, True])
def test_docs_search_app_template_runs(docs_client: MCPTestClient, stateless: bool) -> None:
    client = MCPTestClient(generated_app(docs_client, cache="simple", stateless=stateless), validator=SCHEMA)
    client.initialize()
    assert client.call_tool("add", {"a": 2, "b": 3})["structuredContent"] == {"result": 5}


def test_docs_search_app_template_auth(docs_client: MCPTestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_API_TOKEN", "s3cret")
    app = generated_app(docs_client, cache="simple", auth=True)
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    refused = app.test_client().post("/mcp", json=ping, headers={"Authorization": "Bearer wrong"})
    assert refused.status_code == 401 and refused.json == {"error": "missing or wrong bearer token"}
    client = MCPTestClient(app, validator=SCHEMA, token="s3cret")
    assert client.initialize()["protocolVersion"] == "2025-11-25"


@pytest.mark.parametrize(
    ("arguments", "field"),
    [({}, "cache"), ({"cache": "memcached"}, "cache"), ({"cache": "simple", "auth": "yes"}, "auth")],
)
def test_docs_search_app_template_rejects(docs_client: MCPTestClient, arguments: dict[str, t.Any], field: str) -> None:
    assert_names(docs_client.call_tool("get_app_template", arguments), field)


def test_docs_search_scaffolds_a_tool(docs_client: MCPTestClient) -> None:
    specs = [
        {"name": name, "type": kind, "required": name.startswith("need")}
        for name, kind in [("needText", "string"), ("count", "integer"), ("needDay", "date"), ("ratio", "number")]
    ] + [{"name": "tags", "type": "array"}, {"name": "extra", "type": "object"}, {"name": "flag", "type": "boolean"}]
    payload = structured(docs_client, "generate_tool_module", {"name": "  Make Invoice 2!", "fields": specs})
    assert payload["name"] == "make_invoice_2" and payload["fieldCount"] == len(specs)
    module = payload["files"]["tools/make_invoice_2.py"]
    assert module["kind"] == "module" and payload["files"]["tests/test_make_invoice_2.py"]["kind"] == "test"
    for path, file in payload["files"].items():
        compile(file["content"], path, "exec")
    namespace: dict[str, t.Any] = {"__name__": "generated_tool"}
    exec(compile(module["content"], "make_invoice_2.py", "exec"), namespace)
    app = Flask("generated_tool")
    namespace["mcp"].init_app(app)
    client = MCPTestClient(app, validator=SCHEMA)
    client.initialize()
    tool = client.list_tools()[0]
    assert tool["name"] == "make_invoice_2" and sorted(tool["inputSchema"]["required"]) == ["needDay", "needText"]
    result = client.call_tool("make_invoice_2", {"needText": "x", "needDay": "2024-02-29", "count": 3})
    assert result["structuredContent"] == {
        **{spec["name"]: None for spec in specs},
        **{"needText": "x", "needDay": "2024-02-29", "count": 3},
    }
    assert client.call_tool("make_invoice_2", {"needText": "x"})["isError"] is True


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"fields": [{"name": "a", "type": "string"}]}, "name"),
        ({"name": "x", "fields": []}, "fields"),
        ({"name": "x"}, "fields"),
        ({"name": "x", "fields": [{"name": "a", "type": "uuid"}]}, "fields.0.type"),
        ({"name": "x", "fields": [{"name": "a", "type": "string", "unique": True}]}, "fields.0.unique"),
        ({"name": "x", "fields": [{"name": "not valid", "type": "string"}]}, "fields.0.name"),
        ({"name": "x", "fields": [{"name": "class", "type": "string"}]}, "fields.0.name"),
        ({"name": "x", "fields": [{"name": "fields", "type": "string"}]}, "fields.0.name"),
        ({"name": "x", "fields": [{"name": "a", "type": "string"}, {"name": "a", "type": "date"}]}, "fields"),
        ({"name": "?!-", "fields": [{"name": "a", "type": "string"}]}, "name"),
        ({"name": "x", "fields": [{"name": "a", "type": "string"}], "database": "sqlite"}, "database"),
    ],
)
def test_docs_search_scaffold_rejects(docs_client: MCPTestClient, arguments: dict[str, t.Any], field: str) -> None:
    assert_names(docs_client.call_tool("generate_tool_module", arguments), field)


def test_docs_search_page_resources(docs_client: MCPTestClient) -> None:
    [template] = docs_client.list_resource_templates()
    assert template["uriTemplate"] == "docs://{page}" and template["mimeType"] == "text/x-rst"
    for page in doc_pages():
        [content] = docs_client.read_resource(f"docs://{page}")
        assert content == {
            "uri": f"docs://{page}",
            "mimeType": "text/x-rst",
            "text": (DOCS / f"{page}.rst").read_text(),
        }
    [listing] = docs_client.read_resource("docs://index.json")
    index = json.loads(listing["text"])
    assert [entry["page"] for entry in index] == doc_pages()
    assert all(entry["uri"] == f"docs://{entry['page']}" and entry["sections"] for entry in index)
    for uri in ["docs://nope", "docs://..%2Fsetup.cfg", "docs://_build"]:
        error = docs_client.error("resources/read", {"uri": uri})
        assert error["code"] == -32002 and error["data"] == {"uri": uri}


@pytest.mark.parametrize("typed", ["", "s", "co", "zz"])
def test_docs_search_completes_pages(docs_client: MCPTestClient, typed: str) -> None:
    completion = docs_client.complete({"type": "ref/resource", "uri": "docs://{page}"}, "page", typed)
    assert completion["values"] == [page for page in doc_pages() if page.startswith(typed)]


# -- auth: a server protected by a static bearer token ---------------------------------


@pytest.fixture(scope="module")
def auth_example() -> ModuleType:
    return load_example("auth")


def auth_client(module: ModuleType, token: str | None) -> MCPTestClient:
    return MCPTestClient(module.create_app({"TESTING": True}), validator=SCHEMA, token=token)


def test_auth_refuses_without_token(auth_example: ModuleType) -> None:
    client = auth_client(auth_example, None)
    response = client.post({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert response.status_code == 401
    assert "resource_metadata=" in response.headers["WWW-Authenticate"]
    metadata = client.http.get("/.well-known/oauth-protected-resource/mcp").get_json()
    assert metadata["resource"] == "http://localhost/mcp" and "admin" in metadata["scopes_supported"]


def test_auth_demo_token(auth_example: ModuleType) -> None:
    client = auth_client(auth_example, auth_example.DEFAULT_TOKEN)
    client.initialize()
    assert client.call_tool("whoami")["content"][0]["text"] == "you are demo-user"
    denied = client.post(
        {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "reset_notes", "arguments": {}}}
    )
    assert denied.status_code == 403
    assert 'error="insufficient_scope", scope="admin"' in denied.headers["WWW-Authenticate"]
    assert auth_example.NOTES  # nothing was deleted


def test_auth_token_from_environment(auth_example: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_DEMO_TOKEN", "from-env")
    assert auth_client(auth_example, "from-env").initialize()["serverInfo"]["name"] == "auth-demo"
    refused = auth_client(auth_example, auth_example.DEFAULT_TOKEN).post({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert refused.status_code == 401


# -- tasks_app: Flask-SQLAlchemy, list tools with lookups, scopes (examples/tasks_app/test_app.py has the rest)


@pytest.fixture(scope="module")
def tasks_app() -> ModuleType:
    return load_example("tasks_app")


def tasks_client(module: ModuleType, token: str, stateless: bool = False) -> MCPTestClient:
    client = MCPTestClient(
        module.create_app({"TESTING": True, "MCP_STATELESS": stateless}), validator=SCHEMA, token=token
    )
    client.initialize()
    return client


@pytest.mark.parametrize("stateless", [False, True], ids=["stateful", "stateless"])
def test_tasks_app_lists_everything(tasks_app: ModuleType, stateless: bool) -> None:
    client = tasks_client(tasks_app, tasks_app.DEFAULT_TOKEN, stateless)
    assert {tool["name"] for tool in client.list_tools()} == {
        "list_tasks",
        "get_task",
        "create_task",
        "complete_task",
        "tasks_report",
        "server_status",
    }
    assert [t["uriTemplate"] for t in client.list_resource_templates()] == ["tasks://{task_id}"]
    assert [p["name"] for p in client.request("prompts/list")["prompts"]] == ["plan_day"]
    page = client.call_tool("list_tasks", {"done": False, "priority__lte": 2, "ordering": "priority"})
    expected = sorted(
        (row for row in tasks_app.SEED if not row.get("done") and row["priority"] <= 2), key=lambda r: r["priority"]
    )
    assert [item["id"] for item in page["structuredContent"]["items"]] == [row["id"] for row in expected]


def test_tasks_app_demo_tokens(tasks_app: ModuleType) -> None:
    reader = tasks_client(tasks_app, tasks_app.DEFAULT_TOKEN)
    denied = reader.post(
        {
            "jsonrpc": "2.0",
            "id": 9,
            "method": "tools/call",
            "params": {"name": "create_task", "arguments": {"title": "x"}},
        }
    )
    assert denied.status_code == 403
    assert 'error="insufficient_scope", scope="tasks:write"' in denied.headers["WWW-Authenticate"]
    writer_token = next(token for token, entry in tasks_app.DEMO_TOKENS.items() if "tasks:write" in entry["scopes"])
    writer = tasks_client(tasks_app, writer_token)
    created = writer.call_tool("create_task", {"title": "Water the plants", "priority": 2})["structuredContent"]
    assert created["owner"] == tasks_app.DEMO_TOKENS[writer_token]["subject"]
    [content] = writer.read_resource(f"tasks://{created['id']}")
    assert json.loads(content["text"]) == created


# -- smorest_app: a flask-smorest API's endpoints as tools, under the app's own auth -------------------------------


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def bookshop_url() -> t.Iterator[str]:
    from tests.conftest import LiveServer

    module = load_example("smorest_app")
    module.seed()
    with LiveServer(module.app) as server:
        yield server.url + "/mcp"


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
async def test_smorest_app_with_the_official_client(bookshop_url: str, mode: t.Any) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with Client(bookshop_url, mode=mode) as anonymous:
        names = {tool.name for tool in (await anonymous.list_tools()).tools}
        assert names == {"books_list_books", "books_get_book", "books_add_book", "admin_stats"}
        page = await anonymous.call_tool("books_list_books", {"author": "George Eliot", "page_size": 1})
        assert not page.is_error and page.structured_content is not None
        assert [book["title"] for book in page.structured_content["result"]] == ["Middlemarch"]
        refused = await anonymous.call_tool("books_add_book", {"title": "Emma", "author": "Jane Austen"})
        assert refused.is_error and "401" in refused.content[0].text  # type: ignore[union-attr]
        assert (await anonymous.call_tool("admin_stats", {})).is_error
    headers = {"Authorization": "Bearer librarian-token"}
    http = httpx2.AsyncClient(headers=headers)
    async with http, Client(streamable_http_client(bookshop_url, http_client=http), mode=mode) as librarian:
        added = await librarian.call_tool("books_add_book", {"title": "Emma", "author": "Jane Austen"})
        assert not added.is_error
        assert added.structured_content == {"id": 4, "title": "Emma", "author": "Jane Austen", "year": None}
        stats = await librarian.call_tool("admin_stats", {})
        assert stats.structured_content == {"books": 4, "authors": 2, "by": "ada"}


# -- sales_app: an MCP App (a tool and its view) --------------------------------------------


def test_sales_app_serves_its_tool_and_its_view() -> None:
    module = load_example("sales_app")
    client = MCPTestClient(module.app, modern_validator=SchemaValidator.official("2026-07-28"))
    (tool,) = client.list_tools()
    uri = tool["_meta"]["ui"]["resourceUri"]
    (view,) = client.read_resource(uri)
    assert view["mimeType"] == "text/html;profile=mcp-app" and '<table id="sales">' in view["text"]
    result = client.call_tool("sales_report", {"year": 2026})
    assert result["structuredContent"]["total"] == 358
