"""``flask mcp cgi``: the app run as a CGI program, one subprocess per request."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import typing as t
from pathlib import Path

import pytest
from flask import Flask

from flask_mcp import MCP
from flask_mcp.policies.permissions import ScopeRequired
from flask_mcp.transport.cgi import serve_cgi

ROOT = Path(__file__).resolve().parents[2]


class CGIResult(t.NamedTuple):
    status: int
    headers: dict[str, str]
    body: bytes
    stderr: str

    def json(self) -> t.Any:
        return json.loads(self.body)


def parse(output: bytes, stderr: str = "") -> CGIResult:
    """Split a CGI response into its status, headers and body."""
    head, separator, body = output.partition(b"\r\n\r\n")
    assert separator, output
    headers = dict(line.split(": ", 1) for line in head.decode("latin-1").split("\r\n"))
    status = int(headers.pop("Status").split()[0])
    assert int(headers["Content-Length"]) == len(body) or not body
    return CGIResult(status, headers, body, stderr)


def run_cgi(
    method: str, path: str, body: bytes = b"", extra: dict[str, str] | None = None, app: str = "tests.cgi_app"
) -> CGIResult:
    """Run ``flask mcp cgi`` the way a web server does: CGI variables in the environment, the body on stdin."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("FLASK_", "HTTP_")) and key not in ("PATH_INFO", "CONTENT_LENGTH")
    }
    env.update(
        {
            "PYTHONPATH": str(ROOT),
            "GATEWAY_INTERFACE": "CGI/1.1",
            "REQUEST_METHOD": method,
            "SCRIPT_NAME": "/cgi-bin/mcp",
            "PATH_INFO": path,
            "QUERY_STRING": "",
            "SERVER_NAME": "example.org",
            "SERVER_PORT": "80",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "REMOTE_ADDR": "192.0.2.1",
            "HTTP_HOST": "example.org",
        }
    )
    env.update({"CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(body))} if method == "POST" else {})
    env.update(extra or {})
    done = subprocess.run(
        [sys.executable, "-m", "flask", "--app", app, "mcp", "cgi"],
        input=body,
        capture_output=True,
        env=env,
        cwd=ROOT,
        timeout=60,
        check=True,
    )
    return parse(done.stdout, done.stderr.decode())


def test_a_tool_call_answers_its_result() -> None:
    result = run_cgi("POST", "/tools/add", b'{"a": 1, "b": 2}')
    assert (result.status, result.json()) == (200, {"result": 3})
    assert result.headers["Content-Type"] == "application/json"


def test_no_body_counts_as_no_arguments() -> None:
    result = run_cgi("POST", "/tools/add")
    assert result.status == 400
    missing = "Missing data for required field."
    assert result.json() == {"error": f"Invalid arguments: a: {missing}; b: {missing}"}


def test_prints_go_to_stderr_and_the_request_is_the_cgi_client() -> None:
    result = run_cgi("POST", "/tools/chatty", b'{"word": "hi"}', {"HTTP_USER_AGENT": "curl/8"})
    assert (result.status, result.json()) == (200, {"result": "hi from curl/8"})
    assert "chatty says hi" in result.stderr


def test_unknown_tool_is_404() -> None:
    result = run_cgi("POST", "/tools/nope", b"{}")
    assert (result.status, result.json()) == (404, {"error": "Function not found: nope"})


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        (b'{"a": 1', "Expecting ',' delimiter: line 1 column 8 (char 7)"),
        (b"[1, 2]", "expected an object of arguments, got list"),
        (b'{"a": NaN}', "NaN is not valid JSON"),
    ],
)
def test_a_body_that_is_not_a_json_object_is_400(body: bytes, detail: str) -> None:
    result = run_cgi("POST", "/tools/add", body)
    assert (result.status, result.json()) == (400, {"error": f"Invalid JSON: {detail}"})


def test_invalid_arguments_name_the_fields() -> None:
    result = run_cgi("POST", "/tools/add", b'{"a": "x"}')
    assert result.status == 400
    assert result.json() == {"error": "Invalid arguments: a: Not a valid integer.; b: Missing data for required field."}


def test_a_tool_error_is_500_with_its_message() -> None:
    result = run_cgi("POST", "/tools/refuse", b'{"reason": "no"}')
    assert (result.status, result.json()) == (500, {"error": "Error: refused: no"})


def test_a_failing_tool_is_masked_and_logged() -> None:
    result = run_cgi("POST", "/tools/crash", b"{}")
    assert result.status == 500
    message = result.json()["error"]
    assert message.startswith("Error: ") and "secret" not in message
    assert "secret database password" in result.stderr  # logged for the operator


def test_a_failing_tool_shows_its_detail_when_errors_are_not_masked() -> None:
    result = run_cgi("POST", "/tools/crash", b"{}", {"FLASK_MCP_MASK_ERRORS": "false"})
    assert (result.status, result.json()) == (500, {"error": "Error: RuntimeError: secret database password"})


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
def test_other_methods_on_a_tool_are_405(method: str) -> None:
    result = run_cgi(method, "/tools/add")
    assert (result.status, result.headers["Allow"]) == (405, "POST")
    assert result.json() == {"error": f"Method Not Allowed: {method} (allowed: POST)"}


@pytest.mark.parametrize("path", ["/", "", "/tools/", "/tools/add/more", "/resources", "/mcp"])
def test_other_paths_are_404(path: str) -> None:
    result = run_cgi("POST", path, b"{}")
    assert result.status == 404
    assert result.json() == {"error": f"Not Found: {path or '/'}"}


def test_openapi_json_describes_the_cgi_operations() -> None:
    result = run_cgi("GET", "/openapi.json")
    assert result.status == 200
    document = result.json()
    assert document["openapi"] == "3.1.0"
    assert document["servers"] == [{"url": "/cgi-bin/mcp"}]
    assert sorted(document["paths"]) == [
        "/tools/add",
        "/tools/chatty",
        "/tools/crash",
        "/tools/refuse",
        "/tools/whoami",
    ]
    assert document["paths"]["/tools/add"]["post"]["operationId"] == "add"


def test_openapi_json_head_has_headers_only_and_post_is_405() -> None:
    head = run_cgi("HEAD", "/openapi.json")
    assert (head.status, head.body) == (200, b"")
    assert int(head.headers["Content-Length"]) > 0
    post = run_cgi("POST", "/openapi.json", b"{}")
    assert (post.status, post.headers["Allow"]) == (405, "GET, HEAD")


def test_a_body_over_the_limit_is_413() -> None:
    result = run_cgi("POST", "/tools/add", b'{"a": 1, "b": 2}', {"FLASK_MCP_MAX_CONTENT_LENGTH": "8"})
    assert (result.status, result.json()) == (413, {"error": "Payload Too Large: the limit is 8 bytes"})


def test_a_rebound_host_is_refused() -> None:
    result = run_cgi("POST", "/tools/add", b"{}", {"SERVER_NAME": "127.0.0.1", "HTTP_HOST": "evil.example"})
    assert (result.status, result.json()) == (403, {"error": "Forbidden: host 'evil.example' is not allowed"})


def test_serve_cgi_in_process(make_app: t.Callable[..., Flask], monkeypatch: pytest.MonkeyPatch) -> None:
    mcp = MCP(name="inline")

    @mcp.tool
    def double(x: int) -> int:
        return 2 * x

    app = make_app(mcp)
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/tools/double",
        "CONTENT_LENGTH": "8",
        "CONTENT_TYPE": "application/json",
    }
    for key, value in environ.items():
        monkeypatch.setenv(key, value)
    stdout = io.BytesIO()
    serve_cgi(app, stdin=io.BytesIO(b'{"x": 4}'), stdout=stdout)
    result = parse(stdout.getvalue())
    assert (result.status, result.json()) == (200, {"result": 8})


def test_serve_cgi_needs_the_extension() -> None:
    with pytest.raises(RuntimeError, match="not set up"):
        serve_cgi(Flask(__name__), stdin=io.BytesIO(), stdout=io.BytesIO())


def test_permission_denials_and_rate_limits_have_their_statuses(
    make_app: t.Callable[..., Flask], monkeypatch: pytest.MonkeyPatch
) -> None:
    mcp = MCP(name="inline")

    @mcp.tool(permissions=[ScopeRequired(["admin"])])
    def wipe() -> str:
        return "wiped"

    @mcp.tool(rate_limit="1/minute")
    def ping_once() -> str:
        return "pong"

    app = make_app(mcp)

    def post(tool: str) -> CGIResult:
        environ = {"REQUEST_METHOD": "POST", "PATH_INFO": f"/tools/{tool}", "CONTENT_LENGTH": "2"}
        for key, value in {**environ, "CONTENT_TYPE": "application/json"}.items():
            monkeypatch.setenv(key, value)
        stdout = io.BytesIO()
        serve_cgi(app, stdin=io.BytesIO(b"{}"), stdout=stdout)
        return parse(stdout.getvalue())

    denied = post("wipe")
    assert denied.status == 403
    assert denied.headers["WWW-Authenticate"] == 'Bearer error="insufficient_scope", scope="admin"'
    assert denied.json()["error"].startswith("Forbidden: ")
    assert post("ping_once").status == 200
    limited = post("ping_once")
    assert limited.status == 429
    assert 1 <= int(limited.headers["Retry-After"]) <= 60


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", ""])
def test_only_json_bodies_run_a_tool(content_type: str) -> None:
    """As over REST: a body not declared application/json is 415, whatever it holds."""
    result = run_cgi("POST", "/tools/add", b'{"a": 1, "b": 2}', {"CONTENT_TYPE": content_type})
    assert result.status == 415 and "application/json" in result.json()["error"]


# -- authentication: the same gate as every HTTP surface --------------------------------

AUTH = {"FLASK_MCP_AUTH_TOKENS": '{"alice-token": "alice"}'}


def test_an_anonymous_cgi_caller_is_refused_like_over_rest() -> None:
    """With a backend configured, a CGI call without a credential is 401, even for a tool without permissions."""
    result = run_cgi("POST", "/tools/whoami", b"{}", AUTH)
    assert result.status == 401
    assert result.headers["WWW-Authenticate"].startswith("Bearer ")
    assert "requires authentication" in result.json()["error"]


def test_a_bearer_token_reaches_the_tool_over_cgi() -> None:
    result = run_cgi("POST", "/tools/whoami", b"{}", {**AUTH, "HTTP_AUTHORIZATION": "Bearer alice-token"})
    assert (result.status, result.json()) == (200, {"result": "alice"})


@pytest.mark.parametrize(
    ("path", "method"), [("/tools/whoami", "POST"), ("/tools/nope", "POST"), ("/openapi.json", "GET")]
)
def test_a_bad_token_is_401_before_anything_is_told(path: str, method: str) -> None:
    result = run_cgi(method, path, b"{}" if method == "POST" else b"", {**AUTH, "HTTP_AUTHORIZATION": "Bearer wrong"})
    assert result.status == 401 and 'error="invalid_token"' in result.headers["WWW-Authenticate"]


def test_the_openapi_document_follows_mcp_auth_openapi() -> None:
    assert run_cgi("GET", "/openapi.json", extra=AUTH).status == 401  # a protected app's, by default
    assert run_cgi("GET", "/openapi.json", extra={**AUTH, "FLASK_MCP_AUTH_OPENAPI": "true"}).status == 401
    assert run_cgi("GET", "/openapi.json", extra={**AUTH, "FLASK_MCP_AUTH_OPENAPI": "false"}).status == 200
    assert run_cgi("GET", "/openapi.json").status == 200  # a public app's


def test_the_document_of_a_protected_app_declares_its_scheme() -> None:
    document = run_cgi("GET", "/openapi.json", extra={**AUTH, "HTTP_AUTHORIZATION": "Bearer alice-token"}).json()
    schemes = document["components"]["securitySchemes"]
    assert [scheme["scheme"] for scheme in schemes.values()] == ["bearer"]
    operation = document["paths"]["/tools/whoami"]["post"]
    assert [next(iter(requirement)) for requirement in operation["security"]] == list(schemes)
    assert "securitySchemes" not in run_cgi("GET", "/openapi.json").json().get("components", {})


@pytest.fixture
def doubling_app(make_app: t.Callable[..., Flask]) -> Flask:
    mcp = MCP(name="inline")

    @mcp.tool
    def double(x: int) -> int:
        return 2 * x

    return make_app(mcp, MCP_MAX_JSON_DEPTH=4)


def cgi_post(app: Flask, monkeypatch: pytest.MonkeyPatch, body: bytes, **environ: str) -> CGIResult:
    """The in-process answer to a POST of *body* to the ``double`` tool."""
    variables = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/tools/double",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(body)),
        **environ,
    }
    for key, value in variables.items():
        monkeypatch.setenv(key, value)
    stdout = io.BytesIO()
    serve_cgi(app, stdin=io.BytesIO(body), stdout=stdout)
    return parse(stdout.getvalue())


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({"CONTENT_LENGTH": "٨"}, "Bad Request: Content-Length must be a decimal number of bytes"),
        ({"CONTENT_LENGTH": "+8"}, "Bad Request: Content-Length must be a decimal number of bytes"),
        ({"CONTENT_LENGTH": "80"}, "Bad Request: the body ended after 8 of its 80 bytes"),
        ({"HTTP_TRANSFER_ENCODING": "chunked"}, "Bad Request: a request may not have both Content-Length and "
         "Transfer-Encoding"),
    ],
    ids=["arabic-indic-length", "signed-length", "short-body", "both-framings"],
)  # fmt: skip
def test_cgi_reads_bodies_by_the_same_rules(
    doubling_app: Flask, monkeypatch: pytest.MonkeyPatch, environ: dict[str, str], message: str
) -> None:
    result = cgi_post(doubling_app, monkeypatch, b'{"x": 4}', **environ)
    assert (result.status, result.json()) == (400, {"error": message})


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        (b'{"x": 1, "x": 4}', "duplicate key 'x' in an object"),
        (b'{"x": 1e999}', "the number '1e999' is out of range: JSON numbers must be finite"),
        ('{"x": 4}'.encode("utf-16"), "the text is not UTF-8: 'utf-8' codec can't decode byte 0xff in position 0: "
         "invalid start byte"),
        (b'{"x": 4, "y": [[[[[]]]]]}', "nesting is deeper than the limit of 4"),
    ],
    ids=["duplicate-key", "overflow", "utf-16", "depth-from-config"],
)  # fmt: skip
def test_cgi_decodes_bodies_as_strictly_as_mcp_messages(
    doubling_app: Flask, monkeypatch: pytest.MonkeyPatch, body: bytes, detail: str
) -> None:
    result = cgi_post(doubling_app, monkeypatch, body)
    assert (result.status, result.json()) == (400, {"error": f"Invalid JSON: {detail}"})
    assert cgi_post(doubling_app, monkeypatch, b'{"x": 4}').json() == {"result": 8}
