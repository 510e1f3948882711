"""Property-based tests: whatever a client sends, the answer is strict JSON, never a 5xx, never a traceback.

Hypothesis generates envelopes, ids, params, headers and bodies in odd
encodings and sends them to the MCP endpoint, the REST routes and the CGI
adapter. The example count is small by default so the suite stays fast;
``nox -s fuzz`` runs the same properties with the ``fuzz`` profile
(``HYPOTHESIS_PROFILE=fuzz``), thousands of examples each.
"""

from __future__ import annotations

import io
import json
import os
import re
import typing as t

from flask import Flask
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flask_mcp import MCP, Context
from flask_mcp.transport.cgi import handle_cgi

settings.register_profile(
    "ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
settings.register_profile(
    "fuzz", max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

ACCEPT = "application/json, text/event-stream"
#: What leaks internals: a traceback, a file path of the server, a Python repr of an exception class.
LEAKS = re.compile(r'Traceback|File "|/site-packages/|\.py", line|<class ')


def build_app() -> Flask:
    """An app with a tool of every shape, a resource template and a prompt; sessions in SimpleCache."""
    server = MCP(name="fuzz", version="1.0.0")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def flags(on: bool, ratio: float = 0.5, tags: list[str] | None = None) -> dict[str, t.Any]:
        """Echo typed arguments."""
        return {"on": on, "ratio": ratio, "tags": tags or []}

    @server.tool()
    def talk(steps: int, ctx: Context) -> str:
        """Report progress (answers as an event stream)."""
        for step in range(min(max(steps, 0), 3)):
            ctx.report_progress(step + 1, total=3)
        return "talked"

    @server.resource("notes://{note_id}", mime_type="text/plain")
    def note(note_id: str) -> str:
        """A note."""
        return f"note {note_id}"

    @server.prompt()
    def review(code: str) -> str:
        """Review code."""
        return f"Review: {code}"

    app = Flask("fuzz")
    # Budgets far above what one run sends: the properties are about answers, not quotas.
    app.config.update(TESTING=True, MCP_SESSION_RATE_LIMIT=None)
    server.init_app(app)
    return app


APP = build_app()
HTTP = APP.test_client()


def session_id() -> str:
    """A live session of the app, made once per process."""
    if not hasattr(session_id, "value"):
        response = HTTP.post(
            "/mcp",
            json={
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "f", "version": "1"},
                },
            },
            headers={"Accept": ACCEPT},
        )
        session_id.value = response.headers["Mcp-Session-Id"]  # type: ignore[attr-defined]
    return t.cast(str, session_id.value)  # type: ignore[attr-defined]


def _reject_constant(name: str) -> t.NoReturn:
    raise AssertionError(f"{name} in a response: not JSON")


def assert_sound(status: int, content_type: str | None, body: bytes) -> None:
    """Never a 5xx; a body, if any, is strict JSON with no internals in it."""
    assert status < 500, (status, body[:500])
    if not body:
        return
    assert content_type is not None and content_type.startswith(("application/json", "text/event-stream")), content_type
    text = body.decode("utf-8")
    assert not LEAKS.search(text), text[:500]
    if content_type.startswith("application/json"):
        json.loads(text, parse_constant=_reject_constant)
    else:
        for line in text.splitlines():
            if line.startswith("data: ") and len(line) > 6:
                json.loads(line[6:], parse_constant=_reject_constant)


# -- strategies ---------------------------------------------------------------------

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40)
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=20,
)
ids = st.one_of(
    st.integers(min_value=-(2**60), max_value=2**60), st.text(max_size=300), st.none(), st.booleans(), json_values
)
methods = st.sampled_from(
    [
        "initialize",
        "ping",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "resources/subscribe",
        "resources/unsubscribe",
        "prompts/list",
        "prompts/get",
        "completion/complete",
        "logging/setLevel",
        "notifications/cancelled",
        "notifications/initialized",
        "notifications/progress",
    ]
) | st.text(max_size=30)
tool_params = st.fixed_dictionaries(
    {"name": st.sampled_from(["add", "flags", "talk", "nope"]) | st.text(max_size=10)},
    optional={
        "arguments": st.dictionaries(
            st.sampled_from(["a", "b", "on", "ratio", "tags", "steps"]) | st.text(max_size=8), json_values, max_size=5
        )
        | json_values,
        "_meta": json_values,
    },
)
resource_params = st.fixed_dictionaries(
    {"uri": st.sampled_from(["notes://1", "notes://%2F..", "notes://", "x"]) | st.text(max_size=40) | json_values}
)
cursor_params = st.fixed_dictionaries({}, optional={"cursor": st.text(max_size=20) | json_values})
params = st.one_of(tool_params, resource_params, cursor_params, json_values)
envelopes = st.fixed_dictionaries(
    {"jsonrpc": st.sampled_from(["2.0", "1.0", 2]) | json_values},
    optional={"id": ids, "method": methods, "params": params, "result": json_values, "error": json_values},
)
encodings = st.sampled_from(["utf-8", "utf-16", "utf-32", "utf-16-le", "latin-1", "utf-8-sig"])
header_text = st.text(st.characters(min_codepoint=32, max_codepoint=0x2FF, exclude_characters="\r\n"), max_size=40)
hosts = (
    st.sampled_from(["localhost", "127.0.0.1:5000", "[::1]:80", "localhost:80@evil.example", "evil.example"])
    | header_text
)
origins = (
    st.sampled_from(["http://localhost", "http://[::1", "http://[::1]x", "null", "http://[evil.example]"]) | header_text
)


def body_of(envelope: t.Any, encoding: str) -> bytes:
    try:
        return json.dumps(envelope).encode(encoding)
    except UnicodeEncodeError:
        return json.dumps(envelope).encode("utf-8")


# -- the MCP endpoint -----------------------------------------------------------------


@given(envelope=envelopes, encoding=encodings, with_session=st.booleans())
def test_endpoint_answers_any_envelope_soundly(envelope: dict[str, t.Any], encoding: str, with_session: bool) -> None:
    headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
    if with_session:
        headers["Mcp-Session-Id"] = session_id()
    response = HTTP.post("/mcp", data=body_of(envelope, encoding), headers=headers)
    assert_sound(response.status_code, response.content_type, response.get_data())


@given(body=st.binary(max_size=300))
def test_endpoint_answers_any_bytes_soundly(body: bytes) -> None:
    response = HTTP.post("/mcp", data=body, headers={"Accept": ACCEPT, "Content-Type": "application/json"})
    assert_sound(response.status_code, response.content_type, response.get_data())


@given(
    method=st.sampled_from(["GET", "POST", "DELETE", "OPTIONS", "PUT"]),
    host=hosts,
    origin=st.none() | origins,
    accept=st.none() | header_text,
    content_type=st.none() | header_text,
    session=st.none() | header_text,
    version=st.none() | header_text,
    last_event_id=st.none() | header_text | st.text("0123456789²", max_size=6000),
)
def test_endpoint_answers_any_headers_soundly(
    method: str,
    host: str,
    origin: str | None,
    accept: str | None,
    content_type: str | None,
    session: str | None,
    version: str | None,
    last_event_id: str | None,
) -> None:
    headers = {"Host": host}
    for name, value in {
        "Origin": origin,
        "Accept": accept,
        "Content-Type": content_type,
        "Mcp-Session-Id": session,
        "MCP-Protocol-Version": version,
        "Last-Event-ID": last_event_id,
    }.items():
        if value is not None:
            headers[name] = value
    response = HTTP.open(
        "/mcp", method=method, data=b'{"jsonrpc":"2.0","id":1,"method":"ping"}', headers=headers, buffered=False
    )
    try:
        if response.content_type and response.content_type.startswith("text/event-stream"):
            assert response.status_code == 200  # a live stream: its first bytes are the priming event
            return
        if method == "GET" and response.content_type and response.content_type.startswith("text/html"):
            assert response.status_code == 200  # a browser's page about the endpoint
            assert not LEAKS.search(response.get_data(as_text=True))
            return
        assert_sound(response.status_code, response.content_type, response.get_data())
    finally:
        response.close()


# -- the modern era (2026-07-28) ------------------------------------------------------

modern_methods = st.sampled_from(
    ["server/discover", "tools/list", "tools/call", "resources/read", "prompts/get", "subscriptions/listen", "ping"]
) | st.text(max_size=20)
valid_meta = st.fixed_dictionaries(
    {
        "io.modelcontextprotocol/protocolVersion": st.just("2026-07-28"),
        "io.modelcontextprotocol/clientCapabilities": st.sampled_from(
            [{}, {"elicitation": {}}, {"elicitation": {}, "sampling": {}, "roots": {}}]
        ),
    },
    optional={"io.modelcontextprotocol/logLevel": st.sampled_from(["debug", "error"]), "progressToken": st.just("p")},
)
envelope_meta = valid_meta | st.fixed_dictionaries(
    {},
    optional={
        "io.modelcontextprotocol/protocolVersion": st.sampled_from(["2026-07-28", "2025-11-25"]) | json_values,
        "io.modelcontextprotocol/clientCapabilities": st.sampled_from([{}, {"elicitation": {}, "sampling": {}}])
        | json_values,
        "io.modelcontextprotocol/clientInfo": json_values,
        "io.modelcontextprotocol/logLevel": st.sampled_from(["info", "loud"]) | json_values,
        "progressToken": json_values,
    },
)
modern_params = st.fixed_dictionaries(
    {"_meta": envelope_meta},
    optional={
        "name": st.sampled_from(["add", "flags", "talk", "review", "nope"]) | json_values,
        "uri": st.sampled_from(["notes://1", "notes://%2F.."]) | json_values,
        "arguments": st.fixed_dictionaries({}, optional={"a": json_values, "b": json_values, "steps": json_values})
        | json_values,
        "inputResponses": json_values,
        "requestState": st.text(max_size=80) | json_values,
        "notifications": json_values,
    },
)


@given(
    method=modern_methods,
    request_id=st.integers(min_value=0, max_value=2**31) | st.text(max_size=12) | ids,
    params=modern_params,
    header_method=st.none() | header_text,
    header_name=st.none() | header_text,
    header_version=st.sampled_from(["2026-07-28"]) | header_text,
    header_param=st.none() | header_text,
)
def test_modern_requests_are_answered_soundly(
    method: str,
    request_id: t.Any,
    params: dict[str, t.Any],
    header_method: str | None,
    header_name: str | None,
    header_version: str,
    header_param: str | None,
) -> None:
    """Stateless requests with any envelope, routing headers, answers and state: never a 5xx."""
    headers = {"Accept": ACCEPT, "Content-Type": "application/json", "MCP-Protocol-Version": header_version}
    # Without a drawn header, the one a well-behaved client sends: the request then goes past the checks.
    target = params.get("uri") if method == "resources/read" else params.get("name")
    routing = {
        "Mcp-Method": header_method if header_method is not None else method,
        "Mcp-Name": header_name if header_name is not None else target if isinstance(target, str) else None,
        "Mcp-Param-A": header_param,
    }
    for name, value in routing.items():
        if value is not None and value.isascii() and value.isprintable():  # what a header can carry
            headers[name] = value
    envelope = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    response = HTTP.post("/mcp", data=body_of(envelope, "utf-8"), headers=headers, buffered=False)
    try:
        if response.content_type and response.content_type.startswith("text/event-stream"):
            assert response.status_code == 200  # a listen stream, or a call reporting progress
            return
        assert_sound(response.status_code, response.content_type, response.get_data())
    finally:
        response.close()


# -- the REST routes and the CGI adapter ------------------------------------------------


@given(
    name=st.sampled_from(["add", "flags", "talk", "nope"]) | st.text(max_size=10),
    arguments=json_values,
    encoding=encodings,
    content_type=st.sampled_from(["application/json", "text/plain", "application/x-www-form-urlencoded"]),
)
def test_rest_answers_any_call_soundly(name: str, arguments: t.Any, encoding: str, content_type: str) -> None:
    response = HTTP.post(
        f"/mcp/rest/tools/{name}", data=body_of(arguments, encoding), headers={"Content-Type": content_type}
    )
    assert_sound(response.status_code, response.content_type, response.get_data())


@given(uri=st.text(max_size=60))
def test_rest_reads_any_uri_soundly(uri: str) -> None:
    response = HTTP.get("/mcp/rest/resources", query_string={"uri": uri})
    assert_sound(response.status_code, response.content_type, response.get_data())


@given(
    path=st.sampled_from(["/tools/add", "/tools/flags", "/openapi.json", "/tools/"]) | st.text(max_size=20),
    method=st.sampled_from(["POST", "GET", "HEAD", "PUT"]),
    body=json_values,
    encoding=encodings,
    length=st.none() | st.text("0123456789²-x", max_size=8),
)
def test_cgi_answers_any_request_soundly(
    path: str, method: str, body: t.Any, encoding: str, length: str | None
) -> None:
    data = body_of(body, encoding)
    environ: dict[str, t.Any] = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "SERVER_NAME": "localhost",
        "SERVER_PORT": "80",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(data)) if length is None else length,
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(data),
        "wsgi.errors": io.StringIO(),
    }
    response = handle_cgi(APP, environ, io.BytesIO(data))
    assert_sound(response.status, response.headers.get("Content-Type"), response.body)
