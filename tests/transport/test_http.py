"""Streamable HTTP transport: raw HTTP behaviour of the MCP endpoint."""

from __future__ import annotations

import io
import json
import socket
import typing as t

import pytest
from flask import Flask
from flask_caching import Cache
from werkzeug.exceptions import ClientDisconnected
from werkzeug.serving import DechunkedInput

from flask_mcp import MCP, ToolResult
from flask_mcp.transport.http import SESSION_NOT_FOUND

from ..components.test_registry import FORGED_CURSORS
from .test_body import FailingStream

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
SECRET = "secret-detail-4711"


def strict_loads(data: bytes | str) -> t.Any:
    """``json.loads`` that rejects NaN and Infinity, as a strict client would."""

    def reject(name: str) -> t.NoReturn:
        raise ValueError(f"non-JSON constant {name}")

    return json.loads(data, parse_constant=reject)


def json_body(response: t.Any) -> t.Any:
    """The strictly parsed JSON body; fails on HTML or any other media type."""
    assert response.mimetype == "application/json", response.get_data(as_text=True)
    return strict_loads(response.get_data())


def init_message(version: str = "2025-11-25", msg_id: int = 0) -> dict[str, t.Any]:
    return {
        "jsonrpc": "2.0",
        "id": msg_id,
        "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
    }


@pytest.fixture
def app(mcp: MCP, make_app: t.Callable[..., Flask]) -> Flask:
    @mcp.tool()
    def echo(text: str) -> str:
        """Echo the text back."""
        return text

    @mcp.tool()
    def not_a_number() -> float:
        """Return NaN."""
        return float("nan")

    @mcp.tool()
    def infinite_dict() -> dict:
        """Return Infinity inside a dict."""
        return {"value": float("inf")}

    @mcp.tool()
    def nan_structured() -> ToolResult:
        """Return NaN in structuredContent of a hand-made result."""
        return ToolResult(content=["x"], structured_content={"value": float("nan")})

    @mcp.resource("res://nan")
    def nan_resource() -> dict:
        """A resource whose JSON holds NaN."""
        return {"value": float("nan")}

    @mcp.resource("res://known")
    def known() -> str:
        """A plain resource."""
        return "known"

    @mcp.prompt()
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello {name}"

    return make_app(mcp)


@pytest.fixture
def client(app: Flask, make_client: t.Callable[..., t.Any]) -> t.Any:
    """An initialized MCP client with a live session."""
    client = make_client(app)
    client.initialize()
    return client


def post_raw(client: t.Any, body: bytes | str, content_type: str | None = "application/json", **headers: str) -> t.Any:
    return client.http.post("/mcp", data=body, content_type=content_type, headers=client.headers(**headers))


def assert_error(
    schema_checker: t.Any, response: t.Any, status: int, code: int, msg_id: t.Any = None
) -> dict[str, t.Any]:
    """Check status, JSON envelope, code and echoed id; return the error object."""
    assert response.status_code == status, response.get_data(as_text=True)
    body = json_body(response)
    schema_checker.check_envelope(None, body)
    assert body["error"]["code"] == code, body
    assert body["id"] == msg_id
    return t.cast(dict[str, t.Any], body["error"])


# -- parse errors and malformed envelopes ---------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b"{",
        b"",
        b"not json",
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":NaN}}',
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":-Infinity}}',
        b"\xff\xfe\x00garbage",
        b"[" * 100_000,
    ],
    ids=["truncated", "empty", "text", "nan", "infinity", "bad-utf8", "deep-nesting"],
)
def test_parse_error(client: t.Any, schema_checker: t.Any, body: bytes) -> None:
    """Unparseable JSON is 400 / -32700 "Parse error" with a null id."""
    error = assert_error(schema_checker, post_raw(client, body), 400, -32700, msg_id=None)
    assert error["message"] == "Parse error"


@pytest.mark.parametrize(
    ("payload", "echoed_id"),
    [
        ({"jsonrpc": "1.0", "id": 1, "method": "ping"}, 1),
        ({"id": 2, "method": "ping"}, 2),
        ({"jsonrpc": 2.0, "id": 3, "method": "ping"}, 3),
        ({"jsonrpc": "2.0", "id": 4, "method": 5}, 4),
        ({"jsonrpc": "2.0", "id": "five", "method": "ping", "params": [1, 2]}, "five"),
        ({"jsonrpc": "2.0", "id": 6, "method": "ping", "params": "x"}, 6),
        ({"jsonrpc": "2.0", "id": 7}, 7),
        ([{"jsonrpc": "2.0", "id": 8, "method": "ping"}], None),
        ({"jsonrpc": "2.0", "id": True, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": None, "method": "ping"}, None),
        ("ping", None),
    ],
    ids=[
        "jsonrpc-1.0", "jsonrpc-missing", "jsonrpc-number", "method-int", "params-list", "params-string",
        "no-method", "batch", "id-bool", "id-float", "id-object", "id-null-request", "not-an-object",
    ],
)  # fmt: skip
def test_invalid_request(client: t.Any, schema_checker: t.Any, payload: t.Any, echoed_id: t.Any) -> None:
    """Malformed envelopes are 400 / -32600, echoing the id when it is readable."""
    assert_error(schema_checker, client.post(payload), 400, -32600, msg_id=echoed_id)


# -- method-level errors --------------------------------------------------------


def test_unknown_method(client: t.Any) -> None:
    """An unknown method is -32601 naming the method, over HTTP 200."""
    error = client.error("no/such/method")
    assert error["code"] == -32601
    assert error["message"] == "Method not found: no/such/method"


def test_unknown_tool(client: t.Any) -> None:
    """Calling an unregistered tool is -32602 naming the tool."""
    error = client.error("tools/call", {"name": "missing_tool", "arguments": {}})
    assert error["code"] == -32602
    assert error["message"] == "Unknown tool: missing_tool"


def test_unknown_resource(client: t.Any) -> None:
    """Reading an unknown URI is -32002 with the URI in data."""
    error = client.error("resources/read", {"uri": "res://missing"})
    assert error["code"] == -32002
    assert error["data"]["uri"] == "res://missing"


@pytest.mark.parametrize("method", ["tools/list", "resources/list", "resources/templates/list", "prompts/list"])
@pytest.mark.parametrize("cursor", ["!!!", "bm9wZQ", "x" * 50, *FORGED_CURSORS])
def test_invalid_cursor(client: t.Any, method: str, cursor: str) -> None:
    """A cursor the server never issued is -32602, whatever number it holds."""
    assert client.error(method, {"cursor": cursor})["code"] == -32602


# -- notifications and client responses -----------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3, "reason": "x"}},
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
        {"jsonrpc": "2.0", "method": "notifications/no-such-notification"},
        {"jsonrpc": "2.0", "method": "tools/list"},
        {"jsonrpc": "2.0", "method": "ping", "params": {}},
        {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "missing"}},
    ],
    ids=["initialized", "cancelled", "roots-changed", "unknown", "request-method", "ping", "failing-call"],
)
def test_notification_is_accepted_without_answer(client: t.Any, message: dict[str, t.Any]) -> None:
    """A message without id is 202 with an empty body, whatever its method."""
    response = client.post(message)
    assert response.status_code == 202
    assert response.get_data() == b""


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": "server-1", "result": {}},
        {"jsonrpc": "2.0", "id": 9, "result": {"roots": []}},
        {"jsonrpc": "2.0", "id": "server-2", "error": {"code": -1, "message": "declined"}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
    ],
    ids=["result", "result-int-id", "error", "error-null-id"],
)
def test_client_response_is_accepted(client: t.Any, message: dict[str, t.Any]) -> None:
    """A JSON-RPC response sent by the client is 202 with an empty body."""
    response = client.post(message)
    assert response.status_code == 202
    assert response.get_data() == b""


# -- strict JSON, bounded messages and ids --------------------------------------


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        (json.dumps(PING).encode("utf-16"), "not UTF-8"),
        (json.dumps(PING).encode("utf-16-le"), "Expecting"),
        (json.dumps(PING).encode("utf-32"), "not UTF-8"),
        (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"\xed\xa0\x80"}}}',
         "not UTF-8"),
        (b'{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}', "duplicate key 'id'"),
        (b'{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"ping"}', "duplicate key 'method'"),
        (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","name":"x","arguments":{}}}',
         "duplicate key 'name'"),
        (json.dumps(init_message()).replace('"capabilities": {}', '"capabilities": {"x": 1e999}').encode(),
         "must be finite"),
        (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":-1E400}}}',
         "must be finite"),
        (b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"n":' + b"9" * 5000 + b"}}", "4300 digits"),
    ],
    ids=["utf-16", "utf-16-le", "utf-32", "utf-8-surrogate", "duplicate-id", "duplicate-method", "duplicate-nested",
         "overflow-in-initialize", "overflow-in-arguments", "huge-integer"],
)  # fmt: skip
def test_what_json_loads_would_let_through_is_a_parse_error(
    client: t.Any, schema_checker: t.Any, body: bytes, detail: str
) -> None:
    """-32700 with the reason in data.detail, for a fresh client and inside a session alike."""
    error = assert_error(schema_checker, post_raw(client, body), 400, -32700, msg_id=None)
    assert error["message"] == "Parse error"
    assert detail in error["data"]["detail"]


@pytest.mark.parametrize(
    ("config", "params", "detail"),
    [
        ({}, {"x": json.loads("[" * 64 + "]" * 64)}, "nesting is deeper than the limit of 64"),
        ({"MCP_MAX_JSON_DEPTH": 3}, {"x": [[1]]}, "nesting is deeper than the limit of 3"),
        ({}, {str(i): i for i in range(10_001)}, "an object has 10001 members, more than the limit of 10000"),
        ({"MCP_MAX_JSON_KEYS": 4}, dict.fromkeys("abcde", 1), "an object has 5 members, more than the limit of 4"),
        ({"MCP_MAX_JSON_STRING": 16}, {"x": ["y" * 17]}, "a string has 17 characters, more than the limit of 16"),
        ({"MCP_MAX_JSON_STRING": 16}, {"z" * 17: 1}, "a string has 17 characters, more than the limit of 16"),
    ],
    ids=["default-depth", "depth", "default-keys", "keys", "string", "key-string"],
)
def test_messages_past_the_json_limits_are_invalid_requests(
    mcp: MCP,
    make_app: t.Callable[..., Flask],
    make_client: t.Callable[..., t.Any],
    schema_checker: t.Any,
    config: dict[str, t.Any],
    params: dict[str, t.Any],
    detail: str,
) -> None:
    client = make_client(make_app(mcp, MCP_STATELESS=True, **config))
    assert client.request("ping", {"small": [1]}) == {}
    error = assert_error(schema_checker, client.post({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": params}),
                         400, -32600)  # fmt: skip
    assert error["message"] == f"Invalid Request: {detail}"


OVERSIZE_IDS = ["x" * 257, "€" * 86, "x" * 3 * 1024 * 1024, 2**53 + 1, -(2**53) - 1, 10**100]
OVERSIZE_ID_IDS = ["257-bytes", "258-bytes-in-86-chars", "3MiB", "2**53+1", "-2**53-1", "10**100"]


@pytest.fixture
def mailbox_calls(app: Flask, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, t.Any]]:
    """Every store the mailbox is asked to make, recorded instead of made."""
    calls: list[tuple[str, t.Any]] = []
    mailbox = app.extensions["mcp"].mailbox
    monkeypatch.setattr(mailbox, "cancel", lambda session_id, request_id: calls.append(("cancel", request_id)))
    monkeypatch.setattr(
        mailbox, "deliver", lambda session_id, request_id, message: calls.append(("deliver", request_id))
    )
    return calls


@pytest.mark.parametrize("msg_id", OVERSIZE_IDS, ids=OVERSIZE_ID_IDS)
@pytest.mark.parametrize("kind", ["request", "notification-request-id", "result", "error"])
def test_ids_out_of_bounds_never_reach_a_store(
    client: t.Any, schema_checker: t.Any, mailbox_calls: list[tuple[str, t.Any]], msg_id: t.Any, kind: str
) -> None:
    """Request ids, cancelled requestIds and the ids of client responses are bounded before anything keeps them."""
    cancelled = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": msg_id}}
    message: dict[str, t.Any] = {
        "request": {"jsonrpc": "2.0", "id": msg_id, "method": "ping"},
        "notification-request-id": cancelled,
        "result": {"jsonrpc": "2.0", "id": msg_id, "result": {}},
        "error": {"jsonrpc": "2.0", "id": msg_id, "error": {"code": -1, "message": "declined"}},
    }[kind]
    response = client.post(message)
    code = -32602 if kind == "notification-request-id" else -32600
    error = assert_error(schema_checker, response, 400, code, msg_id=None)
    assert "256 bytes" in error["message"]
    assert len(response.get_data()) < 1000  # the id is not echoed
    assert mailbox_calls == []


@pytest.mark.parametrize(
    ("inside", "outside"), [("x" * 256, "x" * 257), ("€" * 85, "€" * 86), (2**53, 2**53 + 1), (-(2**53), -(2**53) - 1)]
)
def test_ids_up_to_the_bounds_are_kept(
    client: t.Any, mailbox_calls: list[tuple[str, t.Any]], inside: t.Any, outside: t.Any
) -> None:
    for msg_id in (inside, outside):
        client.post({"jsonrpc": "2.0", "id": msg_id, "method": "ping"})
        client.post({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": msg_id}})
        client.post({"jsonrpc": "2.0", "id": msg_id, "result": {}})
    assert json_body(client.post({"jsonrpc": "2.0", "id": inside, "method": "ping"}))["id"] == inside
    assert mailbox_calls == [("cancel", inside), ("deliver", inside)]


@pytest.mark.parametrize("params", [{"requestId": True}, {"requestId": 1.5}, {"requestId": {}}, {"reason": 5}])
def test_a_malformed_cancellation_is_refused_before_the_mailbox(
    client: t.Any, schema_checker: t.Any, mailbox_calls: list[tuple[str, t.Any]], params: dict[str, t.Any]
) -> None:
    response = client.post({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})
    assert_error(schema_checker, response, 400, -32602)
    assert mailbox_calls == []


# -- sessions -------------------------------------------------------------------


def test_initialize_issues_unguessable_session_id(client: t.Any) -> None:
    """The session id is visible ASCII and carries at least 128 bits when base64-like."""
    session_id = client.session_id
    assert session_id
    assert all(0x21 <= ord(char) <= 0x7E for char in session_id)
    assert len(session_id) >= 32


def test_each_initialize_mints_a_new_session(app: Flask, make_client: t.Callable[..., t.Any]) -> None:
    """Every initialize yields a distinct session id."""
    ids = set()
    for _ in range(20):
        client = make_client(app)
        client.initialize()
        ids.add(client.session_id)
    assert len(ids) == 20


def test_request_without_session_is_400(client: t.Any, schema_checker: t.Any) -> None:
    """A non-initialize request without Mcp-Session-Id is a 400 JSON error."""
    client.session_id = None
    assert_error(schema_checker, client.post(PING), 400, -32600, msg_id=1)


@pytest.mark.parametrize("session_id", ["unknown-session", "x" * 43, "../../etc/passwd"])
def test_unknown_session_is_404(client: t.Any, schema_checker: t.Any, session_id: str) -> None:
    """An id the server never issued is 404 with a JSON-RPC error body."""
    client.session_id = session_id
    assert_error(schema_checker, client.post(PING), 404, SESSION_NOT_FOUND, msg_id=1)


def test_delete_ends_session(client: t.Any, schema_checker: t.Any) -> None:
    """DELETE is 204; afterwards the id is 404 for requests and for DELETE."""
    assert client.request("ping") == {}
    response = client.http.delete("/mcp", headers=client.headers())
    assert response.status_code == 204
    assert response.get_data() == b""
    assert_error(schema_checker, client.post(PING), 404, SESSION_NOT_FOUND, msg_id=1)
    again = client.http.delete("/mcp", headers=client.headers())
    assert_error(schema_checker, again, 404, SESSION_NOT_FOUND)


def test_delete_without_session_header_is_405(client: t.Any, schema_checker: t.Any) -> None:
    """DELETE without a session belongs to no handshake (405), and the live session survives."""
    response = client.http.delete("/mcp", headers={"Accept": "application/json"})
    assert_error(schema_checker, response, 405, -32600)
    assert response.headers["Allow"] == "POST, OPTIONS"
    assert client.request("ping") == {}


def test_delete_ends_only_its_own_session(app: Flask, make_client: t.Callable[..., t.Any]) -> None:
    """Deleting one session leaves others alive."""
    first, second = make_client(app), make_client(app)
    first.initialize()
    second.initialize()
    assert first.http.delete("/mcp", headers=first.headers()).status_code == 204
    assert second.request("ping") == {}
    assert first.post(PING).status_code == 404


def test_initialize_ignores_client_session_id(client: t.Any, app: Flask) -> None:
    """initialize always mints a fresh id; a client-chosen one never becomes a session."""
    old_id = client.session_id
    sent_id = "attacker-fixed-session-id-0123456789abcdef"
    response = client.post(init_message(), **{"Mcp-Session-Id": sent_id})
    assert response.status_code == 200
    new_id = response.headers.get("Mcp-Session-Id")
    assert new_id and new_id not in (old_id, sent_id)
    other = app.test_client()
    fixed = other.post("/mcp", json=PING, headers={"Accept": "application/json", "Mcp-Session-Id": sent_id})
    assert fixed.status_code == 404


def test_initialize_inside_a_live_session_is_refused(client: t.Any) -> None:
    """A second initialize carrying a live session's id is a 400 that mints nothing; the session lives on."""
    response = client.post(init_message())
    assert response.status_code == 400
    assert "already initialized" in json_body(response)["error"]["message"]
    assert "Mcp-Session-Id" not in response.headers
    assert client.request("ping") == {}


def test_failed_initialize_issues_no_session(client: t.Any, schema_checker: t.Any) -> None:
    """An initialize that errors (no protocolVersion) carries no session id."""
    client.session_id = None  # a new handshake, outside the session the fixture opened
    response = client.post({"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {}})
    assert response.status_code == 200
    body = json_body(response)
    schema_checker.check_envelope("initialize", body)
    assert body["error"]["code"] == -32602
    assert "Mcp-Session-Id" not in response.headers


# -- stateless mode -------------------------------------------------------------


@pytest.fixture
def stateless_app(mcp: MCP, make_app: t.Callable[..., Flask]) -> Flask:
    @mcp.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return make_app(mcp, MCP_STATELESS=True)


def test_stateless_initialize_has_no_session(stateless_app: Flask, make_client: t.Callable[..., t.Any]) -> None:
    """MCP_STATELESS: no Mcp-Session-Id, and requests work without one."""
    client = make_client(stateless_app)
    client.initialize()
    assert client.session_id is None
    assert client.request("ping") == {}
    assert client.call_tool("add", {"a": 2, "b": 40})["structuredContent"] == {"result": 42}


def test_stateless_request_without_initialize(stateless_app: Flask, make_client: t.Callable[..., t.Any]) -> None:
    """A stateless server answers a request that was never preceded by initialize."""
    client = make_client(stateless_app)
    assert client.call_tool("add", {"a": 1, "b": 1})["structuredContent"] == {"result": 2}


@pytest.mark.parametrize("method", ["DELETE", "GET"])
def test_stateless_delete_and_get_are_405(
    stateless_app: Flask, make_client: t.Callable[..., t.Any], schema_checker: t.Any, method: str
) -> None:
    """Without sessions there is nothing to DELETE: 405 naming POST (and OPTIONS) only."""
    client = make_client(stateless_app)
    response = client.http.open("/mcp", method=method, headers=client.headers(**{"Mcp-Session-Id": "abc"}))
    assert_error(schema_checker, response, 405, -32600)
    assert [m.strip() for m in response.headers["Allow"].split(",")] == ["POST", "OPTIONS"]


# -- MCP-Protocol-Version header and negotiation ---------------------------------


def test_missing_protocol_version_header_is_accepted(client: t.Any) -> None:
    """A request without MCP-Protocol-Version is served."""
    client.protocol_version = None
    assert "MCP-Protocol-Version" not in client.headers()
    assert client.request("ping") == {}


@pytest.mark.parametrize("version", VERSIONS)
def test_supported_protocol_version_header_is_accepted(client: t.Any, version: str) -> None:
    """Every supported revision in the header is accepted."""
    client.protocol_version = version
    assert client.request("ping") == {}


@pytest.mark.parametrize("message", [PING, init_message()], ids=["ping", "initialize"])
@pytest.mark.parametrize("version", ["1999-01-01", "2025-11-26", "latest", ""])
def test_unsupported_protocol_version_header_is_400(
    client: t.Any, schema_checker: t.Any, message: dict[str, t.Any], version: str
) -> None:
    """An unknown revision is 400 with a JSON error listing the supported ones."""
    response = client.post(message, **{"MCP-Protocol-Version": version})
    error = assert_error(schema_checker, response, 400, -32600, msg_id=message["id"])
    assert set(VERSIONS) <= set(error["data"]["supported"])
    assert version not in error["data"]["supported"]


@pytest.mark.parametrize("version", VERSIONS)
def test_initialize_echoes_supported_version(app: Flask, make_client: t.Callable[..., t.Any], version: str) -> None:
    """The server answers with the client's revision when it speaks it."""
    assert make_client(app).initialize(version)["protocolVersion"] == version


@pytest.mark.parametrize("version", ["1999-01-01", "2026-01-01", "draft"])
def test_initialize_offers_latest_for_unknown_version(
    app: Flask, make_client: t.Callable[..., t.Any], version: str
) -> None:
    """An unknown requested revision is answered with the latest one."""
    assert make_client(app).initialize(version)["protocolVersion"] == "2025-11-25"


def test_negotiated_version_is_remembered(app: Flask, make_client: t.Callable[..., t.Any]) -> None:
    """The session keeps the negotiated revision."""
    client = make_client(app)
    client.initialize("2025-03-26")
    state = app.extensions["mcp"].sessions.load(client.session_id)
    assert state.protocol_version == "2025-03-26"


# -- Accept, Content-Type, size --------------------------------------------------


@pytest.mark.parametrize(
    "accept",
    ["application/json", "application/json, text/event-stream", "text/event-stream, application/json;q=0.5", "*/*",
     "application/*", None],
)  # fmt: skip
def test_acceptable_accept_headers(client: t.Any, accept: str | None) -> None:
    """Any Accept that admits application/json, or none at all, is served."""
    headers = client.headers()
    del headers["Accept"]
    if accept is not None:
        headers["Accept"] = accept
    response = client.http.post("/mcp", json=PING, headers=headers)
    assert response.status_code == 200
    assert json_body(response)["result"] == {}


@pytest.mark.parametrize("accept", ["text/event-stream", "text/html", "application/json;q=0"])
def test_unacceptable_accept_is_406(client: t.Any, schema_checker: t.Any, accept: str) -> None:
    """An Accept that excludes application/json is 406 with a JSON body."""
    assert_error(schema_checker, client.post(PING, Accept=accept), 406, -32600)


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "application/jsonx", None])
def test_wrong_content_type_is_415(client: t.Any, schema_checker: t.Any, content_type: str | None) -> None:
    """A body that is not declared as application/json is 415 with a JSON body."""
    response = post_raw(client, json.dumps(PING), content_type=content_type)
    if content_type is None:
        assert "CONTENT_TYPE" not in response.request.environ
    assert_error(schema_checker, response, 415, -32600)


def test_content_type_with_charset_is_accepted(client: t.Any) -> None:
    """Parameters of the media type do not matter."""
    response = post_raw(client, json.dumps(PING), content_type="application/json; charset=utf-8")
    assert response.status_code == 200


LIMIT = 1024


def padded_ping(size: int) -> bytes:
    """A valid ping request of exactly *size* bytes."""
    head, tail = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"', b'"}}'
    body = head + b"a" * (size - len(head) - len(tail)) + tail
    assert len(body) == size
    return body


@pytest.fixture
def small_client(mcp: MCP, make_app: t.Callable[..., Flask], make_client: t.Callable[..., t.Any]) -> t.Any:
    """An initialized client of an app whose body limit is LIMIT bytes."""
    client = make_client(make_app(mcp, MCP_MAX_CONTENT_LENGTH=LIMIT))
    client.initialize()
    return client


def send_body(client: t.Any, body: bytes, chunked: bool) -> t.Any:
    if not chunked:
        return post_raw(client, body)
    # Servers that decode chunked bodies (werkzeug's, gunicorn) set
    # wsgi.input_terminated; without it werkzeug would hand the app an empty stream.
    # They send no Content-Length with it (werkzeug's server gives ""); the test
    # client would compute one from the stream, and both headers are refused.
    return client.http.post(
        "/mcp",
        input_stream=io.BytesIO(body),
        content_type="application/json",
        headers=client.headers(**{"Transfer-Encoding": "chunked"}),
        environ_overrides={"wsgi.input_terminated": True, "CONTENT_LENGTH": ""},
    )


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
@pytest.mark.parametrize(("size", "status"), [(LIMIT, 200), (LIMIT + 1, 413), (20 * LIMIT, 413)])
def test_body_size_limit(small_client: t.Any, schema_checker: t.Any, chunked: bool, size: int, status: int) -> None:
    """Bodies up to MCP_MAX_CONTENT_LENGTH pass; larger ones are 413 JSON, with or without Content-Length."""
    response = send_body(small_client, padded_ping(size), chunked)
    assert (response.request.content_length is None) is chunked
    if status == 200:
        assert response.status_code == 200, response.get_data(as_text=True)
        assert json_body(response)["result"] == {}
    else:
        assert_error(schema_checker, response, 413, -32600)


PING_BYTES = json.dumps(PING).encode()
CHUNKED = {"HTTP_TRANSFER_ENCODING": "chunked", "wsgi.input_terminated": True, "CONTENT_LENGTH": ""}

#: (WSGI environ the server would hand over, status, message): framings that are refused.
REFUSED_FRAMINGS = [
    ({**CHUNKED, "CONTENT_LENGTH": str(len(PING_BYTES))}, 400, "both Content-Length and Transfer-Encoding"),
    ({**CHUNKED, "CONTENT_LENGTH": "0"}, 400, "both Content-Length and Transfer-Encoding"),
    ({**CHUNKED, "HTTP_TRANSFER_ENCODING": "identity", "CONTENT_LENGTH": "5"}, 400, "both Content-Length"),
    ({**CHUNKED, "HTTP_TRANSFER_ENCODING": "gzip"}, 400, "last transfer coding of a request must be chunked"),
    ({**CHUNKED, "HTTP_TRANSFER_ENCODING": "chunked, gzip"}, 400, "must be chunked"),
    ({**CHUNKED, "wsgi.input_terminated": False}, 411, "Length Required"),
    *(
        ({"CONTENT_LENGTH": value}, 400, "Content-Length must be a decimal number")
        for value in ["²", "٣", "\uff11", "+16", "-1", " 16", "16 ", "1_6", "0x10", "1e3", "16, 16", "9" * 5000]
    ),
    ({"CONTENT_LENGTH": "1000"}, 400, f"the body ended after {len(PING_BYTES)} of its 1000 bytes"),
    *(
        ({"wsgi.input": FailingStream(error)}, 400, "the request body could not be read")
        for error in [OSError("connection reset"), ValueError("bad chunk"), ClientDisconnected(), RuntimeError("x")]
    ),
    *(
        ({**CHUNKED, "wsgi.input": DechunkedInput(io.BytesIO(raw))}, 400, "the request body could not be read")
        for raw in [b"zz\r\n" + PING_BYTES, b"-5\r\nhello\r\n0\r\n\r\n", b"ff\r\n{", b""]
    ),
]


@pytest.mark.parametrize(("environ", "status", "message"), REFUSED_FRAMINGS)
def test_bodies_that_cannot_be_read_reliably_are_json_errors(
    client: t.Any, schema_checker: t.Any, environ: dict[str, t.Any], status: int, message: str
) -> None:
    """Ambiguous framing, bad Content-Length, broken streams: a JSON 4xx, never a 500 or a traceback."""
    response = client.http.post(
        "/mcp",
        input_stream=io.BytesIO(PING_BYTES),
        content_type="application/json",
        headers=client.headers(),
        environ_overrides=environ,
    )
    error = assert_error(schema_checker, response, status, -32600)
    assert message in error["message"]
    assert "Traceback" not in response.get_data(as_text=True)


def raw_exchange(url: str, request: bytes) -> tuple[int, bytes]:
    """Send *request* as is on a fresh connection, then end it; the status and body of the answer."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request)
        sock.shutdown(socket.SHUT_WR)  # a truncated body ends here rather than leaving the server waiting
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


@pytest.mark.parametrize(
    ("framing", "chunks", "message"),
    [
        (b"Transfer-Encoding: chunked\r\n", b"zz\r\n" + PING_BYTES + b"\r\n0\r\n\r\n", b"could not be read"),
        (b"Transfer-Encoding: chunked\r\n", b"10\r\n{\r\n", b"could not be read"),
        (
            b"Transfer-Encoding: chunked\r\nContent-Length: %d\r\n" % len(PING_BYTES),
            b"%x\r\n%s\r\n0\r\n\r\n" % (len(PING_BYTES), PING_BYTES),
            b"both Content-Length and Transfer-Encoding",
        ),
    ],
    ids=["bad-chunk-size", "truncated-chunk", "both-framings"],
)
def test_malformed_chunked_bodies_on_a_real_server(
    app: Flask, live_server: t.Any, framing: bytes, chunks: bytes, message: bytes
) -> None:
    """werkzeug's own server decodes the chunks; its errors are a JSON 400 too."""
    with live_server(app) as server:
        port = server.url.rsplit(":", 1)[1]
        request = (
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nContent-Type: application/json\r\n"
            b"Accept: application/json, text/event-stream\r\nConnection: close\r\n%s\r\n%s"
        ) % (port.encode(), framing, chunks)
        status, body = raw_exchange(server.url, request)
    assert status == 400, body
    assert message in body
    assert json.loads(body)["error"]["code"] == -32600


# -- HTTP methods ---------------------------------------------------------------


@pytest.mark.parametrize("method", ["PUT", "PATCH"])
def test_other_methods_are_json_405(client: t.Any, schema_checker: t.Any, method: str) -> None:
    """PUT and PATCH are 405 with Allow and a JSON body, never HTML."""
    response = client.http.open("/mcp", method=method, headers=client.headers())
    assert b"<html" not in response.get_data().lower()
    assert_error(schema_checker, response, 405, -32600)
    allowed = {m.strip() for m in response.headers["Allow"].split(",")}
    assert {"POST", "DELETE"} <= allowed
    assert method not in allowed


@pytest.mark.parametrize(("stateless", "allow"), [(False, "GET, POST, DELETE, OPTIONS"), (True, "POST, OPTIONS")])
def test_options_names_what_is_allowed(
    mcp: t.Any, make_app: t.Callable[..., Flask], stateless: bool, allow: str
) -> None:
    """OPTIONS lists only the methods that work, and passes the Origin guard first."""
    http = make_app(mcp, MCP_STATELESS=stateless).test_client()
    response = http.open("/mcp", method="OPTIONS")
    assert (response.status_code, response.headers["Allow"]) == (204, allow)
    foreign = http.open("/mcp", method="OPTIONS", headers={"Origin": "http://evil.example"})
    assert foreign.status_code == 403 and foreign.mimetype == "application/json"


@pytest.mark.parametrize("method", ["TRACE", "PROPFIND"])
def test_unrouted_methods_are_json_405(client: t.Any, schema_checker: t.Any, method: str) -> None:
    """The module promises JSON for every error, also for methods it does not route."""
    response = client.http.open("/mcp", method=method, headers=client.headers())
    assert_error(schema_checker, response, 405, -32600)


# -- no NaN on the wire -----------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/call", {"name": "not_a_number", "arguments": {}}),
        ("tools/call", {"name": "infinite_dict", "arguments": {}}),
        ("tools/call", {"name": "nan_structured", "arguments": {}}),
        ("resources/read", {"uri": "res://nan"}),
    ],
    ids=["tool-nan", "tool-inf-dict", "tool-result-nan", "resource-nan"],
)
def test_responses_never_contain_nan(client: t.Any, schema_checker: t.Any, method: str, params: dict) -> None:
    """A handler's NaN becomes an isError result or an error for that request, in strict JSON."""
    response = client.post({"jsonrpc": "2.0", "id": 77, "method": method, "params": params})
    assert response.status_code == 200
    body = json_body(response)
    schema_checker.check_envelope(method, body)
    assert body["id"] == 77
    if "result" in body:
        assert body["result"]["isError"] is True
    else:
        assert body["error"]["code"] == -32603


@pytest.mark.parametrize(
    ("body", "msg_id"),
    [
        (
            rb'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a\ud800b"}}}',
            1,
        ),
        (rb'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"\udfff"}}', 2),
        (rb'{"jsonrpc":"2.0","id":3,"method":"no/such\ud800"}', 3),
        (rb'{"jsonrpc":"2.0","id":"\ud800","method":"ping"}', "\ud800"),
    ],
    ids=["tool-argument", "tool-name", "method-name", "request-id"],
)
def test_lone_surrogate_in_request_is_answered(
    client: t.Any, schema_checker: t.Any, body: bytes, msg_id: t.Any
) -> None:
    """Valid JSON with an unpaired surrogate escape gets a normal answer or a parse error, never a 500."""
    response = post_raw(client, body)
    assert response.status_code in (200, 400), response.get_data(as_text=True)
    parsed = json_body(response)
    schema_checker.check_envelope(None, parsed)
    if response.status_code == 400:
        assert parsed["error"]["code"] == -32700
    else:
        assert parsed["id"] == msg_id


# -- unexpected exceptions in the transport ---------------------------------------


@pytest.mark.parametrize(
    ("config", "exposed"),
    [
        ({}, False),
        ({"MCP_MASK_ERRORS": True}, False),
        ({"MCP_MASK_ERRORS": False}, True),
        ({"DEBUG": True}, True),
        ({"DEBUG": True, "MCP_MASK_ERRORS": True}, False),
    ],
    ids=["default", "masked", "unmasked", "debug", "debug-masked"],
)
def test_transport_exception_is_json_500(
    mcp: MCP,
    make_app: t.Callable[..., Flask],
    make_client: t.Callable[..., t.Any],
    schema_checker: t.Any,
    monkeypatch: pytest.MonkeyPatch,
    config: dict[str, t.Any],
    exposed: bool,
) -> None:
    """A crash outside any handler is a JSON -32603 500; detail only when not masked."""
    app = make_app(mcp, **config)
    client = make_client(app)
    client.initialize()

    def broken_open(session_id: str, owner: str | None = None) -> t.NoReturn:
        raise ConnectionError(SECRET)

    monkeypatch.setattr(app.extensions["mcp"].sessions, "open", broken_open)
    response = client.post(PING)
    assert response.status_code == 500
    text = response.get_data(as_text=True)
    assert "<html" not in text.lower()
    body = json_body(response)
    schema_checker.check_envelope(None, body)
    assert body["error"]["code"] == -32603
    assert (SECRET in text) is exposed


# -- utilities ------------------------------------------------------------------


def test_ping_result_is_empty(client: t.Any) -> None:
    """ping answers exactly {}."""
    assert client.request("ping") == {}


def test_set_level_persists_in_session(client: t.Any, app: Flask) -> None:
    """logging/setLevel answers {} and the level is stored in the session."""
    store = app.extensions["mcp"].sessions
    assert store.load(client.session_id).log_level is None
    for level in ["warning", "debug", "emergency"]:
        assert client.request("logging/setLevel", {"level": level}) == {}
        assert store.load(client.session_id).log_level == level
    assert client.request("ping") == {}


@pytest.mark.parametrize("params", [{"level": "verbose"}, {"level": 3}, {}])
def test_set_level_rejects_bad_level(client: t.Any, app: Flask, params: dict[str, t.Any]) -> None:
    """An unknown or missing level is -32602 and leaves the session untouched."""
    assert client.error("logging/setLevel", params)["code"] == -32602
    assert app.extensions["mcp"].sessions.load(client.session_id).log_level is None


# -- registration and configuration -------------------------------------------------


@pytest.mark.parametrize("how", ["init_app", "register_blueprint"])
def test_registration_styles_serve_endpoint(mcp: MCP, make_client: t.Callable[..., t.Any], how: str) -> None:
    """Both init_app and registering the blueprint serve /mcp."""
    app = Flask("registration")
    app.config["TESTING"] = True
    if how == "init_app":
        mcp.init_app(app)
    else:
        app.register_blueprint(mcp.blueprint)
    client = make_client(app)
    client.initialize()
    assert client.session_id
    assert client.request("ping") == {}


def test_url_prefix_moves_endpoint(
    mcp: MCP, make_app: t.Callable[..., Flask], make_client: t.Callable[..., t.Any]
) -> None:
    """MCP_URL_PREFIX serves the endpoint elsewhere and nothing at /mcp."""
    app = make_app(mcp, MCP_URL_PREFIX="/custom")
    client = make_client(app, path="/custom")
    client.initialize()
    assert client.request("ping") == {}
    assert app.test_client().post("/mcp", json=init_message()).status_code == 404


def test_two_apps_share_one_extension(
    mcp: MCP, make_app: t.Callable[..., Flask], make_client: t.Callable[..., t.Any]
) -> None:
    """One MCP object serves two apps, each with its own sessions."""
    first, second = make_client(make_app(mcp)), make_client(make_app(mcp))
    first.initialize()
    second.session_id = first.session_id
    assert second.post(PING).status_code == 404


@pytest.mark.filterwarnings("ignore:Flask-Caching")
def test_null_cache_is_rejected(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    """Sessions cannot live in a NullCache: setup fails with a clear message."""
    with pytest.raises(RuntimeError, match="NullCache"):
        make_app(mcp, MCP_CACHE_TYPE="NullCache")


@pytest.mark.filterwarnings("ignore:Flask-Caching")
def test_null_cache_is_fine_when_stateless(
    mcp: MCP, make_app: t.Callable[..., Flask], make_client: t.Callable[..., t.Any]
) -> None:
    """A stateless server needs no session cache at all."""
    client = make_client(make_app(mcp, MCP_CACHE_TYPE="NullCache", MCP_STATELESS=True))
    assert client.request("ping") == {}


def test_user_supplied_cache_holds_sessions(make_client: t.Callable[..., t.Any]) -> None:
    """MCP(cache=...) keeps sessions in that cache: clearing it ends them."""
    app = Flask("user_cache")
    app.config["TESTING"] = True
    cache = Cache(app, config={"CACHE_TYPE": "SimpleCache"})
    MCP(name="own-cache", cache=cache).init_app(app)
    assert app.extensions["mcp"].sessions.cache.cache is app.extensions["cache"][cache]  # the same backend
    client = make_client(app)
    client.initialize()
    assert client.request("ping") == {}
    cache.clear()
    assert client.post(PING).status_code == 404


def test_user_cache_must_be_set_up_first() -> None:
    """A Cache not bound to the app is refused at setup."""
    app = Flask("unbound_cache")
    with pytest.raises(RuntimeError, match="init_app"):
        MCP(cache=Cache(config={"CACHE_TYPE": "SimpleCache"})).init_app(app)


BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


def test_a_browser_gets_a_page_saying_what_the_endpoint_is(make_app: t.Callable[..., Flask]) -> None:
    server = MCP(name="shop <b>", version="1.2.3")

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    response = make_app(server).test_client().get("/mcp", headers={"Accept": BROWSER_ACCEPT})
    assert response.status_code == 200 and response.mimetype == "text/html"
    text = response.get_data(as_text=True)
    assert "shop &lt;b&gt;" in text and "shop <b>" not in text  # escaped
    assert "http://localhost/mcp" in text and "/mcp/rest/docs" in text
    assert response.headers["Content-Security-Policy"].startswith("default-src 'none'")


def test_mcp_clients_keep_the_protocols_answers(make_app: t.Callable[..., Flask]) -> None:
    http = make_app(MCP(name="shop")).test_client()
    stream = http.get("/mcp", headers={"Accept": "text/event-stream"})
    assert stream.status_code == 405 and stream.mimetype == "application/json"
    both = http.get("/mcp", headers={"Accept": "text/html, text/event-stream"})
    assert both.status_code == 405


def test_the_page_of_a_protected_server_says_how_to_authenticate(make_app: t.Callable[..., Flask]) -> None:
    server = MCP(name="guarded")

    @server.tool(permissions=[])
    def hello() -> str:
        return "hello"

    response = (
        make_app(server, MCP_AUTH_TOKENS={"t": "ada"}).test_client().get("/mcp", headers={"Accept": BROWSER_ACCEPT})
    )
    assert response.status_code == 200 and "Authorization: Bearer" in response.get_data(as_text=True)


def test_a_session_of_another_process_is_named_as_such(make_app: t.Callable[..., Flask], make_client: t.Any) -> None:
    """Two apps, each with its own SimpleCache, stand for two worker processes."""
    server = MCP(name="workers")
    first, second = make_app(server), make_app(server)
    client = make_client(first)
    client.initialize()
    elsewhere = make_client(second)
    elsewhere.session_id, elsewhere.protocol_version = client.session_id, client.protocol_version
    response = elsewhere.post({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert response.status_code == 404
    error = response.get_json()["error"]
    assert error["code"] == -32001 and "another server process" in error["message"] and "RedisCache" in error["message"]
    assert error["data"]["reason"] == "another_process"
    # An id nobody minted is just unknown.
    elsewhere.session_id = "nothing"
    assert (
        elsewhere.post({"jsonrpc": "2.0", "id": 2, "method": "ping"}).get_json()["error"]["message"]
        == "Session not found"
    )


@pytest.mark.parametrize("depth", [100, 300, 900, 1000, 5000])
@pytest.mark.parametrize("era", ["handshake", "modern"])
def test_arguments_nested_past_the_limit_are_refused_at_any_depth(
    mcp: MCP, make_app: t.Callable[..., Flask], make_client: t.Callable[..., t.Any], era: str, depth: int
) -> None:
    """Deeper than orjson writes, or than the decoder recurses: a 4xx JSON-RPC error, never a 500."""
    app = make_app(mcp, MCP_STATELESS=True)
    client = make_client(app, era=era)
    nested = '{"x":' * depth + "1" + "}" * depth
    meta = (
        ',"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
        '"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},'
        '"io.modelcontextprotocol/clientCapabilities":{}}'
        if era == "modern"
        else ""
    )
    body = (
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":'
        + nested
        + "}"
        + meta
        + "}}"
    )
    answer = post_raw(client, body, **({"Mcp-Method": "tools/call", "Mcp-Name": "add"} if era == "modern" else {}))
    assert 400 <= answer.status_code < 500, answer.get_data(as_text=True)[:300]
    assert json_body(answer)["error"]["code"] in (-32700, -32600, -32602)
    rest = app.test_client().post("/mcp/rest/tools/add", data='{"a":' + nested + "}", content_type="application/json")
    assert 400 <= rest.status_code < 500, rest.get_data(as_text=True)[:300]
