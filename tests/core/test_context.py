"""The Context handlers receive, against a recording channel (no transport)."""

from __future__ import annotations

import typing as t

import marshmallow as ma
import pytest

from flask_mcp import MCP, Context, Principal, ScopeRequired
from flask_mcp.components.registry import Registry
from flask_mcp.core.client import Call, ClientState
from flask_mcp.core.context import StateUnavailable, notifications_asked, use_state_store
from flask_mcp.core.server import Server
from flask_mcp.protocol import jsonrpc
from flask_mcp.protocol.jsonrpc import MCPError


class Recorder:
    """A Channel that records what it is asked to send and answers requests from a script."""

    def __init__(self, answers: dict[str, dict[str, t.Any]] | None = None, cancelled: bool = False) -> None:
        self.sent: list[tuple[str, dict[str, t.Any]]] = []
        self.answers = answers or {}
        self.is_cancelled = cancelled

    def notify(self, method: str, params: dict[str, t.Any]) -> None:
        self.sent.append((method, params))

    def request(self, method: str, params: dict[str, t.Any], timeout: float) -> dict[str, t.Any]:
        self.sent.append((method, params))
        return self.answers[method]

    def cancelled(self) -> bool:
        return self.is_cancelled

    def close_stream(self) -> None:
        self.sent.append(("close", {}))

    def unavailable(self) -> str | None:
        return None


def make_context(channel: Recorder | None, params: dict[str, t.Any] | None = None, **state: t.Any) -> Context:
    call = Call(Server(Registry(), name="n", version="1"), ClientState(**state), "tools/call", params or {}, 7, channel)
    return call.context()


def test_progress_needs_a_token_and_only_increases() -> None:
    channel = Recorder()
    make_context(channel).report_progress(1)
    assert channel.sent == []
    context = make_context(channel, {"_meta": {"progressToken": "tok"}})
    for value in (1, 3, 2, 3, 5):
        context.report_progress(value, total=5, message=f"at {value}")
    assert [p["progress"] for _, p in channel.sent] == [1, 3, 5]
    assert channel.sent[0] == (
        "notifications/progress",
        {"progressToken": "tok", "progress": 1, "total": 5, "message": "at 1"},
    )


@pytest.mark.parametrize(("wanted", "sent"), [(None, 3), ("debug", 3), ("warning", 2), ("emergency", 0)])
def test_log_follows_the_level_the_client_set(wanted: str | None, sent: int) -> None:
    channel = Recorder()
    context = make_context(channel, log_level=wanted)
    context.info("a")
    context.warning({"b": 1}, logger="db")
    context.error("c")
    assert len(channel.sent) == sent
    if sent == 2:
        assert channel.sent[0] == ("notifications/message", {"level": "warning", "data": {"b": 1}, "logger": "db"})
    with pytest.raises(ValueError, match="unknown log level"):
        context.log("loud", "x")


def test_sampling_builds_the_request_and_returns_the_answer() -> None:
    answer = {"role": "assistant", "content": {"type": "text", "text": "42"}, "model": "m"}
    channel = Recorder({"sampling/createMessage": answer})
    context = make_context(channel, capabilities={"sampling": {}})
    assert context.sample("question?", 50, system_prompt="be brief", temperature=0.0) == answer
    method, params = channel.sent[0]
    assert method == "sampling/createMessage"
    assert params == {
        "messages": [{"role": "user", "content": {"type": "text", "text": "question?"}}],
        "maxTokens": 50,
        "systemPrompt": "be brief",
        "temperature": 0.0,
    }


class Preferences(ma.Schema):
    name = ma.fields.String(required=True, metadata={"description": "Your name"})
    size = ma.fields.String(load_default="m", validate=ma.validate.OneOf(["s", "m", "l"]))
    newsletter = ma.fields.Boolean(load_default=False)


def test_elicit_sends_a_flat_requested_schema_from_marshmallow() -> None:
    channel = Recorder({"elicitation/create": {"action": "accept", "content": {"name": "Ada"}}})
    result = make_context(channel, capabilities={"elicitation": {}}).elicit("Who?", Preferences)
    assert (result.action, result.content) == ("accept", {"name": "Ada"})
    _, params = channel.sent[0]
    assert params["mode"] == "form" and params["message"] == "Who?"
    assert params["requestedSchema"] == {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "Your name"},
            "size": {"type": "string", "default": "m", "enum": ["s", "m", "l"]},
            "newsletter": {"type": "boolean", "default": False},
        },
        "required": ["name"],
    }


def test_url_elicitation_needs_the_url_capability() -> None:
    channel = Recorder({"elicitation/create": {"action": "accept"}})
    with pytest.raises(MCPError, match="URL-mode"):
        make_context(channel, capabilities={"elicitation": {"form": {}}}).elicit_url("Log in", "https://x", "e1")
    result = make_context(channel, capabilities={"elicitation": {"url": {}}}).elicit_url("Log in", "https://x", "e1")
    assert result.action == "accept"
    assert channel.sent[-1][1] == {"mode": "url", "message": "Log in", "url": "https://x", "elicitationId": "e1"}


@pytest.mark.parametrize("call", [lambda c: c.sample("x", 1), lambda c: c.elicit("x", {}), lambda c: c.list_roots()])
def test_requests_need_the_client_capability(call: t.Callable[[Context], t.Any]) -> None:
    with pytest.raises(MCPError, match="did not declare") as info:
        call(make_context(Recorder()))
    assert info.value.code == jsonrpc.INTERNAL_ERROR


def test_without_a_channel_notifications_drop_and_requests_fail() -> None:
    context = make_context(None, {"_meta": {"progressToken": 1}}, capabilities={"roots": {}})
    context.report_progress(1)
    context.info("dropped")
    assert context.cancelled is False
    with pytest.raises(MCPError, match="needs a transport that can send requests"):
        context.list_roots()


def test_identity_and_cancellation() -> None:
    context = make_context(Recorder(cancelled=True), capabilities={"roots": {}}, session_id="s1")
    assert (context.request_id, context.session_id, context.cancelled) == (7, "s1", True)
    assert context.client_capabilities == {"roots": {}}


class Choices(ma.Schema):
    untitled_single = ma.fields.String(validate=ma.validate.OneOf(["a", "b"]))
    titled_single = ma.fields.String(validate=ma.validate.OneOf(["v1", "v2"], labels=["One", "Two"]))
    legacy = ma.fields.String(validate=ma.validate.OneOf(["o1", "o2"]), metadata={"enumNames": ["O1", "O2"]})
    untitled_multi = ma.fields.List(
        ma.fields.String(validate=ma.validate.OneOf(["a", "b"])), validate=ma.validate.Length(min=1, max=2)
    )
    titled_multi = ma.fields.List(ma.fields.String(validate=ma.validate.OneOf(["v1", "v2"], labels=["One", "Two"])))


def test_elicit_schema_has_every_sep1330_enum_form() -> None:
    channel = Recorder({"elicitation/create": {"action": "decline"}})
    assert make_context(channel, capabilities={"elicitation": {}}).elicit("Pick", Choices).action == "decline"
    properties = channel.sent[0][1]["requestedSchema"]["properties"]
    titled = [{"const": "v1", "title": "One"}, {"const": "v2", "title": "Two"}]
    assert properties["untitled_single"] == {"type": "string", "enum": ["a", "b"]}
    assert properties["titled_single"] == {"type": "string", "oneOf": titled}
    assert properties["legacy"] == {"type": "string", "enum": ["o1", "o2"], "enumNames": ["O1", "O2"]}
    assert properties["untitled_multi"] == {
        "type": "array",
        "minItems": 1,
        "maxItems": 2,
        "items": {"type": "string", "enum": ["a", "b"]},
    }
    assert properties["titled_multi"] == {"type": "array", "items": {"anyOf": titled}}


def test_all_level_helpers() -> None:
    channel = Recorder()
    context = make_context(channel)
    for level in ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"):
        getattr(context, level)(level)
    assert [params["level"] for _, params in channel.sent] == [params["data"] for _, params in channel.sent]
    assert len(channel.sent) == 8


# -- principal, read_resource, state -----------------------------------------------------------

TOKENS = {"ada-token": {"subject": "ada", "scopes": ["notes:read"]}, "eve-token": "eve"}


def reader_app(make_app: t.Any, **config: t.Any) -> t.Any:
    """A tool that reads a protected resource through its Context, and one that says who calls."""
    server = MCP(name="reader")

    @server.resource("notes://{note_id}", permissions=[ScopeRequired("notes:read")])
    def note(note_id: str) -> str:
        return f"note {note_id}"

    @server.tool(permissions=[])
    def quote(uri: str, ctx: Context) -> str:
        try:
            contents = ctx.read_resource(uri)
        except MCPError as exc:
            return f"{exc.code} {exc.message}"
        return t.cast(str, contents[0]["text"])

    @server.tool(permissions=[])
    def whoami(ctx: Context) -> str:
        return "nobody" if ctx.principal is None else ctx.principal.subject

    return make_app(server, MCP_AUTH_TOKENS=TOKENS, **config)


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_principal_is_the_authenticated_caller(make_app: t.Any, make_client: t.Any, era: str) -> None:
    client = make_client(reader_app(make_app), era=era, token="ada-token")
    if era == "handshake":
        client.initialize()
    assert client.call_tool("whoami")["content"][0]["text"] == "ada"


def test_principal_is_none_without_authentication() -> None:
    assert make_context(None).principal is None
    call = Call(Server(Registry(), name="n", version="1"), ClientState(), "tools/call", {}, 7, principal=Principal("p"))
    assert call.context().principal == Principal("p")


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_read_resource_answers_as_resources_read_would(make_app: t.Any, make_client: t.Any, era: str) -> None:
    """The same contents for a caller who may read it; the same error for one who may not, or for no resource."""
    app = reader_app(make_app)
    ada = make_client(app, era=era, token="ada-token")
    eve = make_client(app, era=era, token="eve-token")
    for client in (ada, eve):
        if era == "handshake":
            client.initialize()
    assert ada.call_tool("quote", {"uri": "notes://7"})["content"][0]["text"] == "note 7"
    for client, uri in ((eve, "notes://7"), (ada, "other://7")):
        error = client.error("resources/read", {"uri": uri})
        text = client.call_tool("quote", {"uri": uri})["content"][0]["text"]
        assert text == f"{error['code']} {error['message']}"
    assert eve.error("resources/read", {"uri": "notes://7"})["code"] == -31403


def test_read_resource_passes_a_resource_that_needs_its_own_context(
    mcp: t.Any, make_app: t.Any, make_client: t.Any
) -> None:
    @mcp.resource("inner://{name}")
    def inner(name: str, ctx: Context) -> str:
        ctx.info(f"inner {name}")
        return f"inner {name} for {ctx.request_id}"

    @mcp.tool
    def outer(ctx: Context) -> list[str]:
        return [item["text"] for item in ctx.read_resource("inner://x")]

    client = make_client(make_app(mcp), log_level="info")
    client.initialize()
    result = client.call_tool("outer")
    assert result["structuredContent"]["result"][0].startswith("inner x for ")
    assert [note["params"]["data"] for note in client.notifications] == ["inner x"]


class MemoryStore:
    """A StateStore in a dict, without expiry."""

    def __init__(self) -> None:
        self.values: dict[tuple[str, str], tuple[str, int | None]] = {}

    def get(self, scope: str, key: str) -> str | None:
        found = self.values.get((scope, key))
        return None if found is None else found[0]

    def set(self, scope: str, key: str, text: str, ttl: int | None, caller: str | None = None) -> None:
        self.values[(scope, key)] = (text, ttl)

    def delete(self, scope: str, key: str, caller: str | None = None) -> None:
        self.values.pop((scope, key), None)


def state_of(store: MemoryStore | None, principal: Principal | None = None, session: str | None = None) -> t.Any:
    server = Server(Registry(), name="n", version="1")
    use_state_store(server, store)
    state = ClientState(session_id=session)
    return Call(server, state, "tools/call", {}, 1, principal=principal).context().state


def test_state_is_kept_per_session_else_per_principal() -> None:
    store = MemoryStore()
    by_session = state_of(store, Principal("ada"), session="s1")
    by_session.set("k", {"n": [1, 2]}, ttl=5)
    assert by_session.scope == "session:s1" and by_session.get("k") == {"n": [1, 2]}
    by_principal = state_of(store, Principal("ada"))
    assert by_principal.scope == "principal:ada" and by_principal.get("k", "none") == "none"
    by_principal.set("k", (1, "a"))
    assert state_of(store, Principal("ada")).get("k") == [1, "a"]  # JSON in, JSON out
    assert store.values[("principal:ada", "k")] == ('[1,"a"]', None)
    by_principal.delete("k")
    by_principal.delete("k")
    assert by_principal.get("k") is None and store.values == {("session:s1", "k"): ('{"n":[1,2]}', 5)}


@pytest.mark.parametrize("value", [object(), {1, 2}, float("nan"), {"a": b"bytes"}])
def test_state_refuses_what_json_cannot_hold(value: t.Any) -> None:
    store = MemoryStore()
    with pytest.raises(TypeError, match="JSON"):
        state_of(store, Principal("ada")).set("k", value)
    assert store.values == {}


@pytest.mark.parametrize(("key", "ttl"), [("", None), ("k" * 257, None), (3, None), ("k", 0), ("k", 1.5), ("k", True)])
def test_state_refuses_bad_keys_and_ttls(key: t.Any, ttl: t.Any) -> None:
    with pytest.raises(ValueError):
        state_of(MemoryStore(), Principal("ada")).set(key, 1, ttl=ttl)


def test_state_of_an_anonymous_caller_or_without_a_store_says_why() -> None:
    anonymous = state_of(MemoryStore())
    assert not anonymous.available
    with pytest.raises(StateUnavailable, match="neither"):
        anonymous.get("k")
    storeless = state_of(None, Principal("ada"))
    assert not storeless.available
    with pytest.raises(StateUnavailable, match="state store"):
        storeless.set("k", 1)
    assert state_of(MemoryStore(), Principal("ada")).available


def test_a_nested_read_that_asks_for_input_fails_in_the_modern_era(
    mcp: t.Any, make_app: t.Any, make_client: t.Any
) -> None:
    """The question cannot travel in the outer request's round: the read raises -32603, saying why."""

    @mcp.resource("ask://{name}")
    def asking(name: str, ctx: Context) -> str:
        return str(ctx.elicit("Sure?", {"type": "object", "properties": {}}).action)

    @mcp.tool
    def outer(ctx: Context) -> str:
        try:
            ctx.read_resource("ask://x")
        except MCPError as exc:
            return f"{exc.code} {exc.message}"
        return "read"

    client = make_client(make_app(mcp), era="modern", capabilities={"elicitation": {}})
    text = client.call_tool("outer")["content"][0]["text"]
    assert text == "-32603 resource ask://x asks for input, which a nested read cannot forward"


@pytest.mark.parametrize(
    ("meta", "asked"),
    [
        (None, False),
        ("not an object", False),
        ({}, False),
        ({"progressToken": None, "io.modelcontextprotocol/logLevel": None}, False),
        ({"progressToken": 0}, True),
        ({"progressToken": "p"}, True),
        ({"io.modelcontextprotocol/logLevel": "debug"}, True),
    ],
)
def test_notifications_are_asked_for_with_a_progress_token_or_a_log_level(meta: object, asked: bool) -> None:
    """What a 2026-07-28 request may get while it runs (a transport runs the handler of one asking none in its view)."""
    params = {"name": "x"} if meta is None else {"name": "x", "_meta": meta}
    assert notifications_asked(params) is asked
