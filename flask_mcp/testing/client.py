"""The test client: MCP over Flask's test client, in either era, with input rounds answered from ``answers=``.

Its request methods (``call_tool``, ``list_tools``...) are
:class:`~flask_mcp.testing.calls.ClientCalls`; an event stream is read by
:mod:`flask_mcp.testing.streams`.
"""

from __future__ import annotations

import typing as t

from ..auth.gate import TEST_PRINCIPAL_KEY
from ..globals import find_state, servers_of, state_of
from ..policies.principal import Principal
from ..protocol.envelope import CLIENT_CAPABILITIES, CLIENT_INFO, LOG_LEVEL, PROTOCOL_VERSION
from ..protocol.versions import LATEST_PROTOCOL_VERSION, MODERN_PROTOCOL_VERSIONS
from ..transport.routing_headers import NAME_PARAMS, encode_header_value, tool_header_params
from .calls import ClientCalls
from .schema_checks import SchemaValidator
from .streams import Answers, read_response

if t.TYPE_CHECKING:
    from flask import Flask
    from werkzeug.test import TestResponse

    from ..binding.state import MCPState

__all__ = ["MAX_ROUNDS", "MCPTestClient"]

#: Rounds a call may take before the client gives up (as the official SDK client does).
MAX_ROUNDS = 10

ACCEPT = "application/json, text/event-stream"


def _server_at(app: Flask, path: str) -> MCPState | None:
    """The server of *app* whose endpoint is at *path*; the default one when none is (``None``: no server)."""
    for state in servers_of(app).by_name.values():
        if state.endpoint_path == path:
            return state
    return find_state(app)


class MCPTestClient(ClientCalls):
    """An MCP client over Flask's test client.

    By default it speaks the modern era: every request carries its envelope
    (revision, capabilities, client info, log level) in ``_meta`` and its
    routing headers. :meth:`initialize` switches it to the handshake era, in
    a session; ``era="handshake"`` speaks the handshake era without one (for
    an app with ``MCP_STATELESS``, or to test requests before ``initialize``).

    :param app: the Flask app serving the endpoint.
    :param path: the endpoint path; by default where the server's endpoint is
        (``MCP_URL_PREFIX``).
    :param validator: optional :class:`SchemaValidator` applied to every
        handshake-era response.
    :param modern_validator: the same for modern-era responses (the 2026-07-28 schema).
    :param capabilities: the client capabilities every modern request declares.
    :param log_level: the log level modern requests ask for (none: no log messages).
    :param era: ``"modern"`` or ``"handshake"``, until :meth:`initialize`.
    :param token: sent as ``Authorization: Bearer <token>`` with every request,
        for an app with authentication.
    :param headers: more headers sent with every request (an API key, a cookie...).
    :param server: which of the app's MCP servers (its blueprint name), when it has several.
    :param principal: the caller every request is authenticated as, without
        a credential: a :class:`~flask_mcp.Principal`, or a subject string
        for one with no scopes. For an app with authentication in testing
        mode (``TESTING = True``) only; anywhere else it is ignored and the
        app authenticates as it always does.

    A handler that reports progress or logs answers with an event stream;
    the client reads it, returns the response, and keeps the notifications
    that came before it in :attr:`notifications` (the progress ones also in
    :attr:`progress`; :meth:`call_tool` asks for progress with a token of
    its own). The requests a handler
    sends on it (handshake era) are answered from ``answers=``.
    """

    def __init__(
        self,
        app: Flask,
        path: str | None = None,
        validator: SchemaValidator | None = None,
        *,
        modern_validator: SchemaValidator | None = None,
        capabilities: dict[str, t.Any] | None = None,
        log_level: str | None = None,
        era: t.Literal["modern", "handshake"] = "modern",
        token: str | None = None,
        headers: t.Mapping[str, str] | None = None,
        principal: Principal | str | None = None,
        server: str | None = None,
    ) -> None:
        if era not in ("modern", "handshake"):
            raise ValueError(f'era must be "modern" or "handshake", not {era!r}')
        self.app = app
        self.era = era
        self.http = app.test_client()
        if principal is not None:
            caller = Principal(principal) if isinstance(principal, str) else principal
            # environ_base is typed for strings; the WSGI environ holds any object.
            self.http.environ_base[TEST_PRINCIPAL_KEY] = caller  # type: ignore[assignment]
        #: The server spoken to: *server* (a blueprint name), else the one at *path*, else the app's default.
        self.state = state_of(app, server) if server is not None or path is None else _server_at(app, path)
        if path is None:
            path = self.state.endpoint_path or self.state.settings.url_prefix  # type: ignore[union-attr]
        self.path = path
        self.validator = validator
        self.modern_validator = modern_validator
        self.capabilities = capabilities or {}
        self.log_level = log_level
        self.session_id: str | None = None
        #: The negotiated revision once initialized.
        self.protocol_version: str | None = None
        #: The revision of modern requests.
        self.modern_version = MODERN_PROTOCOL_VERSIONS[0]
        #: The last raw response, for its status and headers.
        self.last_response: TestResponse | None = None
        #: Headers of every request: the token's, and those given.
        self.extra_headers = dict(headers or {})
        if token is not None:
            self.extra_headers["Authorization"] = f"Bearer {token}"
        #: The notifications (progress, log messages) that came before the last response.
        self.notifications: list[dict[str, t.Any]] = []
        self._next_id = 0
        self._next_progress = 0

    @property
    def modern(self) -> bool:
        """Whether requests go out in the modern era."""
        return self.era == "modern"

    def headers(self, **extra: str) -> dict[str, str]:
        """Request headers: Accept, and the session and version once initialized."""
        headers = {"Accept": ACCEPT, **self.extra_headers}
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version:
            headers["MCP-Protocol-Version"] = self.protocol_version
        headers.update(extra)
        return headers

    def post(self, payload: t.Any, **headers: str) -> TestResponse:
        """POST *payload* as JSON with :meth:`headers`; returns the raw response."""
        response = self.http.post(self.path, json=payload, headers=self.headers(**headers))
        self.last_response = response
        return response

    def _check(self, method: str | None, body: dict[str, t.Any]) -> None:
        validator = self.modern_validator if self.modern else self.validator
        if validator is not None:
            validator.check_envelope(method, body)

    def initialize(
        self, version: str = LATEST_PROTOCOL_VERSION, capabilities: dict[str, t.Any] | None = None
    ) -> dict[str, t.Any]:
        """Run the handshake (``initialize`` + ``notifications/initialized``); return the result.

        From then on the client speaks the handshake era, in the session it got.
        """
        response = self.post(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": version,
                    "capabilities": capabilities or {},
                    "clientInfo": {"name": "flask_mcp.testing", "version": "1"},
                },
            }
        )
        assert response.status_code == 200, response.get_data(as_text=True)
        body = t.cast(dict[str, t.Any], response.get_json())
        if self.validator is not None:
            self.validator.check_envelope("initialize", body)
        self.session_id = response.headers.get("Mcp-Session-Id")
        self.protocol_version = body["result"]["protocolVersion"]
        self.era = "handshake"
        self.notify("notifications/initialized")
        return t.cast(dict[str, t.Any], body["result"])

    def notify(self, method: str, params: dict[str, t.Any] | None = None) -> None:
        """Send a notification; it must be accepted with 202 and no body."""
        message: dict[str, t.Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        extra = {"MCP-Protocol-Version": self.modern_version, "Mcp-Method": method} if self.modern else {}
        response = self.post(message, **extra)
        assert response.status_code == 202, response.get_data(as_text=True)
        assert response.get_data() == b""

    def modern_request(
        self, method: str, params: dict[str, t.Any] | None = None
    ) -> tuple[dict[str, t.Any], dict[str, str]]:
        """The params (with their envelope) and headers of a modern request to *method*."""
        params = dict(params or {})
        meta = dict(params.get("_meta") or {})
        meta.setdefault(PROTOCOL_VERSION, self.modern_version)
        meta.setdefault(CLIENT_CAPABILITIES, self.capabilities)
        meta.setdefault(CLIENT_INFO, {"name": "flask_mcp.testing", "version": "1"})
        if self.log_level is not None:
            meta.setdefault(LOG_LEVEL, self.log_level)
        params["_meta"] = meta
        headers = {"MCP-Protocol-Version": str(meta[PROTOCOL_VERSION]), "Mcp-Method": method}
        target = NAME_PARAMS.get(method)
        if target is not None and isinstance(params.get(target), str):
            headers["Mcp-Name"] = encode_header_value(params[target])
        if method == "tools/call":
            headers.update(self._param_headers(params))
        return params, headers

    def _param_headers(self, params: dict[str, t.Any]) -> dict[str, str]:
        # What a real client learns from tools/list: the arguments that also travel in headers.
        state = self.state or find_state(self.app)  # an app set up after the client was made
        name = params.get("name")
        # A test may send a name that is no string, to see the server refuse it: no tool, no headers.
        tool = state.server.registry.tools.get(name) if state is not None and isinstance(name, str) else None
        headers: dict[str, str] = {}
        if tool is None:
            return headers
        for path, name, _kind in tool_header_params(tool):
            value: t.Any = params.get("arguments") or {}
            for part in path:
                value = value.get(part) if isinstance(value, dict) else None
            if value is not None:
                text = ("true" if value else "false") if isinstance(value, bool) else str(value)
                headers[f"Mcp-Param-{name}"] = encode_header_value(text)
        return headers

    def envelope(
        self, method: str, params: dict[str, t.Any] | None = None, *, answers: Answers | None = None
    ) -> dict[str, t.Any]:
        """Send a request and return the whole response envelope, whatever its HTTP status.

        The status is in :attr:`last_response`; :meth:`request` insists on 200.

        :param answers: answers to the requests the handler sends on the
            response's event stream (handshake era); a request without one
            is answered with an error.
        """
        self._next_id += 1
        headers: dict[str, str] = {}
        if self.modern:
            params, headers = self.modern_request(method, params)
        message: dict[str, t.Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            message["params"] = params
        # Not buffered: a stream is read event by event, so that the handler's requests are answered.
        response = self.http.post(self.path, json=message, headers=self.headers(**headers), buffered=False)
        self.last_response = response
        body = self._response_of(response, answers)
        # An error answered before the message was read (a 401, a 413) has no id to echo.
        assert body["id"] == self._next_id or (body["id"] is None and "error" in body), body
        self._check(method, body)
        return body

    def _response_of(self, response: TestResponse, answers: Answers | None = None) -> dict[str, t.Any]:
        """The JSON-RPC response a POST was answered with, plain or at the end of an event stream.

        The stream's notifications are kept in :attr:`notifications`; its
        requests are answered from *answers* as they arrive.
        """

        def reply(answer: dict[str, t.Any]) -> None:
            posted = self.post(answer)
            assert posted.status_code == 202, posted.get_data(as_text=True)
            self.last_response = response

        body, self.notifications = read_response(response, answers, reply)
        return body

    def request(
        self, method: str, params: dict[str, t.Any] | None = None, *, answers: Answers | None = None
    ) -> dict[str, t.Any]:
        """Send a request that must succeed; return its ``result``.

        :param answers: as for :meth:`envelope`.
        """
        body = self.envelope(method, params, answers=answers)
        assert self.last_response is not None and self.last_response.status_code == 200, body
        assert "result" in body, body
        return t.cast(dict[str, t.Any], body["result"])

    def error(self, method: str, params: dict[str, t.Any] | None = None) -> dict[str, t.Any]:
        """Send a request that must fail; return its ``error`` object (the status is in :attr:`last_response`)."""
        body = self.envelope(method, params)
        assert "error" in body, body
        return t.cast(dict[str, t.Any], body["error"])

    def rounds(self, method: str, params: dict[str, t.Any], answers: Answers | None) -> dict[str, t.Any]:
        """Send a request and, while it answers ``input_required``, answer and send it again.

        Without *answers* the first result is returned as it is.
        """
        result = self.request(method, params, answers=answers)
        for _ in range(MAX_ROUNDS):
            if answers is None or result.get("resultType") != "input_required":
                return result
            responses = {
                key: answers(key, request) if callable(answers) else answers[key]
                for key, request in (result.get("inputRequests") or {}).items()
            }
            retry = {**params, "inputResponses": responses}
            if result.get("requestState") is not None:
                retry["requestState"] = result["requestState"]
            result = self.request(method, retry, answers=answers)
        raise AssertionError(f"{method} still asked for input after {MAX_ROUNDS} rounds")
