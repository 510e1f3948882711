"""The REST adapter: every tool as ``POST /mcp/rest/tools/<name>``, resources by GET."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import json
import logging
import typing as t

import pytest
from flask import Flask, abort
from marshmallow import Schema, fields
from werkzeug.serving import DechunkedInput

from flask_mcp import MCP, Context, NotFoundError, ToolError

from .test_body import FailingStream

SECRET = "secret-detail-4711"


def json_body(response: t.Any) -> t.Any:
    """The strictly parsed JSON body; fails on HTML or any other media type."""
    assert response.mimetype == "application/json", response.get_data(as_text=True)

    def reject(name: str) -> t.NoReturn:
        raise ValueError(f"non-JSON constant {name}")

    return json.loads(response.get_data(), parse_constant=reject)


class AddArgs(Schema):
    a = fields.Integer(required=True, strict=True)
    b = fields.Integer(required=True, strict=True)


class Money(Schema):
    amount = fields.Decimal(as_string=True)
    currency = fields.String()
    internal = fields.String(load_only=True)


@dataclasses.dataclass
class Point:
    x: int
    y: int


@pytest.fixture
def app(mcp: MCP, make_app: t.Callable[..., Flask]) -> Flask:
    @mcp.tool(input_schema=AddArgs)
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @mcp.tool()
    async def slow_double(n: int) -> int:
        await asyncio.sleep(0)
        return n * 2

    @mcp.tool()
    def price() -> Money:
        return {"amount": "1.50", "currency": "EUR", "internal": "hidden"}  # type: ignore[return-value]

    @mcp.tool()
    def origin() -> Point:
        return Point(1, 2)

    @mcp.tool()
    def refuse() -> str:
        raise ToolError("insufficient funds")

    @mcp.tool()
    def crash() -> str:
        raise RuntimeError(SECRET)

    @mcp.tool()
    def forbidden() -> str:
        abort(403, "not yours")

    @mcp.tool()
    def not_a_number() -> float:
        return float("nan")

    @mcp.tool()
    def nothing() -> None:
        return None

    @mcp.resource("notes://welcome", mime_type="text/plain")
    def welcome() -> str:
        return "hello"

    @mcp.resource("notes://{note_id}")
    def note(note_id: int) -> dict[str, int]:
        if note_id > 10:
            abort(404)
        return {"id": note_id}

    @mcp.resource("broken://thing")
    def broken() -> str:
        raise RuntimeError(SECRET)

    return make_app(mcp, MCP_STATELESS=True)


def test_success_returns_the_value(app: Flask) -> None:
    response = app.test_client().post("/mcp/rest/tools/add", json={"a": 2, "b": 3})
    assert response.status_code == 200
    assert json_body(response) == {"result": 5}


def test_async_tool(app: Flask) -> None:
    response = app.test_client().post("/mcp/rest/tools/slow_double", json={"n": 21})
    assert json_body(response) == {"result": 42}


def test_output_schema_dumps_the_value(app: Flask) -> None:
    response = app.test_client().post("/mcp/rest/tools/price", json={})
    assert json_body(response) == {"result": {"amount": "1.50", "currency": "EUR"}}


def test_dataclass_result_and_none(app: Flask) -> None:
    client = app.test_client()
    assert json_body(client.post("/mcp/rest/tools/origin", json={})) == {"result": {"x": 1, "y": 2}}
    assert json_body(client.post("/mcp/rest/tools/nothing", json={})) == {"result": None}


def test_empty_body_means_no_arguments(app: Flask) -> None:
    response = app.test_client().post("/mcp/rest/tools/add", data=b"", content_type="application/json")
    assert response.status_code == 400
    assert json_body(response)["error"].startswith("Invalid arguments: ")


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        (None, b""),
        ("text/plain", b'{"a": 1, "b": 2}'),
        ("application/x-www-form-urlencoded", b"a=1&b=2"),
        ("multipart/form-data; boundary=x", b'--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--\r\n'),
        ("application/jsonp", b'{"a": 1, "b": 2}'),
    ],
)
def test_only_json_bodies_run_a_tool(content_type: str | None, body: bytes) -> None:
    """What a web page may send across origins without a preflight (a CORS "simple request") gets 415."""
    server, calls = MCP(name="csrf"), []

    @server.tool
    def add(a: int = 0, b: int = 0) -> int:
        calls.append((a, b))
        return a + b

    app = Flask(__name__)
    server.init_app(app)
    headers = {"Content-Type": content_type} if content_type else {}
    response = app.test_client().post("/mcp/rest/tools/add", data=body, headers=headers)
    assert response.status_code == 415 and response.mimetype == "application/json"
    assert "application/json" in json_body(response)["error"]
    assert calls == []


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            b"{not json",
            "Invalid JSON body: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
        ),
        (b"[1, 2]", "Invalid JSON body"),
        (b'"text"', "Invalid JSON body"),
        (b"NaN", "Invalid JSON body: NaN is not valid JSON"),
    ],
)
def test_invalid_json_body(app: Flask, body: bytes, message: str) -> None:
    response = app.test_client().post("/mcp/rest/tools/add", data=body, content_type="application/json")
    assert response.status_code == 400
    assert json_body(response) == {"error": message}


def test_validation_error_names_the_fields(app: Flask) -> None:
    response = app.test_client().post("/mcp/rest/tools/add", json={"a": "x"})
    assert response.status_code == 400
    message = json_body(response)["error"]
    assert message == "Invalid arguments: a: Not a valid integer.; b: Missing data for required field."


def test_unknown_tool(app: Flask) -> None:
    response = app.test_client().post("/mcp/rest/tools/missing", json={})
    assert response.status_code == 404
    assert json_body(response) == {"error": "Function not found: missing"}


def test_tool_error_message_is_shown(app: Flask) -> None:
    response = app.test_client().post("/mcp/rest/tools/refuse", json={})
    assert response.status_code == 500
    assert json_body(response) == {"error": "Function error: insufficient funds"}


@pytest.mark.parametrize(
    ("raise_it", "status", "body"),
    [
        (lambda: NotFoundError("no order 7"), 404, {"error": "no order 7"}),
        (lambda: abort(404, "gone"), 404, {"error": "404 Not Found: gone"}),
    ],
    ids=["NotFoundError", "abort-404"],
)
def test_not_found_in_a_tool_is_a_404(
    mcp: MCP, make_app: t.Callable[..., Flask], raise_it: t.Callable[[], t.Any], status: int, body: dict[str, str]
) -> None:
    @mcp.tool
    def lookup() -> None:
        exc = raise_it()
        if exc is not None:
            raise exc

    response = make_app(mcp).test_client().post("/mcp/rest/tools/lookup", json={})
    assert response.status_code == status and json_body(response) == body


def test_abort_in_a_tool(app: Flask) -> None:
    response = app.test_client().post("/mcp/rest/tools/forbidden", json={})
    assert response.status_code == 500
    assert json_body(response) == {"error": "Function error: 403 Forbidden: not yours"}


def test_unexpected_exception_is_masked(app: Flask, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="flask_mcp"):
        response = app.test_client().post("/mcp/rest/tools/crash", json={})
    assert response.status_code == 500
    body = json_body(response)
    assert body["error"].startswith("Function error: ")
    assert SECRET not in body["error"]
    assert SECRET in caplog.text  # logged for the operator


def test_unexpected_exception_exposed_when_not_masking(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    @mcp.tool()
    def crash() -> str:
        raise RuntimeError(SECRET)

    app = make_app(mcp, MCP_STATELESS=True, MCP_MASK_ERRORS=False)
    response = app.test_client().post("/mcp/rest/tools/crash", json={})
    assert json_body(response) == {"error": f"Function error: RuntimeError: {SECRET}"}


def test_value_json_cannot_hold(app: Flask) -> None:
    response = app.test_client().post("/mcp/rest/tools/not_a_number", json={})
    assert response.status_code == 500
    assert json_body(response)["error"].startswith("Function error: the tool returned a value that cannot be sent")


@pytest.mark.parametrize(
    ("environ", "status", "message"),
    [
        ({"HTTP_TRANSFER_ENCODING": "chunked", "wsgi.input_terminated": True}, 400, "both Content-Length"),
        ({"CONTENT_LENGTH": "٣"}, 400, "Content-Length must be a decimal number"),
        ({"CONTENT_LENGTH": "²"}, 400, "Content-Length must be a decimal number"),
        ({"CONTENT_LENGTH": "1000"}, 400, "the body ended after 16 of its 1000 bytes"),
        ({"wsgi.input": FailingStream(OSError("reset"))}, 400, "the request body could not be read"),
        (
            {
                "HTTP_TRANSFER_ENCODING": "chunked",
                "wsgi.input_terminated": True,
                "CONTENT_LENGTH": "",
                "wsgi.input": DechunkedInput(io.BytesIO(b"zz\r\n{}")),
            },
            400,
            "the request body could not be read",
        ),
    ],
    ids=["both-framings", "arabic-indic-length", "superscript-length", "short-body", "broken-stream", "bad-chunk"],
)
def test_bodies_are_read_by_the_same_rules_as_the_mcp_endpoint(
    app: Flask, environ: dict[str, t.Any], status: int, message: str
) -> None:
    response = app.test_client().post(
        "/mcp/rest/tools/add",
        input_stream=io.BytesIO(b'{"a": 1, "b": 2}'),
        content_type="application/json",
        environ_overrides=environ,
    )
    assert response.status_code == status
    assert message in json_body(response)["error"]


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        (b'{"a": 1, "a": 2, "b": 3}', "duplicate key 'a'"),
        (b'{"a": 1e999, "b": 1}', "must be finite"),
        ('{"a": 1, "b": 2}'.encode("utf-16"), "not UTF-8"),
        (b'{"a": 1, "b": ' + b"1" * 5000 + b"}", "4300 digits"),
        (b'{"a": 1, "b": 2, "c": ' + b"[" * 65 + b"]" * 65 + b"}", "nesting is deeper than the limit of 64"),
    ],
)
def test_bodies_are_decoded_as_strictly_as_mcp_messages(app: Flask, body: bytes, detail: str) -> None:
    response = app.test_client().post("/mcp/rest/tools/add", data=body, content_type="application/json")
    assert response.status_code == 400
    error = json_body(response)["error"]
    assert error.startswith("Invalid JSON body: ") and detail in error


def test_payload_too_large(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    mcp.tool(name="echo")(lambda text: text)
    app = make_app(mcp, MCP_STATELESS=True, MCP_MAX_CONTENT_LENGTH=32)
    response = app.test_client().post("/mcp/rest/tools/echo", json={"text": "x" * 64})
    assert response.status_code == 413
    assert "limit is 32 bytes" in json_body(response)["error"]


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE", "PATCH", "TRACE"])
def test_other_methods_are_json_405(app: Flask, method: str) -> None:
    response = app.test_client().open("/mcp/rest/tools/add", method=method)
    assert response.status_code == 405
    assert response.headers["Allow"] == "POST, OPTIONS"
    assert json_body(response) == {"error": f"Method Not Allowed: {method} (allowed: POST)"}


def test_options(app: Flask) -> None:
    response = app.test_client().options("/mcp/rest/tools/add")
    assert response.status_code == 204
    assert response.headers["Allow"] == "POST, OPTIONS"


@pytest.mark.parametrize("path", ["/mcp/rest", "/mcp/rest/", "/mcp/rest/nope", "/mcp/rest/tools/a/b"])
def test_unknown_paths_are_json_404(app: Flask, path: str) -> None:
    response = app.test_client().get(path)
    assert response.status_code == 404
    assert "error" in json_body(response)


def test_read_static_resource(app: Flask) -> None:
    response = app.test_client().get("/mcp/rest/resources", query_string={"uri": "notes://welcome"})
    assert response.status_code == 200
    assert json_body(response) == {
        "result": {"contents": [{"uri": "notes://welcome", "text": "hello", "mimeType": "text/plain"}]}
    }


def test_read_template_resource(app: Flask) -> None:
    response = app.test_client().get("/mcp/rest/resources", query_string={"uri": "notes://7"})
    assert json_body(response) == {
        "result": {"contents": [{"uri": "notes://7", "text": '{"id":7}', "mimeType": "application/json"}]}
    }


@pytest.mark.parametrize("uri", ["nothing://here", "notes://99"])
def test_resource_not_found(app: Flask, uri: str) -> None:
    response = app.test_client().get("/mcp/rest/resources", query_string={"uri": uri})
    assert response.status_code == 404
    assert json_body(response) == {"error": f"Resource not found: {uri}"}


def test_resource_bad_variables_and_missing_uri(app: Flask) -> None:
    client = app.test_client()
    response = client.get("/mcp/rest/resources", query_string={"uri": "notes://abc"})
    assert response.status_code == 400
    assert "note_id" in json_body(response)["error"]
    response = client.get("/mcp/rest/resources")
    assert response.status_code == 400
    assert json_body(response) == {"error": "Missing query parameter: uri"}


def test_resource_failure_is_masked(app: Flask) -> None:
    response = app.test_client().get("/mcp/rest/resources", query_string={"uri": "broken://thing"})
    assert response.status_code == 500
    assert json_body(response) == {"error": "Resource error: Internal error"}


def test_resource_post_is_json_405(app: Flask) -> None:
    response = app.test_client().post("/mcp/rest/resources")
    assert response.status_code == 405
    assert json_body(response)["error"].startswith("Method Not Allowed: POST")


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ({"Origin": "https://evil.example"}, "origin 'https://evil.example'"),
        ({"Host": "evil.example"}, "host 'evil.example'"),
    ],
)
@pytest.mark.parametrize("path", ["/mcp/rest/tools/add", "/mcp/rest/resources", "/mcp/rest/openapi.json"])
def test_guard_applies(
    mcp: MCP, make_app: t.Callable[..., Flask], headers: dict[str, str], reason: str, path: str
) -> None:
    mcp.tool(name="one")(lambda: 1)
    app = make_app(mcp, MCP_STATELESS=True, MCP_ALLOWED_HOSTS=["localhost"])
    response = app.test_client().post(path, headers=headers, json={})
    assert response.status_code == 403
    assert json_body(response) == {"error": f"Forbidden: {reason} is not allowed"}


def test_guard_allows_configured_origin(app: Flask) -> None:
    headers = {"Origin": "http://localhost:3000"}
    response = app.test_client().post("/mcp/rest/tools/add", json={"a": 1, "b": 1}, headers=headers)
    assert json_body(response) == {"result": 2}


def test_custom_prefix_and_register_blueprint(mcp: MCP) -> None:
    mcp.tool(name="ok")(lambda: "ok")
    app = Flask("bp_app")
    app.config.update(MCP_STATELESS=True, MCP_REST_PREFIX="/api/v1/")
    app.register_blueprint(mcp.blueprint, url_prefix="/agents")
    client = app.test_client()
    assert json_body(client.post("/api/v1/tools/ok", json={})) == {"result": "ok"}
    assert client.post("/mcp/rest/tools/ok", json={}).status_code == 404
    assert "/agents" in json_body(client.get("/api/v1/openapi.json"))["paths"]


def test_the_rest_routes_follow_the_endpoint_by_default(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    mcp.tool(name="ok", permissions=[])(lambda: "ok")
    moved = make_app(mcp, MCP_STATELESS=True, MCP_URL_PREFIX="/api/mcp").test_client()
    assert json_body(moved.post("/api/mcp/rest/tools/ok", json={})) == {"result": "ok"}
    assert moved.get("/mcp/rest/openapi.json").status_code == 404
    assert "/api/mcp/rest/docs" in moved.get("/api/mcp", headers={"Accept": "text/html"}).get_data(as_text=True)
    registered = Flask("bp_app")
    registered.config.update(MCP_STATELESS=True)
    registered.register_blueprint(MCP(name="bp").blueprint, url_prefix="/agents")
    assert registered.test_client().get("/agents/rest/openapi.json").status_code == 200


def test_rest_disabled(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    mcp.tool(name="ok")(lambda: "ok")
    app = make_app(mcp, MCP_STATELESS=True, MCP_REST_ENABLED=False)
    client = app.test_client()
    assert client.post("/mcp/rest/tools/ok", json={}).status_code == 404
    assert client.get("/mcp/rest/openapi.json").status_code == 404


def test_tool_registered_after_setup_is_served(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    app = make_app(mcp, MCP_STATELESS=True)
    client = app.test_client()
    assert client.post("/mcp/rest/tools/late", json={}).status_code == 404
    mcp.tool(name="late")(lambda: "here")
    assert json_body(client.post("/mcp/rest/tools/late", json={})) == {"result": "here"}


def test_context_tool_runs_without_a_channel(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    @mcp.tool()
    def chatty(ctx: Context) -> str:
        ctx.info("dropped: REST has no way to send log messages")
        return "done"

    app = make_app(mcp, MCP_STATELESS=True)
    assert json_body(app.test_client().post("/mcp/rest/tools/chatty", json={})) == {"result": "done"}


def test_root_prefix_leaves_the_apps_own_404(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    mcp.tool(name="ok")(lambda: "ok")
    app = make_app(mcp, MCP_STATELESS=True, MCP_REST_PREFIX="/")
    client = app.test_client()
    assert json_body(client.post("/tools/ok", json={})) == {"result": "ok"}
    assert "/tools/ok" in json_body(client.get("/openapi.json"))["paths"]
    assert client.get("/elsewhere").mimetype == "text/html"  # Flask's own 404, untouched
