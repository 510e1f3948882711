"""The fast lane answers exactly what the general path answers.

Every request here goes to two apps built alike: one as served (the lane
answers what it recognises), one with the lane shut (:func:`fast_lane.recognise`
declines everything, so the general path answers all). The status, the
headers a client reads and the body, byte for byte, must be the same; and
whether the lane took the request is checked too, so that a case meant to
exercise it cannot pass by going the general way on both apps.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import re
import typing as t
from pathlib import Path

import pytest
from flask import Blueprint, Flask, abort
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from marshmallow import Schema, fields

from flask_mcp import MCP, Authenticated, Context, TextContent, ToolError, ToolResult, UnprotectedToolWarning
from flask_mcp.core.hooks import tool_called
from flask_mcp.globals import state_of
from flask_mcp.protocol.envelope import CLIENT_CAPABILITIES, CLIENT_INFO, LOG_LEVEL, PROTOCOL_VERSION
from flask_mcp.protocol.jsonrpc import MAX_ID_BYTES, MAX_ID_INTEGER
from flask_mcp.stores import shared_registry as shared_registry_module
from flask_mcp.testing import MCPTestClient
from flask_mcp.testing.client import ACCEPT
from flask_mcp.transport import fast_lane
from flask_mcp.transport.routing_headers import encode_header_value
from tests.conftest import worker_app

MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"
META = {PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: {}}
TOKENS = {"tok-ada": "ada", "tok-bob": "bob"}
#: Stands for the session id each app gave its own client.
OWN_SESSION = "<own session>"
#: The headers whose values a client reads, compared as they are.
COMPARED_HEADERS = ("Content-Type", "WWW-Authenticate", "Allow", "Retry-After", "Cache-Control", "Content-Length")
SECRET = "secret-detail-4711"
UNICODE_NAME = "grüße"


# -- the two apps ------------------------------------------------------------------------------


class Lane:
    """Shuts the lane on demand, and counts the requests it answered."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.open = True
        self.taken = 0
        recognise, answer = fast_lane.recognise, fast_lane.answer

        def gated(state: t.Any, environ: t.Any, payload: t.Any) -> t.Any:
            return recognise(state, environ, payload) if self.open else None

        def counted(*args: t.Any) -> t.Any:
            response = answer(*args)
            if response is not None:
                self.taken += 1
            return response

        monkeypatch.setattr(fast_lane, "recognise", gated)
        monkeypatch.setattr(fast_lane, "answer", counted)

    @contextlib.contextmanager
    def shut(self) -> t.Iterator[None]:
        self.open = False
        try:
            yield
        finally:
            self.open = True


@pytest.fixture
def lane(monkeypatch: pytest.MonkeyPatch) -> Lane:
    return Lane(monkeypatch)


@dataclasses.dataclass(frozen=True)
class Answer:
    """What a client sees of an answer."""

    status: int
    headers: tuple[tuple[str, str | None], ...]
    has_session_header: bool
    raw: bytes
    body: t.Any


def answer_of(response: t.Any) -> Answer:
    raw = response.get_data()
    body: t.Any = raw
    if response.mimetype == "application/json":

        def reject(name: str) -> t.NoReturn:
            raise ValueError(f"non-JSON constant {name}")

        body = json.loads(raw, parse_constant=reject)
    headers = tuple((name, response.headers.get(name)) for name in COMPARED_HEADERS)
    return Answer(response.status_code, headers, "Mcp-Session-Id" in response.headers, raw, body)


def register_tools(mcp: MCP) -> None:
    """The plain tools every pair of apps serves (each may take the lane)."""

    @mcp.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @mcp.tool()
    def scale(x: float, factor: float = 2.0) -> float:
        """Scale a number."""
        return x * factor

    @mcp.tool()
    def echo(text: str, loud: bool = False) -> str:
        """Echo the text."""
        return text.upper() if loud else text

    @mcp.tool()
    def nothing() -> None:
        """Return nothing."""

    @mcp.tool()
    def refuse() -> str:
        """Fail the way a tool means to."""
        raise ToolError("the tool says no")

    @mcp.tool()
    def crash() -> str:
        """Fail by a bug."""
        raise RuntimeError(SECRET)

    @mcp.tool()
    def not_a_number() -> float:
        """Return NaN."""
        return float("nan")

    @mcp.tool()
    def opaque():  # type: ignore[no-untyped-def]  # no annotation: no output schema
        """Return an object JSON cannot hold."""
        return object()

    @mcp.tool()
    def made() -> ToolResult:
        """Return a ToolResult."""
        return ToolResult(content=["made by hand"], structured_content={"n": 1}, meta={"k": "v"})

    @mcp.tool()
    def mapping() -> dict[str, t.Any]:
        """Return a dict."""
        return {"a": [1, 2], "b": {"c": None}}

    @mcp.tool()
    def text() -> str:
        """Return a str."""
        return "plain text"

    @mcp.tool()
    def blocks():  # type: ignore[no-untyped-def]
        """Return a list of content."""
        return [TextContent("one"), TextContent("two")]

    class Out(Schema):
        n = fields.Integer(required=True)

    @mcp.tool(output_schema=Out)
    def unstructured() -> ToolResult:
        """Advertise an outputSchema and send no structuredContent."""
        return ToolResult(content=["no structure"])

    @mcp.tool(output_schema=Out)
    def structured() -> dict[str, int]:
        """Fit the outputSchema."""
        return {"n": 3}

    @mcp.tool(output_schema=Out)
    def misfit() -> dict[str, str]:
        """Break the outputSchema."""
        return {"n": "three"}

    @mcp.tool()
    def gone() -> str:
        """abort(404)."""
        abort(404)

    @mcp.tool()
    def bad() -> str:
        """abort(400)."""
        abort(400, description="the tool found the request bad")

    @mcp.tool()
    async def later(a: int, b: int) -> int:
        """An async tool."""
        await asyncio.sleep(0)
        return a * b

    @mcp.tool(headers={"region": "Region"})
    def regional(region: str, limit: int = 3) -> str:
        """An argument that travels in a header too."""
        return f"{region}:{limit}"

    @mcp.tool()
    def partial(a: int, **rest: t.Any) -> int:
        """Takes any keyword."""
        return a + len(rest)

    class Order(Schema):
        item = fields.String(required=True)
        count = fields.Integer(strict=True, load_default=1)

    @mcp.tool(input_schema=Order)
    def order(item: str, count: int) -> str:
        """Arguments by a marshmallow schema of the app's own."""
        return f"{count} x {item}"


Setup = t.Callable[[MCP], "list[Blueprint] | None"]


class Twins:
    """Two apps built alike; :meth:`send` posts the same request to both."""

    def __init__(
        self,
        lane: Lane,
        make_app: t.Callable[..., Flask],
        make_client: t.Callable[..., MCPTestClient],
        setup: Setup | None = None,
        mcp_options: dict[str, t.Any] | None = None,
        **config: t.Any,
    ) -> None:
        self.lane = lane
        self.make_client = make_client
        config.setdefault("SECRET_KEY", "lane-tests")
        self.apps = [self._build(make_app, setup, mcp_options or {}, config) for _ in range(2)]
        self.sessions: list[str | None] = [None, None]

    @staticmethod
    def _build(
        make_app: t.Callable[..., Flask], setup: Setup | None, options: dict[str, t.Any], config: dict[str, t.Any]
    ) -> Flask:
        mcp = MCP(name="lane", version="1.0.0", **options)
        register_tools(mcp)
        blueprints = setup(mcp) if setup is not None else None
        app = make_app(mcp, **config)
        for blueprint in blueprints or ():
            app.register_blueprint(blueprint)
        return app

    def open_sessions(self, token: str | None = None) -> None:
        """A handshake session on each app (with *token*'s credentials)."""
        for index, app in enumerate(self.apps):
            client = self.make_client(app, token=token)
            client.initialize(HANDSHAKE)
            self.sessions[index] = client.session_id

    def server(self, index: int = 0) -> t.Any:
        return state_of(self.apps[index]).server

    def plain_call(self, name: str) -> t.Any:
        """The lane's plan for *name* on each app, asked where the lane asks it: in the app."""
        plans = []
        for app in self.apps:
            with app.test_request_context("/mcp", method="POST"):
                plans.append(state_of(app).server.plain_call(name))
        assert (plans[0] is None) is (plans[1] is None)
        return plans[0]

    def post(self, index: int, body: bytes, headers: dict[str, str | None]) -> Answer:
        sent: dict[str, str] = {}
        for name, value in headers.items():
            if value == OWN_SESSION:
                value = self.sessions[index]
            if value is not None:
                sent[name] = value
        response = self.apps[index].test_client().post("/mcp", data=body, content_type="application/json", headers=sent)
        return answer_of(response)

    def send(self, payload: t.Any, headers: dict[str, str | None]) -> tuple[Answer, Answer, bool]:
        """The answers of the app with the lane and of the one without, and whether the lane answered."""
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        before = self.lane.taken
        served = self.post(0, body, headers)
        taken = self.lane.taken > before
        with self.lane.shut():
            general = self.post(1, body, headers)
        assert self.lane.taken == before + taken
        return served, general, taken

    def agree(self, payload: t.Any, headers: dict[str, str | None], *, lane: bool | None = None) -> Answer:
        """Send *payload* to both; they must answer alike (and the lane take it, or not, as *lane* says)."""
        served, general, taken = self.send(payload, headers)
        assert served == general, (served, general)
        if lane is not None:
            assert taken is lane, f"the lane {'did not take' if lane else 'took'} the request: {served}"
        return served


@pytest.fixture
def twins(
    lane: Lane, make_app: t.Callable[..., Flask], make_client: t.Callable[..., MCPTestClient]
) -> t.Callable[..., Twins]:
    """``twins(setup=None, mcp_options=None, **config)``: two apps built alike."""

    def factory(setup: Setup | None = None, mcp_options: dict[str, t.Any] | None = None, **config: t.Any) -> Twins:
        return Twins(lane, make_app, make_client, setup, mcp_options, **config)

    return factory


# -- requests of each era ----------------------------------------------------------------------


def message(params: t.Any = None, /, request_id: t.Any = 7, **members: t.Any) -> dict[str, t.Any]:
    """A ``tools/call`` request with *params* (left out when ``None``); *members* replace or add top-level ones."""
    payload: dict[str, t.Any] = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call"}
    if params is not None:
        payload["params"] = params
    payload.update(members)
    return payload


def handshake_headers(**extra: str | None) -> dict[str, str | None]:
    return {"Accept": ACCEPT, "Mcp-Session-Id": OWN_SESSION, "MCP-Protocol-Version": HANDSHAKE, **extra}


def modern_params(params: t.Any) -> t.Any:
    """*params* with the modern envelope merged into their ``_meta`` (when both are objects)."""
    if not isinstance(params, dict):
        return params
    meta = params.get("_meta", {})
    return {**params, "_meta": {**META, **meta} if isinstance(meta, dict) else meta}


def modern_headers(params: t.Any, **extra: str | None) -> dict[str, str | None]:
    """The routing headers a client sends with a modern ``tools/call`` of *params*."""
    headers: dict[str, str | None] = {"Accept": ACCEPT, "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call"}
    name = params.get("name") if isinstance(params, dict) else None
    if isinstance(name, str):
        headers["Mcp-Name"] = encode_header_value(name)
    arguments = params.get("arguments") if isinstance(params, dict) else None
    if name == "regional" and isinstance(arguments, dict) and isinstance(arguments.get("region"), str):
        headers["Mcp-Param-Region"] = encode_header_value(arguments["region"])
    headers.update(extra)
    return headers


ERAS = ["handshake", "modern"]


def send_in(era: str, pair: Twins, call: t.Any, *, lane: bool | None, **members: t.Any) -> Answer:
    """Send a ``tools/call`` with the params *call* in *era* to both apps of *pair*.

    :param members: top-level members of the message replaced or added (``params`` too).
    """
    params = modern_params(call) if era == "modern" else call
    headers = modern_headers(params) if era == "modern" else handshake_headers()
    return pair.agree(message(params, **members), headers, lane=lane)


@pytest.fixture
def pair(twins: t.Callable[..., Twins]) -> Twins:
    """Two apps, each with a handshake session open."""
    made = twins()
    made.open_sessions()
    return made


# -- the lane is used ---------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
def test_the_lane_answers_the_common_call(pair: Twins, era: str, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[bool] = []
    answer = fast_lane.answer

    def spy(state: t.Any, environ: t.Any, call: fast_lane.LaneCall, principal: t.Any) -> t.Any:
        calls.append(call.modern)
        return answer(state, environ, call, principal)

    monkeypatch.setattr(fast_lane, "answer", spy)
    got = send_in(era, pair, {"name": "add", "arguments": {"a": 2, "b": 3}}, lane=None)
    assert got.status == 200 and got.body["result"]["structuredContent"] == {"result": 5}
    assert calls == [era == "modern"]  # one call, answered by the lane in the request's era


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(
    ("arguments", "taken"),
    [({"item": "tea"}, True), ({"item": "tea", "count": 2}, True), ({"count": 2}, False), ({"item": 1}, False)],
    ids=["defaulted", "given", "missing", "mistyped"],
)
def test_a_tool_given_an_input_schema_takes_the_lane(
    pair: Twins, era: str, arguments: dict[str, t.Any], taken: bool
) -> None:
    # Its completion stays pending in an app that routes nothing to the function: the schema as given is final.
    assert pair.plain_call("order") is not None
    send_in(era, pair, {"name": "order", "arguments": arguments}, lane=taken)


def test_the_lane_answers_without_a_session_when_stateless(twins: t.Callable[..., Twins]) -> None:
    pair = twins(MCP_STATELESS=True)
    got = pair.agree(message({"name": "add", "arguments": {"a": 1, "b": 1}}), handshake_headers(), lane=True)
    assert got.status == 200 and not got.has_session_header
    pair.agree(message({"name": "add", "arguments": {"a": 1, "b": 1}}), {"Accept": ACCEPT}, lane=True)


# -- the request's shape -------------------------------------------------------------------------

#: (what it is, the params, whether the lane answers it).
PARAMS_CASES: list[tuple[str, t.Any, bool]] = [
    ("valid", {"name": "add", "arguments": {"a": 1, "b": 2}}, True),
    ("arguments left out", {"name": "nothing"}, True),
    ("arguments null", {"name": "nothing", "arguments": None}, True),
    ("arguments empty", {"name": "nothing", "arguments": {}}, True),
    ("arguments left out, some required", {"name": "add"}, False),
    ("arguments a list", {"name": "add", "arguments": [1, 2]}, False),
    ("arguments a string", {"name": "add", "arguments": "a=1"}, False),
    ("a string for an integer", {"name": "add", "arguments": {"a": "1", "b": 2}}, False),
    ("a boolean for an integer", {"name": "add", "arguments": {"a": True, "b": 2}}, False),
    ("a float for an integer", {"name": "add", "arguments": {"a": 1.0, "b": 2}}, False),
    ("null for an integer", {"name": "add", "arguments": {"a": None, "b": 2}}, False),
    ("an object for an integer", {"name": "add", "arguments": {"a": {}, "b": 2}}, False),
    ("an integer beyond 2**53", {"name": "add", "arguments": {"a": 2**70, "b": 1}}, True),
    ("an integer for a number", {"name": "scale", "arguments": {"x": 3}}, True),
    ("a default filled in", {"name": "scale", "arguments": {"x": 1.5}}, True),
    ("an integer past every float", {"name": "scale", "arguments": {"x": 10**400}}, False),
    ("a boolean for a number", {"name": "scale", "arguments": {"x": False}}, False),
    ("a number for a string", {"name": "echo", "arguments": {"text": 5}}, False),
    ("a number for a boolean", {"name": "echo", "arguments": {"text": "a", "loud": 1}}, False),
    ("a boolean", {"name": "echo", "arguments": {"text": "a", "loud": True}}, True),
    ("a long string", {"name": "echo", "arguments": {"text": "x" * 100_000}}, True),
    ("a string that is not ASCII", {"name": "echo", "arguments": {"text": "grüße \u2603 \U0001f600"}}, True),
    ("a lone surrogate", {"name": "echo", "arguments": {"text": "\ud800"}}, True),
    ("an unknown argument", {"name": "add", "arguments": {"a": 1, "b": 2, "c": 3}}, False),
    ("a reserved name", {"name": "add", "arguments": {"a": 1, "b": 2, "request": 3}}, False),
    ("a required argument missing", {"name": "add", "arguments": {"a": 1}}, False),
    ("a function that takes **kwargs", {"name": "partial", "arguments": {"a": 1}}, False),
    ("name not a string", {"name": 5, "arguments": {}}, False),
    ("name null", {"name": None, "arguments": {}}, False),
    ("name left out", {"arguments": {}}, False),
    ("an unknown tool", {"name": "nope", "arguments": {}}, False),
    ("an empty name", {"name": "", "arguments": {}}, False),
    ("an extra params member", {"name": "add", "arguments": {"a": 1, "b": 2}, "extra": [1, {"x": None}]}, True),
    ("a progress token", {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": {"progressToken": "p-1"}}, True),
    ("an odd progress token", {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": {"progressToken": [1]}}, True),
    ("_meta null", {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": None}, True),
    ("_meta a string", {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": "m"}, False),
    ("a task", {"name": "add", "arguments": {"a": 1, "b": 2}, "task": {"ttl": 60_000}}, False),
    ("a null task", {"name": "add", "arguments": {"a": 1, "b": 2}, "task": None}, False),
    ("inputResponses", {"name": "add", "arguments": {"a": 1, "b": 2}, "inputResponses": {}}, False),
    ("requestState", {"name": "add", "arguments": {"a": 1, "b": 2}, "requestState": "opaque"}, False),
]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(("what", "params", "taken"), PARAMS_CASES, ids=[case[0] for case in PARAMS_CASES])
def test_params_are_answered_alike(pair: Twins, era: str, what: str, params: t.Any, taken: bool) -> None:
    if era == "modern" and what == "_meta null":
        taken = False  # no envelope: the general path words the error (handshake: _meta null is no _meta)
    send_in(era, pair, params, lane=taken)


#: Request ids: (the id, whether the lane answers it).
IDS: list[tuple[t.Any, bool]] = [
    (0, True),
    (-1, True),
    (MAX_ID_INTEGER, True),
    (-MAX_ID_INTEGER, True),
    (MAX_ID_INTEGER + 1, False),
    (-MAX_ID_INTEGER - 1, False),
    (2**70, False),
    ("", True),
    ("req-1", True),
    ("x" * MAX_ID_BYTES, True),
    ("x" * (MAX_ID_BYTES + 1), False),
    ("é" * (MAX_ID_BYTES // 2 + 1), False),
    (True, False),
    (False, False),
    (1.0, False),
    (1.5, False),
    (None, False),
    ([1], False),
    ({"id": 1}, False),
]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(("request_id", "taken"), IDS, ids=[repr(case[0])[:20] for case in IDS])
def test_ids_are_answered_alike(pair: Twins, era: str, request_id: t.Any, taken: bool) -> None:
    got = send_in(era, pair, {"name": "add", "arguments": {"a": 1, "b": 2}}, lane=taken, request_id=request_id)
    if taken:
        assert got.body["id"] == request_id


@pytest.mark.parametrize("era", ERAS)
def test_a_call_without_an_id_is_a_notification_on_both(pair: Twins, era: str) -> None:
    payload = message({"name": "add", "arguments": {"a": 1, "b": 2}})
    del payload["id"]
    params = modern_params(payload["params"]) if era == "modern" else payload["params"]
    payload["params"] = params
    headers = modern_headers(params) if era == "modern" else handshake_headers()
    assert pair.agree(payload, headers, lane=False).status == 202


#: Envelopes of other shapes: (what it is, top-level members replaced, with the lane answering).
ENVELOPES: list[tuple[str, dict[str, t.Any], bool]] = [
    ("jsonrpc 1.0", {"jsonrpc": "1.0"}, False),
    ("jsonrpc a number", {"jsonrpc": 2.0}, False),
    ("jsonrpc null", {"jsonrpc": None}, False),
    ("params a list", {"params": [1]}, False),
    ("params a string", {"params": "p"}, False),
    ("params null", {"params": None}, False),
    ("method not a string", {"method": ["tools/call"]}, False),
    ("method another", {"method": "tools/list"}, False),
    ("a result member too", {"result": {}}, True),
    ("an extra member", {"extra": 1}, True),
]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(("what", "members", "taken"), ENVELOPES, ids=[case[0] for case in ENVELOPES])
def test_envelopes_are_answered_alike(pair: Twins, era: str, what: str, members: dict[str, t.Any], taken: bool) -> None:
    send_in(era, pair, {"name": "add", "arguments": {"a": 1, "b": 2}}, lane=taken, **members)


def test_a_jsonrpc_member_left_out(pair: Twins) -> None:
    payload = message({"name": "add", "arguments": {"a": 1, "b": 2}})
    del payload["jsonrpc"]
    pair.agree(payload, handshake_headers(), lane=False)


@pytest.mark.parametrize(
    "body", [b"", b"{", b"[]", b"null", b"1", b'[{"jsonrpc": "2.0", "id": 1, "method": "tools/call"}]']
)
def test_bodies_that_are_no_call_are_answered_alike(pair: Twins, body: bytes) -> None:
    pair.agree(body, handshake_headers(), lane=False)


# -- what the tool does -------------------------------------------------------------------------

#: Tools of every outcome; the lane answers them all.
OUTCOMES = [
    "refuse",
    "crash",
    "not_a_number",
    "opaque",
    "made",
    "mapping",
    "text",
    "nothing",
    "blocks",
    "unstructured",
    "structured",
    "misfit",
    "gone",
    "bad",
]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("name", OUTCOMES)
def test_outcomes_are_answered_alike(pair: Twins, era: str, name: str) -> None:
    got = send_in(era, pair, {"name": name, "arguments": {}}, lane=True)
    assert SECRET not in got.raw.decode()


@pytest.mark.parametrize("era", ERAS)
def test_an_async_tool_is_answered_alike(pair: Twins, era: str) -> None:
    got = send_in(era, pair, {"name": "later", "arguments": {"a": 6, "b": 7}}, lane=True)
    assert got.body["result"]["structuredContent"] == {"result": 42}


@pytest.mark.parametrize("era", ERAS)
def test_an_unexpected_exception_is_logged_once_on_each_path(
    pair: Twins, era: str, caplog: pytest.LogCaptureFixture
) -> None:
    params = {"name": "crash", "arguments": {}}
    if era == "modern":
        params = modern_params(params)
    headers = modern_headers(params) if era == "modern" else handshake_headers()
    body = json.dumps(message(params)).encode()
    logged = []
    for index in (0, 1):
        caplog.clear()
        with caplog.at_level(logging.ERROR, logger="flask_mcp"), contextlib.ExitStack() as stack:
            if index:
                stack.enter_context(pair.lane.shut())
            got = pair.post(index, body, headers)
        assert got.status == 200 and got.body["result"]["isError"] is True
        records = [record for record in caplog.records if record.name == "flask_mcp"]
        assert len(records) == 1, records
        assert records[0].exc_info is not None and str(records[0].exc_info[1]) == SECRET
        logged.append(records[0].getMessage())
    assert logged[0] == logged[1] == "tool 'crash' failed"
    assert pair.lane.taken == 1


def test_exposed_errors_are_answered_alike(twins: t.Callable[..., Twins]) -> None:
    pair = twins(MCP_MASK_ERRORS=False)
    pair.open_sessions()
    for era in ERAS:
        got = send_in(era, pair, {"name": "crash", "arguments": {}}, lane=True)
        assert SECRET in got.raw.decode()


# -- the handshake session ----------------------------------------------------------------------


def test_a_missing_session_header_is_answered_alike(pair: Twins) -> None:
    got = pair.agree(
        message({"name": "add", "arguments": {"a": 1, "b": 2}}), handshake_headers(**{"Mcp-Session-Id": None})
    )
    assert got.status == 400


@pytest.mark.parametrize("session", ["unknown-session", "", " "])
def test_an_unknown_session_is_answered_alike(pair: Twins, session: str) -> None:
    got = pair.agree(
        message({"name": "add", "arguments": {"a": 1, "b": 2}}), handshake_headers(**{"Mcp-Session-Id": session})
    )
    assert got.status in (400, 404)


@pytest.mark.parametrize("version", ["1999-01-01", "", "2026-07-28x", MODERN])
def test_a_protocol_version_header_not_served_is_answered_alike(pair: Twins, version: str) -> None:
    headers = handshake_headers(**{"MCP-Protocol-Version": version})
    pair.agree(message({"name": "add", "arguments": {"a": 1, "b": 2}}), headers, lane=False)


@pytest.mark.parametrize("version", ["2025-06-18", "2025-03-26", "2024-11-05", None])
def test_other_handshake_versions_take_the_lane(pair: Twins, version: str | None) -> None:
    headers = handshake_headers(**{"MCP-Protocol-Version": version})
    pair.agree(message({"name": "add", "arguments": {"a": 1, "b": 2}}), headers, lane=True)


def test_another_principals_session_is_answered_alike(twins: t.Callable[..., Twins]) -> None:
    # The twins' tools carry no permissions: with authentication on, the server says so once.
    with pytest.warns(UnprotectedToolWarning, match="no permissions while authentication is configured"):
        pair = twins(MCP_AUTH_TOKENS=TOKENS)
        pair.open_sessions(token="tok-ada")
    call = message({"name": "add", "arguments": {"a": 1, "b": 2}})
    assert pair.agree(call, handshake_headers(Authorization="Bearer tok-ada"), lane=True).status == 200
    assert pair.agree(call, handshake_headers(Authorization="Bearer tok-bob")).status == 404
    missing = pair.agree(call, handshake_headers())
    assert missing.status == 401 and dict(missing.headers)["WWW-Authenticate"]
    assert pair.agree(call, handshake_headers(Authorization="Bearer wrong")).status == 401
    params = modern_params({"name": "add", "arguments": {"a": 1, "b": 2}})
    assert pair.agree(message(params), modern_headers(params, Authorization="Bearer tok-bob"), lane=True).status == 200
    assert pair.agree(message(params), modern_headers(params)).status == 401


def test_a_session_deleted_is_answered_alike(pair: Twins) -> None:
    for index, app in enumerate(pair.apps):
        headers = {"Accept": ACCEPT, "Mcp-Session-Id": t.cast(str, pair.sessions[index])}
        assert app.test_client().delete("/mcp", headers=headers).status_code in (200, 204)
    got = pair.agree(message({"name": "add", "arguments": {"a": 1, "b": 2}}), handshake_headers())
    assert got.status == 404


def test_a_server_without_the_modern_era_answers_alike(twins: t.Callable[..., Twins]) -> None:
    pair = twins(MCP_MODERN_ERA=False)
    pair.open_sessions()
    params = modern_params({"name": "add", "arguments": {"a": 1, "b": 2}})
    pair.agree(message(params), handshake_headers(), lane=True)  # _meta is just _meta there
    pair.agree(message(params), modern_headers(params), lane=False)


# -- the modern envelope and its routing headers ------------------------------------------------


def modern_case(pair: Twins, params: dict[str, t.Any], *, lane: bool | None, **headers: str | None) -> Answer:
    return pair.agree(message(params), modern_headers(params, **headers), lane=lane)


VALID_MODERN = modern_params({"name": "add", "arguments": {"a": 1, "b": 2}})


@pytest.mark.parametrize(
    ("headers", "taken"),
    [
        ({}, True),
        ({"Mcp-Method": None}, False),
        ({"Mcp-Method": "tools/list"}, False),
        ({"Mcp-Method": "=?base64?dG9vbHMvY2FsbA==?="}, True),  # a sentinel where plain would do: decoded
        ({"Mcp-Method": "=?base64?dG9vbHMvY2FsbA=?="}, False),
        ({"Mcp-Name": None}, False),
        ({"Mcp-Name": "sub"}, False),
        ({"Mcp-Name": "ADD"}, False),
        ({"Mcp-Name": " add "}, True),
        ({"Mcp-Name": "=?base64?YWRk?="}, True),
        ({"Mcp-Name": "=?base64?YWRk?"}, False),
        ({"Mcp-Name": "=?base64?YWRk=?="}, False),
        ({"MCP-Protocol-Version": None}, False),
        ({"MCP-Protocol-Version": HANDSHAKE}, False),
        ({"MCP-Protocol-Version": "=?base64?MjAyNi0wNy0yOA==?="}, True),
        ({"MCP-Protocol-Version": f"{MODERN} "}, True),
        ({"MCP-Protocol-Version": "=?base64?MjAyNi0wNy0yOA?="}, False),
        ({"Mcp-Session-Id": "ignored-in-this-era"}, True),
    ],
)
def test_routing_headers_are_answered_alike(pair: Twins, headers: dict[str, str | None], taken: bool) -> None:
    modern_case(pair, VALID_MODERN, lane=taken, **headers)


def test_a_name_that_is_not_ascii_is_answered_alike(pair: Twins) -> None:
    params = modern_params({"name": UNICODE_NAME, "arguments": {}})
    assert t.cast(str, modern_headers(params)["Mcp-Name"]).startswith("=?base64?")
    assert modern_case(pair, params, lane=False).status == 400  # no such tool


@pytest.mark.parametrize(
    ("arguments", "headers", "taken"),
    [
        ({"region": "eu"}, {}, True),
        ({"region": "eu", "limit": 5}, {}, True),
        ({"region": "eu"}, {"Mcp-Param-Region": None}, False),
        ({"region": "eu"}, {"Mcp-Param-Region": "us"}, False),
        ({"region": "süd"}, {}, True),
        ({}, {"Mcp-Param-Region": "eu"}, False),
        ({"region": 5}, {"Mcp-Param-Region": "5"}, False),
    ],
)
def test_argument_headers_are_answered_alike(
    pair: Twins, arguments: dict[str, t.Any], headers: dict[str, str | None], taken: bool
) -> None:
    modern_case(pair, modern_params({"name": "regional", "arguments": arguments}), lane=taken, **headers)


@pytest.mark.parametrize(
    ("meta", "taken"),
    [
        ({CLIENT_CAPABILITIES: None}, False),
        ({CLIENT_CAPABILITIES: []}, False),
        ({CLIENT_CAPABILITIES: {"sampling": {}}}, True),
        ({PROTOCOL_VERSION: 20260728}, False),
        ({PROTOCOL_VERSION: "2099-01-01"}, False),
        ({PROTOCOL_VERSION: HANDSHAKE}, False),
        ({CLIENT_INFO: {"name": "c", "version": "1"}}, True),
        ({CLIENT_INFO: {"version": "1"}}, False),
        ({CLIENT_INFO: "c"}, False),
        ({LOG_LEVEL: "debug"}, True),
        ({LOG_LEVEL: "loud"}, False),
        ({LOG_LEVEL: None}, True),
        ({"progressToken": 5}, True),
    ],
)
def test_envelope_members_are_answered_alike(pair: Twins, meta: dict[str, t.Any], taken: bool) -> None:
    params = {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": {**META, **meta}}
    version = meta.get(PROTOCOL_VERSION, MODERN)
    modern_case(pair, params, lane=taken, **{"MCP-Protocol-Version": str(version)})


def test_an_envelope_without_capabilities_is_answered_alike(pair: Twins) -> None:
    params = {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": {PROTOCOL_VERSION: MODERN}}
    assert modern_case(pair, params, lane=False).status == 400


def test_a_modern_header_without_an_envelope_is_answered_alike(pair: Twins) -> None:
    params = {"name": "add", "arguments": {"a": 1, "b": 2}}
    assert modern_case(pair, params, lane=False).status == 400


def test_a_stateless_server_answers_modern_calls_alike(twins: t.Callable[..., Twins]) -> None:
    pair = twins(MCP_STATELESS=True)
    modern_case(pair, VALID_MODERN, lane=True)
    modern_case(pair, modern_params({"name": "add", "arguments": {"a": "x"}}), lane=False)


# -- tools and servers the lane leaves to the general path ---------------------------------------


def _transactions() -> contextlib.AbstractContextManager[None]:
    return contextlib.nullcontext()


def _special(**options: t.Any) -> Setup:
    def setup(mcp: MCP) -> None:
        @mcp.tool(name="special", **options)
        def special(a: int) -> int:
            return a + 1

    return setup


def _with_context(mcp: MCP) -> None:
    @mcp.tool(name="special")
    def special(a: int, ctx: Context) -> int:
        return a + (ctx.request_id is not None)


def _with_data(mcp: MCP) -> None:
    @mcp.tool(name="special")
    def special(a: int, data: dict[str, t.Any]) -> int:
        return a + len(data)


def _with_user(mcp: MCP) -> None:
    @mcp.tool(name="special")
    def special(a: int, user: t.Any = None) -> int:
        return a + (user is None)


def _as_route(mcp: MCP) -> list[Blueprint]:
    blueprint = Blueprint("items", __name__)

    @mcp.tool(name="special")
    @blueprint.route("/items/<int:a>")
    def special(a: int) -> dict[str, int]:
        return {"a": a + 1}

    return [blueprint]


def _before(mcp: MCP) -> None:
    _special()(mcp)
    mcp.before_call(lambda info: None)


def _after(mcp: MCP) -> None:
    _special()(mcp)
    mcp.after_call(lambda info, result: None)


def _on_error(mcp: MCP) -> None:
    _special()(mcp)
    mcp.on_error(lambda info, error: None)


#: (what it is, the setup, MCP options, app config).
GENERAL_ONLY: list[tuple[str, Setup, dict[str, t.Any], dict[str, t.Any]]] = [
    ("permissions", _special(permissions=[Authenticated]), {}, {}),
    ("public permissions on a guarded server", _special(), {"default_permissions": [Authenticated]}, {}),
    ("rate_limit", _special(rate_limit="1000/minute"), {}, {}),
    ("task support", _special(task="optional"), {}, {}),
    ("a data parameter", _with_data, {}, {}),
    ("a user parameter", _with_user, {}, {}),
    ("cached results", _special(cache=60, annotations={"readOnlyHint": True}), {}, {}),
    ("atomic", _special(atomic=True), {"transaction": _transactions}, {}),
    ("timeout", _special(timeout=30), {}, {}),
    ("max_result_bytes", _special(max_result_bytes=10_000), {}, {}),
    ("a server-wide result limit", _special(), {}, {"MCP_MAX_RESULT_BYTES": 10_000}),
    ("a server-wide timeout", _special(), {}, {"MCP_TOOL_TIMEOUT": 30}),
    ("a kwargs provider", _special(kwargs=lambda ctx: {}), {}, {}),
    ("a route's view", _as_route, {}, {}),
    ("before_call", _before, {}, {}),
    ("after_call", _after, {}, {}),
    ("on_error", _on_error, {}, {}),
    ("a server-wide rate limit", _special(), {}, {"MCP_RATE_LIMIT": "1000/minute"}),
]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(("what", "setup", "options", "config"), GENERAL_ONLY, ids=[case[0] for case in GENERAL_ONLY])
def test_tools_the_lane_leaves_alone_are_answered_alike(
    twins: t.Callable[..., Twins],
    era: str,
    what: str,
    setup: Setup,
    options: dict[str, t.Any],
    config: dict[str, t.Any],
) -> None:
    pair = twins(setup, options, **config)
    pair.open_sessions()
    for arguments in ({"a": 1}, {"a": "x"}, {}):
        got = send_in(era, pair, {"name": "special", "arguments": arguments}, lane=False)
        assert got.status in (200, 400, 403)
    assert pair.plain_call("special") is None
    if not config and not options and setup not in (_before, _after, _on_error):
        assert pair.plain_call("add") is not None  # the other tools still take it


# -- tools that talk back ------------------------------------------------------------------------


def _talking(mcp: MCP) -> None:
    @mcp.tool(name="special")
    def special(a: int, ctx: Context) -> int:
        ctx.report_progress(1, total=2)
        ctx.info(f"a is {a}")
        ctx.report_progress(2, total=2)
        return a + (ctx.request_id is not None)


def _named_streams(answer: Answer) -> Answer:
    # Each stream is named anew: the same events in a stream of another name are the same answer.
    raw = re.sub(rb"(?m)^id: [A-Za-z0-9_-]+:", b"id: S:", answer.raw)
    return dataclasses.replace(answer, raw=raw, body=raw if answer.body == answer.raw else answer.body)


@pytest.mark.parametrize("setup", [_with_context, _talking], ids=["quiet", "streamed"])
@pytest.mark.parametrize("meta", [None, {"progressToken": "p-1"}], ids=["no token", "a progress token"])
def test_a_tool_that_takes_a_context_takes_the_lane_in_a_handshake_session(
    twins: t.Callable[..., Twins], setup: Setup, meta: dict[str, t.Any] | None
) -> None:
    """Answered alike, byte for byte but the stream's name, whether it streams or not."""
    pair = twins(setup)
    pair.open_sessions()
    for arguments, lane in (({"a": 1}, True), ({"a": "x"}, False), ({}, False)):
        params = {"name": "special", "arguments": arguments, **({"_meta": meta} if meta else {})}
        served, general, taken = pair.send(message(params), handshake_headers())
        assert _named_streams(served) == _named_streams(general)
        assert taken is lane
        if lane and meta and setup is _talking:
            assert served.raw.count(b"notifications/progress") == 2
    assert pair.plain_call("special").context == "ctx"


@pytest.mark.parametrize("meta", [{}, {"progressToken": "p-1"}], ids=["no token", "a progress token"])
def test_a_tool_that_takes_a_context_takes_the_lane_in_a_modern_request(
    twins: t.Callable[..., Twins], meta: dict[str, t.Any]
) -> None:
    """Answered alike, byte for byte: a modern stream has no event ids."""
    pair = twins(_talking)
    for arguments, lane in (({"a": 1}, True), ({"a": "x"}, False)):
        params = modern_params({"name": "special", "arguments": arguments})
        params["_meta"].update(meta)
        got = pair.agree(message(params), modern_headers(params), lane=lane)
        if lane and meta:
            assert got.raw.count(b"notifications/progress") == 2 and b'"resultType":"complete"' in got.raw


def _telling(mcp: MCP) -> None:
    @mcp.tool(name="special")
    def special(a: int, ctx: Context) -> str:
        ctx.debug("a debug line")  # sent only to a client that asked for debug logs
        return json.dumps({"capabilities": ctx.client_capabilities, "version": ctx.protocol_version, "a": a})


@pytest.mark.parametrize(
    "meta",
    [{}, {CLIENT_INFO: {"name": "c", "version": "1"}, LOG_LEVEL: "debug"}, {CLIENT_CAPABILITIES: {"roots": {}}}],
    ids=["envelope", "client info and log level", "capabilities"],
)
def test_a_context_sees_the_modern_envelope_the_general_path_sees(
    twins: t.Callable[..., Twins], meta: dict[str, t.Any]
) -> None:
    """The lane makes the call's client of its envelope as the general path does: the same answer, byte for byte."""
    pair = twins(_telling)
    params = modern_params({"name": "special", "arguments": {"a": 1}})
    params["_meta"].update(meta)
    got = pair.agree(message(params), modern_headers(params), lane=True)
    assert (b"a debug line" in got.raw) is (LOG_LEVEL in meta)
    told = json.dumps(meta.get(CLIENT_CAPABILITIES, {}))
    assert json.dumps(told).encode()[1:-1] in got.raw


def _asking(mcp: MCP) -> None:
    @mcp.tool(name="special")
    def special(a: int, ctx: Context) -> int:
        ctx.report_progress(1)
        return a + len(ctx.list_roots())


def test_a_modern_call_that_asks_the_client_takes_the_lane_to_its_input_round(twins: t.Callable[..., Twins]) -> None:
    """The question ends the request with input_required, as on the general path (each state sealed anew)."""
    pair = twins(_asking)
    params = modern_params({"name": "special", "arguments": {"a": 1}})
    params["_meta"][CLIENT_CAPABILITIES] = {"roots": {}}
    served, general, taken = pair.send(message(params), modern_headers(params))
    assert taken

    def round_of(answer: Answer) -> dict[str, t.Any]:
        result = answer.body["result"]  # nothing was streamed: no progress token
        assert result["resultType"] == "input_required" and result.pop("requestState")
        return t.cast(dict[str, t.Any], result)

    assert round_of(served) == round_of(general)


def test_a_tool_that_takes_a_context_leaves_an_audited_server_to_the_general_path(
    twins: t.Callable[..., Twins], tmp_path: Path
) -> None:
    pair = twins(_talking, None, MCP_AUDIT=True, MCP_AUDIT_DATABASE_URI=f"sqlite:///{tmp_path / 'audit.sqlite3'}")
    pair.open_sessions()
    params = {"name": "special", "arguments": {"a": 1}, "_meta": {"progressToken": "p"}}
    served, general, taken = pair.send(message(params), handshake_headers())
    assert _named_streams(served) == _named_streams(general) and not taken


@pytest.mark.parametrize("era", ERAS)
def test_a_tool_called_receiver_leaves_every_call_to_the_general_path(pair: Twins, era: str) -> None:
    seen: list[t.Any] = []

    def receiver(sender: t.Any, **info: t.Any) -> None:
        seen.append(sender)

    send_in(era, pair, {"name": "add", "arguments": {"a": 1, "b": 2}}, lane=True)
    with tool_called.connected_to(receiver):
        send_in(era, pair, {"name": "add", "arguments": {"a": 1, "b": 2}}, lane=False)
        assert pair.plain_call("add") is None
    assert len(seen) == 2  # one for each app's call
    send_in(era, pair, {"name": "add", "arguments": {"a": 1, "b": 2}}, lane=True)


# -- changes other processes made -----------------------------------------------------------------


@pytest.fixture
def worker_twins(redis_url: str, prefix: str) -> list[tuple[Flask, Flask]]:
    """Two pairs of workers, each pair sharing a store of its own."""
    return [(worker_app(redis_url, prefix + f"{n}:"), worker_app(redis_url, prefix + f"{n}:")) for n in range(2)]


@pytest.mark.parametrize("change", ["disable", "remove_tool"])
def test_a_tool_another_process_took_away_is_answered_alike(
    worker_twins: list[tuple[Flask, Flask]],
    lane: Lane,
    make_client: t.Callable[..., MCPTestClient],
    monkeypatch: pytest.MonkeyPatch,
    change: str,
) -> None:
    """The lane found the tool before the request caught up with the store: the answer must not show it."""
    monkeypatch.setattr(shared_registry_module, "REFRESH_INTERVAL", 0.0)  # sessionless requests look every time
    clients = [make_client(b) for _, b in worker_twins]
    for client in clients:
        client.initialize(HANDSHAKE)
    handshake = message({"name": "add", "arguments": {"a": 1, "b": 2}})
    params = modern_params({"name": "add", "arguments": {"a": 1, "b": 2}})
    modern = message(params)

    def both(payload: dict[str, t.Any], headers: dict[str, str]) -> tuple[Answer, Answer, int]:
        before = lane.taken
        answers = []
        for index, (client, (_, b)) in enumerate(zip(clients, worker_twins, strict=True)):
            with lane.shut() if index else contextlib.nullcontext():
                sent = {**client.headers(), **headers} if headers is not None else client.headers()
                answers.append(answer_of(b.test_client().post("/mcp", json=payload, headers=sent)))
        return answers[0], answers[1], lane.taken - before

    for payload, headers in ((handshake, {}), (modern, modern_headers(params))):
        served, general, taken = both(payload, t.cast(dict[str, str], headers))
        assert served == general and served.body["result"]["structuredContent"] == {"result": 3}
        assert taken == 1
    for a, _ in worker_twins:
        with a.app_context():
            getattr(a.extensions["mcp"].mcp, change)("add")
    for payload, headers in ((handshake, {}), (modern, modern_headers(params))):
        served, general, _ = both(payload, t.cast(dict[str, str], headers))
        assert served == general, (served, general)
        assert "add" in served.body["error"]["message"]


# -- generated variations around the valid call ---------------------------------------------------

JSON_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**60), max_value=2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)
ARGUMENT_VALUES = st.sampled_from([1, -7, 2**53, 1.5, True, "eu", "", None, [], {}]) | JSON_VALUES
#: (tool, valid arguments) the variations start from.
STARTS = [
    ("add", {"a": 1, "b": 2}),
    ("scale", {"x": 2.5}),
    ("echo", {"text": "hi", "loud": False}),
    ("regional", {"region": "eu"}),
    ("nothing", {}),
]
HEADER_VALUES = st.sampled_from(
    [None, MODERN, HANDSHAKE, "2099-01-01", "tools/call", "tools/list", "add", "echo", "=?base64?YWRk?=", "", "x"]
)


@st.composite
def variations(draw: st.DrawFn) -> tuple[dict[str, t.Any], dict[str, str | None]]:
    """A ``tools/call`` near a valid one, in either era, with some members and headers changed."""
    modern = draw(st.booleans())
    name, arguments = draw(st.sampled_from(STARTS))
    arguments = dict(arguments)
    for key in draw(
        st.lists(st.sampled_from(["a", "b", "x", "factor", "text", "loud", "region", "limit", "zz"]), max_size=3)
    ):
        if draw(st.booleans()):
            arguments.pop(key, None)
        else:
            arguments[key] = draw(ARGUMENT_VALUES)
    params: dict[str, t.Any] = {"name": name, "arguments": arguments}
    if modern:
        params["_meta"] = dict(META)
    for key in draw(
        st.lists(st.sampled_from(["name", "arguments", "_meta", "task", "extra", "requestState"]), max_size=2)
    ):
        params[key] = draw(st.sampled_from([name, "nope", UNICODE_NAME, None, 3, {}, [], {"progressToken": 1}]))
    if modern and isinstance(params.get("_meta"), dict):
        meta = dict(params["_meta"])
        for key in draw(
            st.lists(st.sampled_from([PROTOCOL_VERSION, CLIENT_CAPABILITIES, LOG_LEVEL, CLIENT_INFO]), max_size=2)
        ):
            if draw(st.booleans()):
                meta.pop(key, None)
            else:
                meta[key] = draw(st.sampled_from([MODERN, "2099-01-01", {}, None, "debug", "loud", {"name": "c"}, 1]))
        params["_meta"] = meta
    payload = message(params, request_id=draw(st.sampled_from([7, "seven", 2**53, 2**53 + 1, None, 1.5, True])))
    for key in draw(st.lists(st.sampled_from(["jsonrpc", "method", "id", "params"]), max_size=1)):
        if draw(st.booleans()):
            payload.pop(key)
        else:
            payload[key] = draw(st.sampled_from(["2.0", "1.0", "tools/call", "ping", None, 1, {}]))
    headers = modern_headers(params) if modern else handshake_headers()
    for key in draw(
        st.lists(st.sampled_from(["MCP-Protocol-Version", "Mcp-Method", "Mcp-Name", "Mcp-Param-Region"]), max_size=2)
    ):
        headers[key] = draw(HEADER_VALUES)
    if draw(st.integers(0, 9)) == 0:
        headers["Mcp-Session-Id"] = draw(st.sampled_from([None, "unknown", OWN_SESSION]))
    return payload, headers


def test_variations_of_a_call_are_answered_alike(pair: Twins) -> None:
    taken_before = pair.lane.taken
    taken: list[bool] = []

    @settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
    @given(variations())
    def check(case: tuple[dict[str, t.Any], dict[str, str | None]]) -> None:
        payload, headers = case
        served, general, lane_took = pair.send(payload, headers)
        assert served == general, (payload, headers, served, general)
        taken.append(lane_took)

    check()
    # Some variations stayed valid calls: the lane was exercised, and so was the general path.
    assert any(taken) and not all(taken)
    assert pair.lane.taken - taken_before == sum(taken)


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("change", ["disable", "remove_tool", "replace"])
def test_a_change_the_request_catches_up_with_is_answered_alike(pair: Twins, era: str, change: str) -> None:
    """The same as above in one process: the change arrives as the request is brought in step."""
    send_in(era, pair, {"name": "add", "arguments": {"a": 1, "b": 2}}, lane=True)  # the plan is worked out
    for app in pair.apps:
        state = state_of(app)
        mcp = state.mcp
        pending = [True]

        def change_now(mcp: MCP = mcp, pending: list[bool] = pending) -> None:
            if pending and pending.pop():
                if change == "replace":
                    mcp.remove_tool("add")
                    mcp.tool(name="add")(lambda a, b: a - b)
                else:
                    getattr(mcp, change)("add")

        def keep_in_step(*args: t.Any, step: t.Any = state.keep_in_step, change_now: t.Any = change_now) -> None:
            step(*args)
            change_now()

        def keep_in_step_along(
            record: t.Any, step: t.Any = state.keep_in_step_along, change_now: t.Any = change_now
        ) -> None:
            step(record)
            change_now()

        state.keep_in_step, state.keep_in_step_along = keep_in_step, keep_in_step_along  # type: ignore[method-assign]
    got = send_in(era, pair, {"name": "add", "arguments": {"a": 1, "b": 2}}, lane=False)
    if change == "replace":
        assert got.body["result"]["structuredContent"] == {"result": -1}
    else:
        assert "add" in got.body["error"]["message"]
