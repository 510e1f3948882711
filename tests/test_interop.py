"""Interoperability: the official MCP Python SDK client against a live flask_mcp server.

Every test starts a real threaded werkzeug server on a free port and connects
``mcp.Client`` to it over Streamable HTTP in three ways: with the initialize
handshake (``mode="legacy"``), in the stateless 2026-07-28 revision
(``mode="2026-07-28"``), and with the ``server/discover`` probe
(``mode="auto"``), which must settle on 2026-07-28.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import decimal
import json
import logging
import struct
import typing as t
import zlib

import anyio
import httpx2
import marshmallow as ma
import mcp_types as types
import pytest
from flask import Flask, Response, abort, request
from marshmallow import fields
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated, ToolsListChanged

import flask_mcp
from flask_mcp import MCP, PromptMessage, ToolError
from flask_mcp.protocol.errors import MASKED_MESSAGE

pytestmark = pytest.mark.anyio

MODES = ["legacy", "auto", "2026-07-28"]
MODERN = flask_mcp.MODERN_PROTOCOL_VERSIONS[0]
# The SDK deprecates ping and logging/setLevel for its future (2026) protocol only.
ignore_sdk_deprecation = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

# -- the server under test ---------------------------------------------------

demo = MCP(
    name="interop-demo",
    version="3.1.4",
    title="Interop demo",
    instructions="Use add for sums; notes live under notes://{note_id}.",
)


class AddArguments(ma.Schema):
    a = fields.Integer(required=True, strict=True, metadata={"description": "first addend"})
    b = fields.Integer(required=True, strict=True, metadata={"description": "second addend"})


class StatsSchema(ma.Schema):
    count = fields.Integer()
    total = fields.Float()
    mean = fields.Float()


def solid_png(rgb: bytes) -> bytes:
    """A valid 1x1 PNG of one colour."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00" + rgb))
        + chunk(b"IEND", b"")
    )


@demo.tool(input_schema=AddArguments, annotations={"readOnlyHint": True, "idempotentHint": True})
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@demo.tool
def repeat(word: str, times: int = 2) -> str:
    """Repeat a word."""
    return " ".join([word] * times)


@demo.tool(output_schema=StatsSchema)
def stats(values: list[float]) -> dict[str, t.Any]:
    """Count, total and mean of some numbers."""
    total = sum(values)
    return {"count": len(values), "total": total, "mean": total / len(values)}


@dataclasses.dataclass
class Rectangle:
    width: float
    height: float
    area: float


@demo.tool
def rectangle(width: float, height: float) -> Rectangle:
    """A dataclass return annotation is the output schema."""
    return Rectangle(width, height, width * height)


@dataclasses.dataclass
class Quote:
    item: str
    price: decimal.Decimal


@demo.tool
def quote(item: str, quantity: int) -> Quote:
    """Structured output with a Decimal field."""
    return Quote(item, decimal.Decimal("2.35") * quantity)


@demo.tool
def divide(a: float, b: float) -> float:
    """Divide a by b."""
    if b == 0:
        raise ToolError(f"cannot divide {a:g} by zero")
    return a / b


@demo.tool
def crash(detail: str) -> str:
    """Fail with an unexpected exception."""
    raise RuntimeError(f"database password is {detail}")


@demo.tool
def swatch(red: int, green: int, blue: int) -> list[flask_mcp.Content]:
    """A colour as its hex code and a 1x1 PNG."""
    return [
        flask_mcp.TextContent(f"#{red:02x}{green:02x}{blue:02x}"),
        flask_mcp.ImageContent(solid_png(bytes([red, green, blue])), "image/png"),
    ]


@demo.tool
def pixel(red: int, green: int, blue: int) -> flask_mcp.ImageContent:
    """Return annotation: one of flask_mcp's own content classes."""
    return flask_mcp.ImageContent(solid_png(bytes([red, green, blue])), "image/png")


@demo.tool
def checked(value: int) -> flask_mcp.ToolResult:
    """Return annotation: flask_mcp's ToolResult."""
    return flask_mcp.ToolResult([f"{value} checked"], structured_content={"value": value})


@demo.tool
async def shout(text: str) -> str:
    """An ``async def`` tool."""
    return text.upper() + "!"


APP_CONFIG = {"theme": "dark", "features": ["search", "export"], "max_items": 50}
NOTES = {1: "Buy milk", 2: "Call Alice", 12: "Water the plants", 21: "Renew passport"}
ALL_BYTES = bytes(range(256))
LANGUAGES = ["Python", "Perl", "PHP", "Rust", "Ruby", "Go"]


def complete_note_id(value: str, arguments: dict[str, str]) -> list[str]:
    return sorted(str(note_id) for note_id in NOTES if str(note_id).startswith(value))


@demo.resource("config://app", description="Application settings.")
def app_config() -> dict[str, t.Any]:
    return APP_CONFIG


@demo.resource("notes://{note_id}", mime_type="text/plain", completions={"note_id": complete_note_id})
def note(note_id: int) -> str:
    """One note by id."""
    if note_id not in NOTES:
        abort(404)
    return NOTES[note_id]


@demo.resource("data://all-bytes", mime_type="application/octet-stream")
def all_bytes() -> bytes:
    return ALL_BYTES


@demo.prompt(completions={"language": LANGUAGES})
def review(
    code: t.Annotated[str, "The code to review"],
    language: str = "Python",
    tone: t.Literal["friendly", "strict"] = "friendly",
) -> list[PromptMessage]:
    """Ask for a code review."""
    return [
        PromptMessage("user", f"Review this {language} code, in a {tone} tone:\n\n{code}"),
        PromptMessage("assistant", f"Reviewing the {language} code."),
    ]


# -- fixtures and helpers ------------------------------------------------------


@dataclasses.dataclass
class Exchange:
    """One HTTP request the server answered."""

    method: str
    session_id: str | None
    protocol_version: str | None
    status: int


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def exchanges() -> list[Exchange]:
    """Filled by the app with every request it answered, in order."""
    return []


@pytest.fixture
def app(make_app: t.Callable[..., Flask], exchanges: list[Exchange]) -> Flask:
    """The demo server in its default (stateful) configuration."""
    return recording(make_app(demo), exchanges)


def recording(app: Flask, exchanges: list[Exchange]) -> Flask:
    """Record each exchange (after_request runs before the client gets the answer)."""

    @app.after_request
    def record(response: Response) -> Response:
        headers = request.headers
        exchanges.append(
            Exchange(
                request.method,
                headers.get("Mcp-Session-Id"),
                headers.get("MCP-Protocol-Version"),
                response.status_code,
            )
        )
        return response

    return app


@contextlib.contextmanager
def serve(live_server: t.Any, app: Flask) -> t.Iterator[str]:
    """Serve *app* live and yield its MCP endpoint URL."""
    with live_server(app) as server:
        yield f"{server.url}/mcp"


@pytest.fixture
def url(app: Flask, live_server: t.Any) -> t.Iterator[str]:
    """The MCP endpoint of *app* served live."""
    with serve(live_server, app) as endpoint:
        yield endpoint


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return t.cast(str, request.param)


@pytest.fixture
async def client(url: str, mode: str) -> t.AsyncIterator[Client]:
    """A connected SDK client."""
    async with Client(url, mode=mode) as connected:
        yield connected


def texts(blocks: t.Sequence[t.Any]) -> list[str]:
    """The text of every text block."""
    return [block.text for block in blocks if isinstance(block, types.TextContent)]


def tool_named(listing: types.ListToolsResult, name: str) -> types.Tool:
    return next(tool for tool in listing.tools if tool.name == name)


# -- lifecycle -------------------------------------------------------------------


async def test_initialize_reports_server_info_and_capabilities(client: Client, mode: str) -> None:
    """The handshake result (legacy) or the discover result (modern) reaches the client intact."""
    expected = flask_mcp.LATEST_PROTOCOL_VERSION if mode == "legacy" else MODERN
    assert client.protocol_version == expected
    if mode == "2026-07-28":
        # Pinned to a revision, the client discovers nothing: ask as the probe would.
        client.session.adopt(types.DiscoverResult.model_validate(await client.session.send_discover(MODERN)))
    assert client.server_info is not None
    info = client.server_info
    assert (info.name, info.version, info.title) == (demo.name, demo.version, demo.title)
    assert client.instructions == demo.instructions
    caps = client.server_capabilities
    for capability in (caps.tools, caps.resources, caps.prompts, caps.completions, caps.logging):
        assert capability is not None


async def test_session_is_used_and_deleted_on_close(app: Flask, url: str, exchanges: list[Exchange]) -> None:
    """Every request after initialize carries the issued session, which closing the client deletes."""
    async with Client(url, mode="legacy") as client:
        await client.list_tools()
        version = client.protocol_version
    posts = [x for x in exchanges if x.method == "POST" and x.status == 200]
    session_id = posts[-1].session_id
    assert session_id is not None
    assert posts[0].session_id is None  # initialize
    assert all(x.session_id == session_id for x in posts[1:])
    assert all(x.protocol_version == version for x in posts[1:])
    assert [x.status for x in exchanges if x.method == "DELETE"] == [204]
    assert app.extensions["mcp"].sessions.load(session_id) is None


@pytest.mark.parametrize("mode", ["auto", "2026-07-28"])
async def test_modern_clients_never_get_a_session(
    url: str, mode: str, exchanges: list[Exchange], caplog: pytest.LogCaptureFixture
) -> None:
    """The discover probe settles auto mode on 2026-07-28; no request then carries or gets a session.

    The probe is an ordinary request: it gets a 200 and leaves no warning or error in the server's log.
    """
    with caplog.at_level(logging.INFO):
        async with Client(url, mode=mode) as client:
            assert client.protocol_version == MODERN
            await client.list_tools()
            await client.call_tool("add", {"a": 1, "b": 2})
    assert [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING] == []
    assert exchanges and all(x.method == "POST" and x.status == 200 for x in exchanges)
    assert all(x.session_id is None and x.protocol_version == MODERN for x in exchanges)


async def test_auto_mode_falls_back_to_the_handshake_when_the_modern_era_is_off(
    make_app: t.Callable[..., Flask], live_server: t.Any
) -> None:
    """With MCP_MODERN_ERA off the probe is refused, and auto mode initializes instead."""
    exchanges: list[Exchange] = []
    app = recording(make_app(demo, MCP_MODERN_ERA=False), exchanges)
    with serve(live_server, app) as endpoint:
        async with Client(endpoint, mode="auto") as client:
            assert client.protocol_version == flask_mcp.LATEST_PROTOCOL_VERSION
    probe, handshake = exchanges[0], exchanges[1]
    assert probe.status == 400 and probe.protocol_version == MODERN
    assert handshake.status == 200 and handshake.session_id is None


@ignore_sdk_deprecation
async def test_ping(url: str) -> None:
    """ping answers with an empty result (handshake era; the modern era removed it)."""
    async with Client(url, mode="legacy") as client:
        result = await client.send_ping()
    assert isinstance(result, types.EmptyResult)
    assert result.model_dump(exclude_none=True) == {}


@ignore_sdk_deprecation
async def test_set_logging_level_is_stored_in_the_session(app: Flask, url: str, exchanges: list[Exchange]) -> None:
    """Every level the SDK can send is accepted and remembered by the session (handshake era)."""
    store = app.extensions["mcp"].sessions
    async with Client(url, mode="legacy") as client:
        for level in t.get_args(types.LoggingLevel):
            result = await client.set_logging_level(level)
            assert isinstance(result, types.EmptyResult)
            session_id = exchanges[-1].session_id
            assert session_id is not None
            assert store.load(session_id).log_level == level


# -- tools -------------------------------------------------------------------------


async def test_list_tools_matches_registrations(client: Client) -> None:
    """Names, descriptions and input schemas come through unchanged."""
    listing = await client.list_tools()
    assert {tool.name for tool in listing.tools} == set(demo.tools)
    for tool in listing.tools:
        registered = demo.tools[tool.name]
        assert tool.description == registered.description
        assert tool.input_schema == registered.descriptor["inputSchema"]
    add_schema = tool_named(listing, "add").input_schema
    assert set(add_schema["required"]) == {"a", "b"}
    assert add_schema["properties"]["a"]["type"] == "integer"
    repeat_schema = tool_named(listing, "repeat").input_schema
    assert repeat_schema["required"] == ["word"]
    annotations = tool_named(listing, "add").annotations
    assert annotations is not None and annotations.read_only_hint and annotations.idempotent_hint


async def test_list_tools_page_by_page(make_app: t.Callable[..., Flask], live_server: t.Any, mode: str) -> None:
    """The client follows ``nextCursor`` through small pages to the full listing."""
    with serve(live_server, make_app(demo, MCP_PAGE_SIZE=3)) as endpoint:
        async with Client(endpoint, mode=mode) as client:
            pages = [await client.list_tools()]
            while pages[-1].next_cursor is not None:
                pages.append(await client.list_tools(cursor=pages[-1].next_cursor))
    assert [len(page.tools) for page in pages[:-1]] == [3] * (len(pages) - 1)
    names = [tool.name for page in pages for tool in page.tools]
    assert sorted(names) == sorted(demo.tools) and len(pages) == -(-len(demo.tools) // 3)


@pytest.mark.parametrize(("a", "b"), [(2, 3), (-17, 5), (123_456_789, 987_654_321)])
async def test_call_tool_with_marshmallow_schema(client: Client, a: int, b: int) -> None:
    """A non-dict result comes back as text plus ``{"result": ...}``."""
    result = await client.call_tool("add", {"a": a, "b": b})
    assert not result.is_error
    assert texts(result.content) == [str(a + b)]
    assert result.structured_content == {"result": a + b}


@pytest.mark.parametrize(("word", "times"), [("echo", 3), ("hi", 1)])
async def test_call_type_hinted_tool(client: Client, word: str, times: int) -> None:
    """Hints build the schema; a string result is one text block."""
    result = await client.call_tool("repeat", {"word": word, "times": times})
    assert not result.is_error
    assert texts(result.content) == [" ".join([word] * times)]
    default = await client.call_tool("repeat", {"word": word})
    assert texts(default.content) == [f"{word} {word}"]


@pytest.mark.parametrize(
    ("name", "arguments", "expected", "properties"),
    [
        ("stats", {"values": [1.5, 4.0, 10.25]}, stats([1.5, 4.0, 10.25]), set(StatsSchema().fields)),
        ("rectangle", {"width": 2.5, "height": 4}, dataclasses.asdict(rectangle(2.5, 4)), {"width", "height", "area"}),
    ],
)
async def test_structured_output_matches_the_advertised_schema(
    client: Client, name: str, arguments: dict[str, t.Any], expected: dict[str, t.Any], properties: set[str]
) -> None:
    """The client validates structuredContent against the advertised outputSchema."""
    listing = await client.list_tools()
    output_schema = tool_named(listing, name).output_schema
    assert output_schema is not None
    assert output_schema == demo.tools[name].descriptor["outputSchema"]
    assert set(output_schema["properties"]) == properties
    assert tool_named(listing, "add").output_schema is None

    result = await client.call_tool(name, arguments)
    assert not result.is_error
    assert result.structured_content == expected
    assert json.loads(texts(result.content)[0]) == expected


async def test_structured_output_with_a_decimal(client: Client) -> None:
    """A Decimal in structured output must match its advertised type."""
    result = await client.call_tool("quote", {"item": "apple", "quantity": 3})
    assert not result.is_error and result.structured_content is not None
    assert result.structured_content["item"] == "apple"
    assert decimal.Decimal(str(result.structured_content["price"])) == quote("apple", 3).price


async def test_tool_error_is_shown_to_the_model(client: Client) -> None:
    """ToolError becomes ``isError`` with its message; success still works."""
    ok = await client.call_tool("divide", {"a": 9, "b": 4})
    assert not ok.is_error and ok.structured_content == {"result": 2.25}
    failed = await client.call_tool("divide", {"a": 7.5, "b": 0})
    assert failed.is_error is True
    assert "cannot divide 7.5 by zero" in texts(failed.content)[0]


async def test_unexpected_exception_is_masked(client: Client) -> None:
    """An unexpected exception is an error result that hides its detail."""
    result = await client.call_tool("crash", {"detail": "hunter2"})
    assert result.is_error is True
    [text] = texts(result.content)
    assert MASKED_MESSAGE in text and "hunter2" not in text


@pytest.mark.parametrize(
    ("arguments", "bad_fields"),
    [
        ({"a": "1", "b": 2}, {"a"}),
        ({"a": 1}, {"b"}),
        ({"a": 1.5, "b": "x"}, {"a", "b"}),
    ],
)
async def test_invalid_arguments_name_the_fields(
    client: Client, arguments: dict[str, t.Any], bad_fields: set[str]
) -> None:
    """Validation failures are error results naming each offending field."""
    result = await client.call_tool("add", arguments)
    assert result.is_error is True
    [text] = texts(result.content)
    for name in ("a", "b"):
        assert (f"{name}: " in text) == (name in bad_fields), text


async def test_tool_returning_several_blocks_and_an_image(client: Client) -> None:
    """Content objects pass through; image data decodes to the same bytes."""
    result = await client.call_tool("swatch", {"red": 255, "green": 128, "blue": 7})
    assert not result.is_error
    text, image = result.content
    assert isinstance(text, types.TextContent) and text.text == "#ff8007"
    assert isinstance(image, types.ImageContent) and image.mime_type == "image/png"
    assert base64.b64decode(image.data) == solid_png(bytes([255, 128, 7]))


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("pixel", {"red": 1, "green": 2, "blue": 3}, {"content": [pixel(1, 2, 3).to_dict()]}),
        ("checked", {"value": 41}, checked(41).to_dict()),
    ],
)
async def test_tool_annotated_with_a_content_class(
    client: Client, name: str, arguments: dict[str, t.Any], expected: dict[str, t.Any]
) -> None:
    """Returning flask_mcp's own result classes needs no output schema."""
    result = await client.call_tool(name, arguments)
    wire = result.model_dump(by_alias=True, exclude_none=True, exclude={"result_type", "meta"})
    assert wire == {**expected, "isError": False}
    assert tool_named(await client.list_tools(), name).output_schema is None


async def test_async_tool(client: Client) -> None:
    """An ``async def`` tool is awaited inside the Flask request."""
    result = await client.call_tool("shout", {"text": "hello"})
    assert texts(result.content) == ["HELLO!"], result
    assert not result.is_error


async def test_unknown_tool_is_a_protocol_error(client: Client) -> None:
    """Calling an unknown tool raises the JSON-RPC error on the client."""
    with pytest.raises(MCPError) as info:
        await client.call_tool("nope", {})
    assert info.value.error.code == types.INVALID_PARAMS
    assert "nope" in info.value.error.message


# -- resources ----------------------------------------------------------------------


async def test_list_resources_and_templates(client: Client) -> None:
    """Static resources and templates are listed separately."""
    resources = (await client.list_resources()).resources
    assert {str(resource.uri) for resource in resources} == set(demo.resources)
    config = next(resource for resource in resources if str(resource.uri) == "config://app")
    assert config.description == "Application settings."
    templates = (await client.list_resource_templates()).resource_templates
    assert [(tpl.uri_template, tpl.name, tpl.mime_type) for tpl in templates] == [
        ("notes://{note_id}", "note", "text/plain")
    ]


async def test_read_json_resource(client: Client) -> None:
    """A dict is served as JSON text."""
    [contents] = (await client.read_resource("config://app")).contents
    assert isinstance(contents, types.TextResourceContents)
    assert str(contents.uri) == "config://app" and contents.mime_type == "application/json"
    assert json.loads(contents.text) == APP_CONFIG


@pytest.mark.parametrize("note_id", sorted(NOTES))
async def test_read_templated_resource(client: Client, note_id: int) -> None:
    """The contents carry the concrete URI, not the template."""
    uri = f"notes://{note_id}"
    [contents] = (await client.read_resource(uri)).contents
    assert isinstance(contents, types.TextResourceContents)
    assert (str(contents.uri), contents.text, contents.mime_type) == (uri, NOTES[note_id], "text/plain")


async def test_read_binary_resource(client: Client) -> None:
    """Bytes travel as a base64 blob."""
    [contents] = (await client.read_resource("data://all-bytes")).contents
    assert isinstance(contents, types.BlobResourceContents)
    assert contents.mime_type == "application/octet-stream"
    assert base64.b64decode(contents.blob) == ALL_BYTES


@pytest.mark.parametrize("uri", ["notes://404", "nothing://here"])
async def test_missing_resource_is_resource_not_found(client: Client, mode: str, uri: str) -> None:
    """abort(404) and unknown URIs both become -32002 with the URI (-32602 in the modern era)."""
    with pytest.raises(MCPError) as info:
        await client.read_resource(uri)
    assert info.value.error.code == (-32002 if mode == "legacy" else types.INVALID_PARAMS)
    assert info.value.error.data == {"uri": uri}


# -- prompts and completion -----------------------------------------------------------


async def test_list_prompts(client: Client) -> None:
    """Arguments come from the signature, with descriptions and required flags."""
    [prompt] = (await client.list_prompts()).prompts
    assert (prompt.name, prompt.description) == ("review", "Ask for a code review.")
    arguments = {argument.name: argument for argument in prompt.arguments or ()}
    assert list(arguments) == ["code", "language", "tone"]
    assert arguments["code"].required is True and arguments["code"].description == "The code to review"
    assert not arguments["language"].required and not arguments["tone"].required


@pytest.mark.parametrize(
    "arguments",
    [
        {"code": "print('hi')"},
        {"code": "fn main() {}", "language": "Rust", "tone": "strict"},
    ],
)
async def test_get_prompt_carries_the_arguments(client: Client, arguments: dict[str, str]) -> None:
    """The rendered messages match what the prompt function returns."""
    result = await client.get_prompt("review", arguments)
    rendered = [(message.role, texts([message.content])) for message in result.messages]
    assert rendered == [(message.role, [message.content]) for message in review(**arguments)]
    assert arguments["code"] in rendered[0][1][0]
    assert result.description == "Ask for a code review."


async def test_get_prompt_with_invalid_arguments(client: Client) -> None:
    """A value outside a Literal is an invalid-params error naming the argument."""
    with pytest.raises(MCPError) as info:
        await client.get_prompt("review", {"code": "x", "tone": "rude"})
    assert info.value.error.code == types.INVALID_PARAMS
    assert "tone" in info.value.error.message


PROMPT = types.PromptReference(type="ref/prompt", name="review")
NOTES_TEMPLATE = types.ResourceTemplateReference(type="ref/resource", uri="notes://{note_id}")


@pytest.mark.parametrize(
    ("ref", "argument", "prefix", "expected"),
    [
        (PROMPT, "language", "p", ["Python", "Perl", "PHP"]),
        (PROMPT, "language", "RU", ["Rust", "Ruby"]),
        (PROMPT, "language", "", LANGUAGES),
        (PROMPT, "language", "x", []),
        (PROMPT, "tone", "s", ["strict"]),
        (PROMPT, "code", "", []),
        (NOTES_TEMPLATE, "note_id", "1", complete_note_id("1", {})),
        (NOTES_TEMPLATE, "note_id", "2", complete_note_id("2", {})),
    ],
    ids=["prefix", "case-insensitive", "empty", "no-match", "literal", "no-completer", "template", "template-2"],
)
async def test_completion(
    client: Client,
    ref: types.PromptReference | types.ResourceTemplateReference,
    argument: str,
    prefix: str,
    expected: list[str],
) -> None:
    """Suggestions are filtered by the typed prefix."""
    result = await client.complete(ref, {"name": argument, "value": prefix})
    assert result.completion.values == expected
    assert result.completion.total == len(expected)
    assert not result.completion.has_more


# -- stateless mode ---------------------------------------------------------------------


async def test_stateless_server(
    make_app: t.Callable[..., Flask], live_server: t.Any, exchanges: list[Exchange]
) -> None:
    """Without sessions the handshake and every later request still work."""
    app = recording(make_app(demo, MCP_STATELESS=True), exchanges)
    with serve(live_server, app) as endpoint:
        async with Client(endpoint, mode="legacy") as client:
            assert client.protocol_version == "2025-11-25"
            assert client.server_info is not None and client.server_info.name == demo.name
            added = await client.call_tool("add", {"a": 40, "b": -2})
            assert added.structured_content == {"result": 38}
            computed = await client.call_tool("stats", {"values": [2.0, 4.0]})
            assert computed.structured_content == stats([2.0, 4.0])
            [contents] = (await client.read_resource("notes://12")).contents
            assert isinstance(contents, types.TextResourceContents) and contents.text == NOTES[12]
            prompt = await client.get_prompt("review", {"code": "x = 1"})
            assert len(prompt.messages) == 2
    posts = [x for x in exchanges if x.method == "POST"]
    assert len(posts) >= 5 and all(x.session_id is None for x in posts)
    assert all(x.protocol_version == "2025-11-25" for x in posts[1:])
    assert not [x for x in exchanges if x.method == "DELETE"]


# -- listen streams (2026-07-28) ---------------------------------------------------------------


def listening_app(make_app: t.Callable[..., Flask]) -> Flask:
    """A server whose tools change its tool list and announce resource updates."""
    live = MCP(name="listen-demo", version="1.0.0")

    @live.tool
    def flip() -> str:
        """Disable or enable the tool ``spare``."""
        spare_off = getattr(flip, "off", False)
        (live.enable if spare_off else live.disable)("spare")
        flip.off = not spare_off  # type: ignore[attr-defined]
        return "flipped"

    @live.tool
    def spare() -> str:
        return "spare"

    @live.tool
    def touch(note_id: str) -> str:
        live.notify_resource_updated(f"notes://{note_id}")
        return "touched"

    @live.resource("notes://{note_id}")
    def live_note(note_id: str) -> str:
        return f"note {note_id}"

    return make_app(live)


@pytest.mark.parametrize("mode", ["auto", "2026-07-28"])
async def test_listen_streams_carry_tool_changes_and_resource_updates(
    make_app: t.Callable[..., Flask], live_server: t.Any, mode: str
) -> None:
    """The official client's listen streams: a run-time tool change, then an update of the one URI asked for."""
    with serve(live_server, listening_app(make_app)) as endpoint:
        async with Client(endpoint, mode=mode) as client:
            async with client.listen(tools_list_changed=True) as tools_stream:
                assert "spare" in {tool.name for tool in (await client.list_tools()).tools}
                await client.call_tool("flip", {})
                with anyio.fail_after(10):
                    changed = await tools_stream.__anext__()
                assert isinstance(changed, ToolsListChanged)
                assert "spare" not in {tool.name for tool in (await client.list_tools()).tools}
            async with client.listen(resource_subscriptions=["notes://1"]) as notes_stream:
                await client.call_tool("touch", {"note_id": "2"})
                await client.call_tool("touch", {"note_id": "1"})
                with anyio.fail_after(10):
                    updated = await notes_stream.__anext__()
                assert isinstance(updated, ResourceUpdated) and str(updated.uri) == "notes://1"


# -- a protected server ------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_the_client_sends_its_token_in_every_request(
    make_app: t.Callable[..., Flask], live_server: t.Any, mode: str
) -> None:
    """The official client with a bearer token, as docs/auth.rst shows it, in every mode."""
    guarded = MCP(name="guarded")

    @guarded.tool(permissions=[flask_mcp.ScopeRequired("notes:read")])
    def notes() -> str:
        return "the notes"

    app = make_app(guarded, MCP_AUTH_TOKENS={"ada-token": {"subject": "ada", "scopes": ["notes:read"]}})
    with serve(live_server, app) as endpoint:
        http_client = httpx2.AsyncClient(headers={"Authorization": "Bearer ada-token"})
        async with Client(streamable_http_client(endpoint, http_client=http_client), mode=mode) as client:
            result = await client.call_tool("notes", {})
        assert texts(result.content) == ["the notes"]
        with pytest.raises(BaseExceptionGroup) as info:  # the client's task group reports the 401
            async with Client(endpoint, mode=mode) as anonymous:
                await anonymous.call_tool("notes", {})
        assert info.group_contains(MCPError, match="requires authentication.*Authorization: Bearer", depth=2)


async def test_a_stream_the_tool_closes_still_brings_its_result(
    make_app: t.Callable[..., Flask], live_server: t.Any, mode: str
) -> None:
    """ctx.close_stream() (SEP-1699): the handshake era resumes with GET; a 2026-07-28 request keeps its stream."""
    polite = MCP(name="polite")

    @polite.tool
    def patient(ctx: flask_mcp.Context) -> str:
        ctx.report_progress(1, 2)  # the answer is a stream from here on
        ctx.close_stream()
        return "after the stream was closed"

    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    with serve(live_server, make_app(polite)) as endpoint:
        async with Client(endpoint, mode=mode) as client:
            with anyio.fail_after(30):
                result = await client.call_tool("patient", {}, progress_callback=on_progress)
    assert texts(result.content) == ["after the stream was closed"]
    assert progress == [1]
