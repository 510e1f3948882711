"""Handlers that talk back while they run: Context over Streamable HTTP.

Three layers: the official SDK client against a live threaded werkzeug
server; raw HTTP (Flask's test client and ``http.client``) to pin down the
SSE wire format, answers arriving on other connections, duplicate ids and
cancellation; and real deployments under gunicorn, one process and then two
processes sharing sessions in Redis.
"""

from __future__ import annotations

import contextlib
import dataclasses
import http.client
import io
import json
import os
import queue
import subprocess
import sys
import threading
import typing as t
import urllib.parse
import uuid

import marshmallow as ma
import mcp_types as types
import pytest
from flask import Flask
from marshmallow import fields, validate
from mcp import Client
from mcp.shared.exceptions import MCPError as MCPErrorOnClient

from flask_mcp import MCP, Context, MCPError
from flask_mcp.core.context import LOG_LEVELS
from flask_mcp.policies.store_keys import key as store_key
from flask_mcp.testing import SchemaValidator
from flask_mcp.testing.client import ACCEPT

from ..conftest import REPO_ROOT, free_port
from ..processes import OutputLines

if t.TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
anyio = pytest.mark.anyio

#: The handshake era, and the modern era reached by the discover probe or pinned.
MODES = ["legacy", "auto", "2026-07-28"]
PROTOCOL_VERSION = "2025-11-25"
#: Seconds any single wait of a test may take before it counts as a hang.
WAIT = 15.0
#: Bounded polling of ``ctx.cancelled`` by the ``linger`` tool.
POLL = 0.01
MAX_POLLS = int(WAIT / POLL)
SYSTEM_PROMPT = "Answer in one word."
SIZES = ["s", "m", "l"]


class Survey(ma.Schema):
    name = fields.String(required=True, metadata={"description": "Your name"})
    age = fields.Integer(load_default=30)
    size = fields.String(load_default="m", validate=validate.OneOf(SIZES))


#: What elicitation/create must carry for :class:`Survey`.
SURVEY_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "Your name"},
        "age": {"type": "integer", "default": 30},
        "size": {"type": "string", "default": "m", "enum": SIZES},
    },
    "required": ["name"],
}


# -- the server under test ------------------------------------------------------


class Gates:
    """Lets a test see a tool start and decide when it may finish."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self._started = 0
        self._condition = threading.Condition()
        #: What tools reported as they ended (a cancelled request's answer never reaches the client).
        self.outcomes: queue.Queue[t.Any] = queue.Queue()

    def enter(self) -> None:
        with self._condition:
            self._started += 1
            self._condition.notify_all()

    @property
    def started(self) -> int:
        with self._condition:
            return self._started

    def wait_started(self, count: int) -> bool:
        with self._condition:
            return self._condition.wait_for(lambda: self._started >= count, WAIT)


def build(gates: Gates) -> MCP:
    """A server whose tools use every part of the Context."""
    server = MCP(name="streaming-test", version="1.0.0")

    @server.tool
    def count(steps: int, ctx: Context) -> str:
        """Report progress step by step."""
        for step in range(1, steps + 1):
            ctx.report_progress(step, total=steps, message=f"step {step}")
        return f"counted {steps}"

    @server.tool
    def chatter(ctx: Context) -> str:
        """Log one message at every level."""
        for level in LOG_LEVELS:
            ctx.log(level, f"{level} message", logger="chatter")
        return "chattered"

    @server.tool
    def ask_model(prompt: str, max_tokens: int, ctx: Context) -> dict[str, t.Any]:
        """Sample the client's model."""
        reply = ctx.sample(prompt, max_tokens, system_prompt=SYSTEM_PROMPT)
        return {"role": reply["role"], "text": reply["content"]["text"], "model": reply["model"]}

    @server.tool
    def survey(ctx: Context) -> dict[str, t.Any]:
        """Elicit a Survey; a client error is reported, not raised."""
        try:
            answer = ctx.elicit("Tell us about you", Survey)
        except MCPError as exc:
            failed = {"action": "error", "content": {"code": exc.code, "message": exc.message}}
            gates.outcomes.put(failed)
            return failed
        return {"action": answer.action, "content": answer.content}

    @server.tool
    def roots(ctx: Context) -> dict[str, t.Any]:
        """The client's roots."""
        return {"roots": ctx.list_roots()}

    @server.tool
    def quiet(value: int, ctx: Context) -> int:
        """Takes a Context, sends nothing."""
        return value * 2

    @server.tool
    def hold(ctx: Context) -> str:
        """Wait for the test to release it."""
        gates.enter()
        return f"held {ctx.request_id}" if gates.release.wait(WAIT) else "never released"

    @server.tool
    def linger(ctx: Context) -> str:
        """Poll ctx.cancelled until cancelled or released (bounded)."""
        gates.enter()
        for _ in range(MAX_POLLS):
            if ctx.cancelled or gates.release.wait(POLL):
                break
        outcome = "cancelled" if ctx.cancelled else "finished"
        gates.outcomes.put(outcome)
        return outcome

    return server


@dataclasses.dataclass
class Exchange:
    """One HTTP exchange as the WSGI server saw it."""

    message: t.Any
    status: int
    content_type: str | None


class Recorder:
    """WSGI wrapper recording each request's JSON body with the response status and Content-Type."""

    def __init__(self, wsgi_app: WSGIApplication) -> None:
        self.wsgi_app = wsgi_app
        self.exchanges: list[Exchange] = []

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> t.Iterable[bytes]:
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        environ["wsgi.input"] = io.BytesIO(body)
        message = json.loads(body) if body else None

        def recording(status: str, headers: list[tuple[str, str]], exc_info: t.Any = None) -> t.Any:
            self.exchanges.append(Exchange(message, int(status.split()[0]), dict(headers).get("Content-Type")))
            return start_response(status, headers, exc_info)

        return self.wsgi_app(environ, recording)

    def tool_calls(self, name: str) -> list[Exchange]:
        return [
            x
            for x in self.exchanges
            if isinstance(x.message, dict)
            and x.message.get("method") == "tools/call"
            and x.message["params"]["name"] == name
        ]


@dataclasses.dataclass
class Served:
    app: Flask
    url: str
    gates: Gates
    recorder: Recorder


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def gates() -> Gates:
    return Gates()


@pytest.fixture
def app(make_app: t.Callable[..., Flask], gates: Gates) -> Flask:
    """The test server; a tool never waits for the client longer than a test would."""
    return make_app(build(gates), MCP_CLIENT_REQUEST_TIMEOUT=WAIT)


@pytest.fixture
def served(app: Flask, gates: Gates, live_server: t.Any) -> t.Iterator[Served]:
    """The app on a live threaded werkzeug server, every exchange recorded."""
    recorder = Recorder(app.wsgi_app)
    app.wsgi_app = recorder  # type: ignore[method-assign]
    try:
        with live_server(app) as server:
            yield Served(app, f"{server.url}/mcp", gates, recorder)
    finally:
        gates.release.set()  # never leave a tool thread waiting


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return t.cast(str, request.param)


def texts(blocks: t.Sequence[t.Any]) -> list[str]:
    return [block.text for block in blocks if isinstance(block, types.TextContent)]


# -- raw HTTP helpers -------------------------------------------------------------


@dataclasses.dataclass
class Event:
    """One Server-Sent Event."""

    fields: dict[str, str]

    @property
    def message(self) -> dict[str, t.Any]:
        return t.cast(dict[str, t.Any], json.loads(self.fields["data"]))


def read_events(lines: t.Iterable[bytes]) -> t.Iterator[Event]:
    """Parse an SSE stream; a trailing event without its blank line is a format error."""
    current: dict[str, str] = {}
    for raw in lines:
        line = raw.decode().rstrip("\r\n")
        if not line:
            if current:
                yield Event(current)
            current = {}
            continue
        if line.startswith(":"):
            continue  # a comment (keep-alive)
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        current[name] = f"{current[name]}\n{value}" if name == "data" and name in current else value
    assert not current, f"the stream ended inside an event: {current}"


def call(name: str, arguments: dict[str, t.Any] | None = None, request_id: t.Any = 1, **params: t.Any) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments or {}, **params},
    }


@dataclasses.dataclass
class Reply:
    status: int
    headers: http.client.HTTPMessage
    body: bytes

    def json(self) -> t.Any:
        return json.loads(self.body)


class Endpoint:
    """An MCP endpoint spoken to with ``http.client``, one connection per request."""

    def __init__(self, url: str) -> None:
        parsed = urllib.parse.urlsplit(url)
        self.host, self.port, self.path = parsed.hostname or "", parsed.port or 80, parsed.path

    def open(
        self, payload: t.Any, session_id: str | None = None
    ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        """POST *payload*; the caller reads (and closes) the response."""
        connection = http.client.HTTPConnection(self.host, self.port, timeout=WAIT)
        headers = {"Accept": ACCEPT, "Content-Type": "application/json", "MCP-Protocol-Version": PROTOCOL_VERSION}
        if session_id is not None:
            headers["Mcp-Session-Id"] = session_id
        connection.request("POST", self.path, body=json.dumps(payload), headers=headers)
        return connection, connection.getresponse()

    def post(self, payload: t.Any, session_id: str | None = None) -> Reply:
        connection, response = self.open(payload, session_id)
        with contextlib.closing(connection):
            return Reply(response.status, response.headers, response.read())

    def initialize(self, capabilities: dict[str, t.Any]) -> str:
        """The handshake; returns the session id."""
        reply = self.post(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": PROTOCOL_VERSION,
                    "capabilities": capabilities,
                    "clientInfo": {"name": "raw", "version": "1"},
                },
            }
        )
        assert reply.status == 200, reply.body
        session_id = reply.headers["Mcp-Session-Id"]
        initialized = self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session_id)
        assert initialized.status == 202, initialized.body
        return t.cast(str, session_id)


class Background:
    """Run a blocking call in another thread; :meth:`result` joins it."""

    def __init__(self, func: t.Callable[[], t.Any]) -> None:
        self._func = func
        self._outcome: list[t.Any] = []
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._outcome.append(("ok", self._func()))
        except BaseException as exc:
            self._outcome.append(("error", exc))

    def result(self) -> t.Any:
        self._thread.join(WAIT)
        assert not self._thread.is_alive(), "the background call did not finish"
        kind, value = self._outcome[0]
        if kind == "error":
            raise value
        return value


def check_stream(checker: SchemaValidator, events: list[Event], request_id: t.Any) -> list[dict[str, t.Any]]:
    """Assert the SSE shape of a POST answer; return its JSON-RPC messages.

    A priming event (an id, empty data, a retry) comes first; then one
    ``message`` event per JSON-RPC message, each with its own id, ending
    with the response to *request_id*.
    """
    priming, *rest = events
    assert priming.fields.get("id") and priming.fields.get("data") == "" and "event" not in priming.fields
    assert rest, "no message after the priming event"
    for event in rest:
        assert event.fields.get("event") == "message" and event.fields.get("id"), event
    ids = [event.fields["id"] for event in events]
    assert len(set(ids)) == len(ids), ids
    messages = [event.message for event in rest]
    *sent, response = messages
    for message in sent:
        assert "method" in message, message
        checker.check("ServerRequest" if "id" in message else "ServerNotification", message)
    assert response["id"] == request_id and "method" not in response
    checker.check_envelope("tools/call", response)
    return messages


# -- 1. the official SDK client ------------------------------------------------------


@anyio
@pytest.mark.parametrize("steps", [1, 4])
async def test_progress_reaches_the_callback_in_order(served: Served, mode: str, steps: int) -> None:
    """Every notifications/progress arrives, in order, with its total and message."""
    received: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        received.append((progress, total, message))

    async with Client(served.url, mode=mode) as client:
        result = await client.call_tool("count", {"steps": steps}, progress_callback=on_progress)
    assert not result.is_error and texts(result.content) == [f"counted {steps}"]
    assert received == [(step, steps, f"step {step}") for step in range(1, steps + 1)]
    [exchange] = served.recorder.tool_calls("count")
    assert exchange.content_type == "text/event-stream"


@anyio
@pytest.mark.parametrize("level", [None, "debug", "warning", "critical", "emergency"])
async def test_logging_follows_the_level_set(served: Served, mode: str, level: str | None) -> None:
    """Messages at or above the level set with logging/setLevel arrive; lower ones do not."""
    received: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        received.append(params)

    if mode == "legacy":
        async with Client(served.url, mode=mode, logging_callback=on_log) as client:
            if level is not None:
                await client.set_logging_level(level)  # type: ignore[arg-type]
            result = await client.call_tool("chatter", {})
        wanted = LOG_LEVELS[LOG_LEVELS.index(level) if level else 0 :]
    else:
        # The modern era: the level travels in each request's _meta, and no level means no logs.
        async with Client(served.url, mode=mode, logging_callback=on_log, log_level=level) as client:
            result = await client.call_tool("chatter", {})
        wanted = LOG_LEVELS[LOG_LEVELS.index(level) :] if level else ()
    assert not result.is_error
    assert [(p.level, p.data, p.logger) for p in received] == [(lv, f"{lv} message", "chatter") for lv in wanted]


@anyio
@pytest.mark.parametrize(("prompt", "max_tokens"), [("What is 6 x 7?", 5), ("Name a colour", 120)])
async def test_sampling_round_trip(served: Served, mode: str, prompt: str, max_tokens: int) -> None:
    """The callback sees what the tool asked for; its answer is what the tool returns."""
    seen: list[types.CreateMessageRequestParams] = []

    async def sampling(context: t.Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        seen.append(params)
        text = f"echo:{params.messages[0].content.text}:{params.max_tokens}"  # type: ignore[union-attr]
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text=text), model="m1"
        )

    async with Client(served.url, mode=mode, sampling_callback=sampling) as client:
        result = await client.call_tool("ask_model", {"prompt": prompt, "max_tokens": max_tokens})
    [params] = seen
    assert [(m.role, m.content.text) for m in params.messages] == [("user", prompt)]  # type: ignore[union-attr]
    assert (params.max_tokens, params.system_prompt) == (max_tokens, SYSTEM_PROMPT)
    assert not result.is_error
    assert result.structured_content == {"role": "assistant", "text": f"echo:{prompt}:{max_tokens}", "model": "m1"}


@anyio
@pytest.mark.parametrize(
    "answer",
    [
        types.ElicitResult(action="accept", content={"name": "Ada", "age": 36, "size": "l"}),
        types.ElicitResult(action="accept", content={"name": "Grace"}),
        types.ElicitResult(action="decline"),
        types.ElicitResult(action="cancel"),
    ],
    ids=["accept", "accept-minimal", "decline", "cancel"],
)
async def test_elicitation_round_trip(served: Served, mode: str, answer: types.ElicitResult) -> None:
    """The requestedSchema comes from the marshmallow schema; the user's answer reaches the tool."""
    seen: list[t.Any] = []

    async def elicitation(context: t.Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        seen.append(params)
        return answer

    async with Client(served.url, mode=mode, elicitation_callback=elicitation) as client:
        result = await client.call_tool("survey", {})
    [params] = seen
    assert isinstance(params, types.ElicitRequestFormParams)
    assert params.message == "Tell us about you"
    assert params.requested_schema == SURVEY_SCHEMA
    assert not result.is_error
    assert result.structured_content == {"action": answer.action, "content": answer.content}


@anyio
@pytest.mark.parametrize(
    "roots",
    [[], [types.Root(uri="file:///srv/app", name="app"), types.Root(uri="file:///home/ada/notes")]],
    ids=["none", "two"],
)
async def test_list_roots_round_trip(served: Served, mode: str, roots: list[types.Root]) -> None:
    """The roots the client lists are what the tool gets."""
    calls = []

    async def list_roots(context: t.Any) -> types.ListRootsResult:
        calls.append(context)
        return types.ListRootsResult(roots=roots)

    async with Client(served.url, mode=mode, list_roots_callback=list_roots) as client:
        result = await client.call_tool("roots", {})
    assert len(calls) == 1 and not result.is_error
    assert result.structured_content == {"roots": [r.model_dump(mode="json", exclude_none=True) for r in roots]}


@anyio
@pytest.mark.parametrize("value", [0, 21])
async def test_silent_context_tool_answers_plain_json(served: Served, mode: str, value: int) -> None:
    """A context tool that sends nothing gets a plain application/json answer."""
    async with Client(served.url, mode=mode) as client:
        result = await client.call_tool("quiet", {"value": value})
    assert not result.is_error and result.structured_content == {"result": value * 2}
    [exchange] = served.recorder.tool_calls("quiet")
    assert (exchange.status, exchange.content_type) == (200, "application/json")


@anyio
async def test_sampling_without_the_capability_is_a_tool_error(served: Served) -> None:
    """No sampling capability: an isError result naming it, and no request is sent to the client."""
    async with Client(served.url, mode="legacy") as client:
        result = await client.call_tool("ask_model", {"prompt": "hi", "max_tokens": 3})
    assert result.is_error is True
    assert "'sampling' capability" in texts(result.content)[0]
    [exchange] = served.recorder.tool_calls("ask_model")
    assert exchange.content_type == "application/json"  # no sampling/createMessage went out on a stream


@anyio
@pytest.mark.parametrize("mode", ["auto", "2026-07-28"])
async def test_sampling_without_the_capability_is_missing_capability(served: Served, mode: str) -> None:
    """The modern era: -32021 naming the capability, as a protocol error, before the tool asks anything."""
    async with Client(served.url, mode=mode) as client:
        with pytest.raises(MCPErrorOnClient) as info:
            await client.call_tool("ask_model", {"prompt": "hi", "max_tokens": 3})
    assert info.value.error.code == -32021
    assert info.value.error.data == {"requiredCapabilities": {"sampling": {}}}
    [exchange] = served.recorder.tool_calls("ask_model")
    assert (exchange.status, exchange.content_type) == (400, "application/json")


# -- 2. raw HTTP ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "arguments", "meta", "content_type"),
    [
        ("quiet", {"value": 4}, None, "application/json"),
        ("count", {"steps": 3}, None, "application/json"),  # no progress token: nothing to send
        ("count", {"steps": 3}, {"progressToken": "p"}, "text/event-stream"),
        ("chatter", {}, None, "text/event-stream"),
    ],
)
def test_answer_type_follows_what_the_handler_sends(
    app: Flask, make_client: t.Callable[..., t.Any], name: str, arguments: dict, meta: dict | None, content_type: str
) -> None:
    """Plain JSON unless the handler emitted something while it ran (Flask test client)."""
    client = make_client(app)
    client.initialize()
    extra = {"_meta": meta} if meta else {}
    response = client.post(call(name, arguments, request_id=3, **extra))
    assert response.status_code == 200
    assert response.mimetype == content_type
    if content_type == "application/json":
        body = response.get_json()
        assert body["id"] == 3 and "result" in body


@pytest.mark.parametrize("retry_ms", [1000, 2500])
@pytest.mark.parametrize("request_id", [9, "call-nine"])
def test_sse_stream_format(
    make_app: t.Callable[..., Flask],
    gates: Gates,
    make_client: t.Callable[..., t.Any],
    schema_checker: SchemaValidator,
    retry_ms: int,
    request_id: t.Any,
) -> None:
    """Priming event, then one ``message`` event per JSON-RPC message, the response last."""
    app = make_app(build(gates), MCP_SSE_RETRY_MS=retry_ms)
    client = make_client(app)
    client.initialize()
    response = client.post(call("count", {"steps": 3}, request_id, _meta={"progressToken": "tok"}))
    assert response.status_code == 200 and response.mimetype == "text/event-stream"
    assert response.headers["Cache-Control"] == "no-cache"
    events = list(read_events(io.BytesIO(response.get_data())))
    assert events[0].fields.get("retry") == str(retry_ms)
    messages = check_stream(schema_checker, events, request_id)
    assert [m["params"] for m in messages[:-1]] == [
        {"progressToken": "tok", "progress": step, "total": 3, "message": f"step {step}"} for step in (1, 2, 3)
    ]
    assert messages[-1]["result"]["content"] == [{"type": "text", "text": "counted 3"}]


ELICIT_ANSWERS = {
    "accept": (
        {"result": {"action": "accept", "content": {"name": "Ada", "age": 36, "size": "s"}}},
        {"action": "accept", "content": {"name": "Ada", "age": 36, "size": "s"}},
    ),
    "decline": ({"result": {"action": "decline"}}, {"action": "decline", "content": None}),
    "error": (
        {"error": {"code": -32042, "message": "user closed the form"}},
        {"action": "error", "content": {"code": -32042, "message": "user closed the form"}},
    ),
}


@pytest.mark.parametrize("answer", sorted(ELICIT_ANSWERS))
def test_answer_on_another_connection_reaches_the_waiting_tool(
    served: Served, schema_checker: SchemaValidator, answer: str
) -> None:
    """elicitation/create goes out on the stream; the answer POSTed from another thread resumes the tool.

    An answer for an id the server never sent comes first: it is accepted
    (202) and does not disturb the waiting tool.
    """
    endpoint = Endpoint(served.url)
    session_id = endpoint.initialize({"elicitation": {}})
    payload, expected = ELICIT_ANSWERS[answer]
    connection, response = endpoint.open(call("survey", request_id=11), session_id)
    with contextlib.closing(connection):
        assert response.status == 200 and response.headers["Content-Type"] == "text/event-stream"
        stream = read_events(iter(response.readline, b""))
        events = [next(stream), next(stream)]
        ask = events[1].message
        assert ask["method"] == "elicitation/create"
        assert ask["params"] == {"mode": "form", "message": "Tell us about you", "requestedSchema": SURVEY_SCHEMA}
        decoy = {"jsonrpc": "2.0", "id": "srv-not-sent", "result": {"action": "accept", "content": {"name": "Eve"}}}
        real = {"jsonrpc": "2.0", "id": ask["id"], **payload}
        answering = Background(lambda: [endpoint.post(message, session_id) for message in (decoy, real)])
        replies = answering.result()
        assert [(reply.status, reply.body) for reply in replies] == [(202, b""), (202, b"")]
        events.extend(stream)
    messages = check_stream(schema_checker, events, 11)
    assert len(messages) == 2
    assert messages[-1]["result"]["structuredContent"] == expected


@pytest.mark.parametrize(
    "answer",
    [
        {"id": "srv-unknown", "result": {"action": "accept"}},
        {"id": 12345, "result": {}},
        {"id": "srv-unknown", "error": {"code": -1, "message": "no"}},
    ],
    ids=["string-id", "int-id", "error"],
)
def test_answer_for_an_unknown_id_is_accepted_and_ignored(
    app: Flask, make_client: t.Callable[..., t.Any], answer: dict[str, t.Any]
) -> None:
    """202 with no body; nothing is kept for it and the session goes on."""
    client = make_client(app)
    client.initialize()
    response = client.post({"jsonrpc": "2.0", **answer})
    assert (response.status_code, response.get_data()) == (202, b"")
    mailbox = app.extensions["mcp"].mailbox
    with app.app_context():
        assert mailbox.cache.get(store_key("answer", client.session_id, str(answer["id"]))) is None
        assert not mailbox.deliver(client.session_id, answer["id"], {"result": {}})
    assert client.call_tool("quiet", {"value": 5})["structuredContent"] == {"result": 10}


@pytest.mark.parametrize("request_id", [7, "seven"])
def test_duplicate_in_flight_id_is_rejected(served: Served, schema_checker: SchemaValidator, request_id: t.Any) -> None:
    """A second request with the id of one still running gets 409; the first completes normally."""
    endpoint, gates = Endpoint(served.url), served.gates
    session_id = endpoint.initialize({})
    first = Background(lambda: endpoint.post(call("hold", request_id=request_id), session_id))
    assert gates.wait_started(1)
    second = endpoint.post(call("hold", request_id=request_id), session_id)
    assert second.status == 409, second.body
    body = second.json()
    schema_checker.check_envelope(None, body)
    assert body["id"] == request_id and body["error"]["code"] == -32600
    assert gates.started == 1  # the duplicate never ran the tool
    gates.release.set()
    reply = first.result()
    assert reply.status == 200 and reply.headers["Content-Type"] == "application/json"
    assert reply.json()["result"]["content"] == [{"type": "text", "text": f"held {request_id}"}]
    # Once answered, the id is free again.
    again = endpoint.post(call("hold", request_id=request_id), session_id)
    assert again.status == 200 and again.json()["id"] == request_id


def test_same_id_in_another_session_is_not_a_duplicate(served: Served) -> None:
    """In-flight ids are per session."""
    endpoint, gates = Endpoint(served.url), served.gates
    sessions = [endpoint.initialize({}), endpoint.initialize({})]
    running = [Background(lambda sid=sid: endpoint.post(call("hold", request_id=1), sid)) for sid in sessions]
    assert gates.wait_started(2)
    gates.release.set()
    assert [background.result().status for background in running] == [200, 200]


@pytest.mark.parametrize(
    ("target", "expected"),
    [("this-request", "cancelled"), ("other-id", "finished"), ("other-session", "finished")],
)
def test_cancellation_reaches_the_running_tool(served: Served, target: str, expected: str) -> None:
    """notifications/cancelled for the running request makes ctx.cancelled true; for anything else it does not."""
    endpoint, gates = Endpoint(served.url), served.gates
    session_id, other_session = endpoint.initialize({}), endpoint.initialize({})
    running = Background(lambda: endpoint.post(call("linger", request_id=21), session_id))
    assert gates.wait_started(1)
    cancelled_id = 22 if target == "other-id" else 21
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": cancelled_id}}
    notified = endpoint.post(cancel, other_session if target == "other-session" else session_id)
    assert notified.status == 202
    if expected == "finished":
        gates.release.set()  # only an unaffected tool is let go; a cancelled one must stop by itself
    reply = running.result()
    assert gates.outcomes.get(timeout=WAIT) == expected
    assert reply.status == 200
    if expected == "cancelled":
        # The specification: no response to a cancelled request. The answer is an event stream that ends without one.
        assert reply.headers["Content-Type"] == "text/event-stream"
        events = list(read_events(reply.body.splitlines(keepends=True)))
        assert [event.fields.get("data") for event in events] == [""]  # the priming event only
    else:
        assert reply.json()["result"]["content"] == [{"type": "text", "text": expected}]
    # The cancellation ended with its request: the same id later runs normally.
    gates.release.set()
    again = endpoint.post(call("linger", request_id=21), session_id)
    assert again.json()["result"]["content"] == [{"type": "text", "text": "finished"}]


def cancel_while_eliciting(
    make_app: t.Callable[..., Flask], gates: Gates, live_server: t.Any, checker: SchemaValidator
) -> dict[str, t.Any]:
    """Cancel a request whose tool waits for an elicitation answer; return what the tool reported.

    The tool would wait ten times longer than a test's read timeout, so only
    the cancellation can end the wait in time.
    """
    app = make_app(build(gates), MCP_CLIENT_REQUEST_TIMEOUT=10 * WAIT)
    with live_server(app) as server:
        endpoint = Endpoint(f"{server.url}/mcp")
        session_id = endpoint.initialize({"elicitation": {}})
        connection, response = endpoint.open(call("survey", request_id=31), session_id)
        with contextlib.closing(connection):
            stream = read_events(iter(response.readline, b""))
            events = [next(stream), next(stream)]
            assert events[1].message["method"] == "elicitation/create"
            cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 31}}
            assert endpoint.post(cancel, session_id).status == 202
            events.extend(stream)
    # The stream ends without a response to the cancelled request.
    *_, last = events
    checker.check("ServerRequest", last.message)
    assert last.message["method"] == "elicitation/create"
    return t.cast(dict[str, t.Any], gates.outcomes.get(timeout=WAIT))


def test_cancellation_ends_the_wait_for_an_answer(
    make_app: t.Callable[..., Flask], gates: Gates, live_server: t.Any, schema_checker: SchemaValidator
) -> None:
    """A tool waiting for the client's answer stops waiting when its request is cancelled."""
    outcome = cancel_while_eliciting(make_app, gates, live_server, schema_checker)
    assert outcome["action"] == "error"


def test_cancelled_wait_is_not_reported_as_a_timeout(
    make_app: t.Callable[..., Flask], gates: Gates, live_server: t.Any, schema_checker: SchemaValidator
) -> None:
    """The error the tool sees names the cancellation, not a timeout that never happened."""
    outcome = cancel_while_eliciting(make_app, gates, live_server, schema_checker)
    assert "cancel" in outcome["content"]["message"]
    assert "within" not in outcome["content"]["message"]


def test_stateless_sampling_says_it_needs_a_session(
    make_app: t.Callable[..., Flask], gates: Gates, make_client: t.Callable[..., t.Any]
) -> None:
    """Without sessions a server-to-client request is impossible; the tool error says so."""
    app = make_app(build(gates), MCP_STATELESS=True)
    client = make_client(app)
    client.initialize(capabilities={"sampling": {}})
    result = client.call_tool("ask_model", {"prompt": "hi", "max_tokens": 3})
    assert result["isError"] is True
    assert "session" in result["content"][0]["text"]


# -- 3. real deployments: gunicorn -------------------------------------------------------


class Gunicorn:
    """``tests/streaming_app.py`` (or another *app*) under gunicorn (gthread) on a free port."""

    def __init__(
        self, workers: int = 1, app: str = "tests.streaming_app:app", options: t.Sequence[str] = (), **env: str
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        command = [sys.executable, "-m", "gunicorn", "-w", str(workers), "-k", "gthread", "--threads", "8"]
        command += ["--graceful-timeout", "2", *options, "-b", f"127.0.0.1:{self.port}", app]
        self.process = subprocess.Popen(
            command,
            cwd=REPO_ROOT,
            env={**os.environ, "MCP_CLIENT_REQUEST_TIMEOUT": str(WAIT), **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        # Reading the pipe in a thread keeps it from filling up and blocking the server.
        self.lines = OutputLines(self.process, "gunicorn")

    @property
    def output(self) -> list[str]:
        """What the server printed so far (as far as it was read)."""
        return self.lines.output

    def wait_ready(self) -> None:
        """Block until the worker announces itself (the socket is already listening)."""
        self.wait_for("Booting worker")

    def wait_for(self, text: str) -> str:
        """Block until the server prints a line holding *text*; that line."""
        return self.lines.wait_for(text)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)


@contextlib.contextmanager
def gunicorn(
    workers: int = 1, app: str = "tests.streaming_app:app", options: t.Sequence[str] = (), **env: str
) -> t.Iterator[Gunicorn]:
    server = Gunicorn(workers, app, options, **env)
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def gunicorn_url() -> t.Iterator[str]:
    with gunicorn() as server:
        yield server.url


@anyio
async def test_gunicorn_sampling_and_elicitation(gunicorn_url: str, mode: str) -> None:
    """Under gunicorn the client's answers are handled on other threads than the waiting request."""

    async def sampling(context: t.Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        text = params.messages[0].content.text.upper()  # type: ignore[union-attr]
        return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text=text), model="m")

    async def elicitation(context: t.Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert params.requested_schema["required"] == ["name"]  # type: ignore[union-attr]
        return types.ElicitResult(action="accept", content={"name": f"Ada-{mode}", "team": "docs"})

    async with Client(gunicorn_url, mode=mode, sampling_callback=sampling, elicitation_callback=elicitation) as client:
        result = await client.call_tool("interview", {"prompt": f"hello {mode}"})
    assert not result.is_error, texts(result.content)
    outcome = result.structured_content
    assert outcome is not None
    assert (outcome["reply"], outcome["action"]) == (f"HELLO {mode.upper()}", "accept")
    assert outcome["content"] == {"name": f"Ada-{mode}", "team": "docs"}
    if mode == "legacy":
        assert len(outcome["answer_threads"]) == 2  # the sampling answer and the elicitation answer
        assert outcome["request_thread"] not in outcome["answer_threads"]


def test_answer_posted_to_another_gunicorn_process(redis_url: str) -> None:
    """Two gunicorn processes share sessions in Redis: the tool waits on A, its answers arrive on B."""
    env = {
        "MCP_CACHE_TYPE": "RedisCache",
        "MCP_CACHE_REDIS_URL": redis_url,
        "MCP_CACHE_KEY_PREFIX": f"flask_mcp_streaming:{uuid.uuid4().hex}:",
    }
    with gunicorn(**env) as server_a, gunicorn(**env) as server_b:
        a, b = Endpoint(server_a.url), Endpoint(server_b.url)
        session_id = a.initialize({"sampling": {}, "elicitation": {}})
        connection, response = a.open(call("interview", {"prompt": "ping"}, request_id="r1"), session_id)
        with contextlib.closing(connection):
            assert response.status == 200 and response.headers["Content-Type"] == "text/event-stream"
            pid_a = response.headers["X-Worker-Pid"]
            stream = read_events(iter(response.readline, b""))
            assert next(stream).fields["data"] == ""  # priming
            answers_pids = []
            for method, result in [
                (
                    "sampling/createMessage",
                    {"role": "assistant", "content": {"type": "text", "text": "pong"}, "model": "x"},
                ),
                ("elicitation/create", {"action": "accept", "content": {"name": "Bea"}}),
            ]:
                ask = next(stream).message
                assert ask["method"] == method
                reply = b.post({"jsonrpc": "2.0", "id": ask["id"], "result": result}, session_id)
                assert reply.status == 202, reply.body
                answers_pids.append(reply.headers["X-Worker-Pid"])
            final = next(stream).message
            assert list(stream) == []
    assert final["id"] == "r1"
    outcome = final["result"]["structuredContent"]
    assert (outcome["reply"], outcome["action"], outcome["content"]) == ("pong", "accept", {"name": "Bea"})
    assert str(outcome["pid"]) == pid_a
    assert len(set(answers_pids)) == 1 and pid_a not in answers_pids
    assert outcome["answer_threads"] == []  # process A never saw the answers


@pytest.mark.parametrize("threads", [False, True], ids=["inline", "on a thread"])
@pytest.mark.parametrize("closes", [False, True], ids=["streamed", "stream closed first"])
def test_a_handlers_app_context_is_torn_down_only_after_it_ends(
    mcp: MCP, make_app: t.Callable[..., Flask], make_client: t.Callable[..., t.Any], threads: bool, closes: bool
) -> None:
    """The view's app context ends with the view (``db.session.remove()``...), maybe halfway through the handler.

    An extension that keys its state by the app context (Flask-SQLAlchemy's
    session) must not have it closed under a handler that still runs: an
    inline handler keeps the request's until it ends, one whose stream it
    closed and one on a thread of its own run in a copy of their own.
    """
    from flask.globals import _cv_app

    events: list[tuple[str, object]] = []
    handler_torn = threading.Event()

    @mcp.tool()
    def where(ctx: Context) -> str:
        ctx.info("looking")
        if closes:
            ctx.close_stream()  # the response ends here; the handler goes on
        events.append(("handler ran in", _cv_app.get()))
        return "here"

    app = make_app(mcp, MCP_STREAM_THREADS=threads)

    @app.teardown_appcontext
    def torn(exc: BaseException | None) -> None:
        events.append(("torn down", _cv_app.get()))
        if any(event == ("handler ran in", _cv_app.get()) for event in events):
            handler_torn.set()

    client = make_client(app)
    client.initialize()
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "where", "arguments": {}}}
    response = client.http.post("/mcp", json=call, headers=client.headers(), buffered=False)
    assert response.mimetype == "text/event-stream"
    assert (b'"text":"here"' in response.get_data()) is not closes
    response.close()  # as a WSGI server closes it once sent
    assert handler_torn.wait(10)
    used = next(ctx for event, ctx in events if event == "handler ran in")
    assert events.index(("handler ran in", used)) < events.index(("torn down", used))
