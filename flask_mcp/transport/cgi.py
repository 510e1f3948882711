"""The CGI adapter: the REST tool calls, one process per request.

A web server configured for CGI (Apache ``mod_cgi``, lighttpd, ``thttpd``...)
runs ``flask --app app.py mcp cgi`` for every request, with the request
described in environment variables (RFC 3875) and its body on stdin; the
response goes to stdout: header lines with a ``Status:`` line, a blank line,
the body.

``PATH_INFO`` (what follows the script's own path, ``SCRIPT_NAME``) selects
the operation:

* ``POST /tools/<name>`` with a JSON object of arguments: ``{"result": value}``;
* ``GET /openapi.json``: the OpenAPI document of those operations.

Why a dispatcher of its own rather than the WSGI app under
:class:`wsgiref.handlers.CGIHandler`: the CGI error messages are worded for
this adapter (``Invalid JSON: <detail>``, ``Error: <message>``), it must not
depend on ``MCP_REST_ENABLED``, and the OpenAPI document must describe the
paths CGI serves rather than the REST prefix. The steps that matter are
shared with the REST adapter and ``tools/call`` through
:func:`~flask_mcp.core.direct_calls.call_tool_json` (:mod:`flask_mcp.core.calls`),
so validation, invocation, error masking and result conversion cannot drift
apart.
"""

from __future__ import annotations

import io
import logging
import sys
import time
import typing as t
from http import HTTPStatus
from wsgiref.handlers import read_environ
from wsgiref.util import guess_scheme

from flask import Response, request

from ..auth.gate import Unauthorized, error_status
from ..core.direct_calls import DirectCallFailed, Reason, call_tool_json
from ..globals import state_of
from ..protocol import jsonrpc
from ..protocol.jsonrpc import MCPError
from ..protocol.strict_json import JSONLimits
from ..stores.failures import RETRY_AFTER, unavailable
from .body import BodyRejected, read_body
from .guard import is_json_request
from .openapi import build_document, security_schemes
from .openapi_access import needs_credential, views_differ, visible_view
from .refusals import report
from .stdout import stdout_to_stderr

if t.TYPE_CHECKING:
    from flask import Flask

    from ..binding.state import MCPState
    from ..policies.principal import Principal

__all__ = ["CGIResponse", "cgi_document", "handle_cgi", "serve_cgi"]

logger = logging.getLogger("flask_mcp")

JSON_CONTENT_TYPE = "application/json"


class CGIResponse:
    """A status, headers and body, written in the CGI response format by :meth:`write`."""

    def __init__(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.status = status
        self.body = body
        self.headers = {"Content-Type": JSON_CONTENT_TYPE, **(headers or {})}

    def write(self, stream: t.BinaryIO, *, head: bool = False) -> None:
        """Write the ``Status:`` line, the headers, a blank line and (unless *head*) the body."""
        lines = [f"Status: {self.status} {HTTPStatus(self.status).phrase}"]
        lines += [f"{name}: {value}" for name, value in self.headers.items()]
        lines.append(f"Content-Length: {len(self.body)}")
        stream.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        if not head:
            stream.write(self.body)
        stream.flush()


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> CGIResponse:
    return CGIResponse(status, jsonrpc.encode({"error": message}), headers)


def _method_not_allowed(method: str, allowed: str) -> CGIResponse:
    return _error(405, f"Method Not Allowed: {method} (allowed: {allowed})", {"Allow": allowed})


def cgi_document(state: MCPState, script_name: str = "", principal: Principal | None = None) -> dict[str, t.Any]:
    """The OpenAPI document of the CGI operations: the tools, at ``/tools/<name>``.

    The REST document's resource and MCP endpoint paths are left out, as CGI
    does not serve them; *script_name* (the script's URL path) becomes the
    server URL, so the paths resolve under it. The tools are those
    *principal* (``None``: an anonymous reader) may list
    (:func:`~flask_mcp.transport.openapi_access.visible_view`).
    """
    security = security_schemes(state.auth.backend) if state.auth is not None else None
    view = visible_view(state.server, principal)
    document = build_document(state.server, "", "/", security=security, view=view)
    document["paths"] = {path: item for path, item in document["paths"].items() if path.startswith("/tools/")}
    if script_name:
        document["servers"] = [{"url": script_name}]
    return document


def _parse_arguments(body: bytes, limits: JSONLimits) -> dict[str, t.Any] | CGIResponse:
    if not body.strip():
        return {}  # a tool without arguments may be called with no body at all
    try:
        payload = jsonrpc.loads(body, limits)
    except MCPError as exc:
        return _error(400, f"Invalid JSON: {exc.data['detail']}")
    if not isinstance(payload, dict):
        return _error(400, f"Invalid JSON: expected an object of arguments, got {type(payload).__name__}")
    return payload


#: Status and wording of each way a tool call can fail (RFC-style CGI messages).
_ERRORS: dict[Reason, tuple[int, str]] = {
    "unknown_tool": (404, "Function not found: {}"),
    "invalid_arguments": (400, "Invalid arguments: {}"),
    "not_found": (404, "{}"),
    "tool_error": (500, "Error: {}"),
    "permission_denied": (403, "Forbidden: {}"),
    "rate_limited": (429, "Too Many Requests: {}"),
    # A tool marked confirm: the human's approval cannot be asked for here.
    "approval_required": (403, "Approval required: {}"),
}


def _call_tool(
    state: MCPState, name: str, arguments: dict[str, t.Any], principal: Principal | None = None
) -> CGIResponse:
    try:
        return CGIResponse(200, call_tool_json(state.server, name, arguments, principal, surface="cgi"))
    except DirectCallFailed as exc:
        status, wording = _ERRORS[exc.reason]
        headers = None
        if exc.policy_code is not None:
            # The same Retry-After / insufficient_scope headers as over HTTP.
            mapped = error_status({"code": exc.policy_code, "data": exc.data}, state.auth)
            headers = mapped[1] if mapped is not None else None
        return _error(status, wording.format(exc.message), headers)


def handle_cgi(app: Flask, environ: dict[str, t.Any], stdin: t.BinaryIO) -> CGIResponse:
    """Answer the CGI request described by *environ* (its body on *stdin*).

    The request is handled in a Flask request context built from *environ*
    (``request`` describes the real client; ``before_request`` hooks do not
    run, as over stdio).
    """
    state = state_of(app)
    method = environ.get("REQUEST_METHOD", "GET").upper()
    path = environ.get("PATH_INFO") or "/"
    reason = state.request_guard.rejection(environ)
    if reason is not None:
        return _error(403, reason)
    if path == "/openapi.json":
        if method not in ("GET", "HEAD"):
            return _method_not_allowed(method, "GET, HEAD")
        reader = _reader(app, state, environ)
        if isinstance(reader, CGIResponse):
            return reader
        return CGIResponse(200, jsonrpc.encode(cgi_document(state, environ.get("SCRIPT_NAME", ""), reader)))
    name = path[len("/tools/") :] if path.startswith("/tools/") else ""
    if not name or "/" in name:
        return _error(404, f"Not Found: {path}")
    if method != "POST":
        return _method_not_allowed(method, "POST")
    principal = _authenticate(app, state, environ)  # before anything else: not even which tools exist is told
    if isinstance(principal, CGIResponse):
        return principal
    with app.app_context():
        state.keep_in_step()
    if name not in state.server.registry.tools:  # before the body: an unknown tool is a 404 whatever it carries
        return _error(404, _ERRORS["unknown_tool"][1].format(name))
    if not is_json_request(environ):
        return _error(415, "Unsupported Media Type: Content-Type must be application/json")
    try:
        # RFC 3875: the body is exactly CONTENT_LENGTH bytes, and there is none without it.
        body = read_body(environ, stdin, state.settings.max_content_length)
    except BodyRejected as exc:
        return _error(exc.status, exc.message)
    arguments = _parse_arguments(body, state.server.json_limits)
    if isinstance(arguments, CGIResponse):
        return arguments
    environ["wsgi.input"] = io.BytesIO(body)  # already read: request.data still works in the tool
    with app.request_context(environ):
        return _call_tool(state, name, arguments, principal)


def _authenticate(app: Flask, state: MCPState, environ: dict[str, t.Any]) -> Principal | CGIResponse | None:
    """The caller, as the app's auth backend sees the CGI request; a 401 answer; ``None`` without a backend.

    The same gate as the MCP endpoint and the REST routes: a web server must
    pass the ``Authorization`` header on to CGI (Apache: ``CGIPassAuth On``),
    or every call is refused.
    """
    if state.auth is None:
        return None
    with app.request_context(environ):
        try:
            return state.auth.authenticate(request)
        except Unauthorized as exc:
            return _error(401, exc.message, {"WWW-Authenticate": exc.challenge})


def _reader(app: Flask, state: MCPState, environ: dict[str, t.Any]) -> Principal | CGIResponse | None:
    """Who reads the document: as over HTTP, a 401 without a credential when ``MCP_AUTH_OPENAPI`` asks for one."""
    if state.auth is None:
        return None
    with app.request_context(environ):
        presented = state.auth.backend.has_credentials(request)
    required = needs_credential(state.settings.auth_openapi, protected=True)
    if not (required or presented or views_differ(state.server)):
        return None  # everyone is shown the same document
    reader = _authenticate(app, state, environ)
    if isinstance(reader, CGIResponse) and not (required or presented):
        return None
    return reader


def cgi_environ(stdin: t.BinaryIO) -> dict[str, t.Any]:
    """The WSGI environ of the CGI request in ``os.environ``, as :class:`wsgiref.handlers.CGIHandler` builds it."""
    environ: dict[str, t.Any] = dict(read_environ())
    environ.update(
        {
            "wsgi.input": stdin,
            "wsgi.errors": sys.stderr,
            "wsgi.version": (1, 0),
            "wsgi.multithread": False,
            "wsgi.multiprocess": True,
            "wsgi.run_once": True,
            "wsgi.url_scheme": guess_scheme(environ),
        }
    )
    environ.setdefault("SERVER_NAME", "localhost")
    environ.setdefault("SERVER_PORT", "80")
    return environ


def serve_cgi(app: Flask, stdin: t.BinaryIO | None = None, stdout: t.BinaryIO | None = None) -> None:
    """Answer the one CGI request in the process environment.

    :param app: a Flask app the :class:`~flask_mcp.MCP` extension is set up on.
    :param stdin: the request body (binary); ``sys.stdin.buffer`` by default.
    :param stdout: where the response goes (binary); ``sys.stdout.buffer`` by default.
    """
    state = state_of(app)  # refuses an app without the extension, before anything is read
    # Resolved before stdout is redirected, so the response reaches the real stdout.
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    environ = cgi_environ(stdin)
    started = time.time_ns()
    with stdout_to_stderr():  # a tool's print() must not corrupt the response
        try:
            response = handle_cgi(app, environ, stdin)
        except state.store_errors as exc:
            failure = unavailable(exc)
            response = _error(503, failure.message, {"Retry-After": str(RETRY_AFTER)})
        except Exception:  # a bug here still owes the web server a well-formed response
            logger.exception("CGI request failed")
            response = _error(500, "Error: internal error (details are in the server log)")
        _trace_refusal(app, state, environ, response, started)
    response.write(stdout, head=environ.get("REQUEST_METHOD", "").upper() == "HEAD")


def _trace_refusal(app: Flask, state: MCPState, environ: dict[str, t.Any], response: CGIResponse, started: int) -> None:
    """The one place CGI tells the tracer of a tool call it refused before the core saw it.

    In a request context of the CGI request, so that the span says where it
    came from as the spans of the calls CGI makes do.
    """
    tracer = state.server.tracer
    path = environ.get("PATH_INFO") or "/"
    if tracer is None or response.status < 400 or not path.startswith("/tools/") or not tracer.recording:
        return
    answer = Response(response.body, status=response.status, headers=response.headers)
    with app.request_context(environ):
        report(tracer, environ, answer, started, ("tools/call", {"name": path[len("/tools/") :]}))
