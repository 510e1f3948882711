"""Helpers for testing an MCP server in-process.

:class:`MCPTestClient` speaks MCP to a Flask app through Flask's own test
client, so a test needs no network and no server process::

    from flask_mcp.testing import MCPTestClient

    def test_add(app):
        client = MCPTestClient(app)  # the 2026-07-28 revision: every request stands alone
        assert client.call_tool("add", {"a": 1, "b": 2})["structuredContent"] == {"result": 3}

    def test_add_in_a_session(app):
        client = MCPTestClient(app)
        client.initialize()  # the handshake era, in a session, from here on
        assert client.call_tool("add", {"a": 1, "b": 2})["structuredContent"] == {"result": 3}

In the modern era a tool that asks the client something answers
``input_required``; give ``answers=`` (canned answers by key, or a function
of the key and the request) and the client answers and retries as a real
one would, round after round. In the handshake era the same answers go back
as the client's responses to the requests on the event stream
(:mod:`flask_mcp.testing_streams`).

:class:`SchemaValidator` checks every envelope against an official MCP JSON
schema file (it needs the ``jsonschema`` package).
"""

from __future__ import annotations

import time
import typing as t

from .auth.gate import TEST_PRINCIPAL_KEY
from .globals import find_state, servers_of, state_of
from .policies.principal import Principal
from .protocol.envelope import CLIENT_CAPABILITIES, CLIENT_INFO, LOG_LEVEL, PROTOCOL_VERSION
from .protocol.versions import LATEST_PROTOCOL_VERSION, MODERN_PROTOCOL_VERSIONS
from .schema_checks import RESULT_TYPES, SchemaValidator
from .testing_streams import Answers as _Answers
from .testing_streams import read_response
from .transport.routing_headers import NAME_PARAMS, encode_header_value, tool_header_params

if t.TYPE_CHECKING:
    from flask import Flask
    from werkzeug.test import TestResponse

    from .state import MCPState

__all__ = ["RESULT_TYPES", "TASK_PAUSES", "Answers", "MCPTestClient", "SchemaValidator"]

#: Canned answers to input requests by key, or a function of the key and the
#: request (``{"method", "params"}``) that returns the answer
#: (:data:`flask_mcp.testing_streams.Answers`).
Answers = _Answers
#: Rounds a call may take before the client gives up (as the official SDK client does).
MAX_ROUNDS = 10

ACCEPT = "application/json, text/event-stream"
#: The method of the notifications :attr:`MCPTestClient.progress` collects.
PROGRESS = "notifications/progress"
#: The statuses :meth:`MCPTestClient.wait_for_task` waits for by default: ended, or waiting for answers.
TASK_PAUSES = frozenset({"completed", "failed", "cancelled", "input_required"})


def _server_at(app: Flask, path: str) -> MCPState | None:
    """The server of *app* whose endpoint is at *path*; the default one when none is (``None``: no server)."""
    for state in servers_of(app).by_name.values():
        if state.endpoint_path == path:
            return state
    return find_state(app)


class MCPTestClient:
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

    def discover(self) -> dict[str, t.Any]:
        """``server/discover`` (modern era)."""
        return self.request("server/discover", {})

    def call_tool(
        self,
        name: str,
        arguments: dict[str, t.Any] | None = None,
        *,
        answers: Answers | None = None,
        progress: bool = True,
    ) -> dict[str, t.Any]:
        """``tools/call``; returns the ``CallToolResult`` (after input rounds answered from *answers*).

        :param progress: ask for progress, as an SDK client given a progress
            callback does: the request carries a ``progressToken`` of its own
            in ``_meta`` (both eras), and the progress the tool reports is in
            :attr:`progress` afterwards. ``False`` sends none: ``ctx.report_progress``
            then sends nothing.
        """
        params: dict[str, t.Any] = {"name": name, "arguments": arguments or {}}
        if progress:
            self._next_progress += 1
            # One token per call, kept across its input rounds: the rounds are one call to the caller.
            params["_meta"] = {"progressToken": f"flask_mcp.testing-{self._next_progress}"}
        return self.rounds("tools/call", params, answers)

    @property
    def progress(self) -> list[dict[str, t.Any]]:
        """The ``params`` of the ``notifications/progress`` that came before the last response.

        Each has ``progressToken``, ``progress`` and, when the tool gave them,
        ``total`` and ``message``. A tool reports progress only to a request
        with a progress token, which :meth:`call_tool` sends unless told not to.
        """
        return [note.get("params") or {} for note in self.notifications if note.get("method") == PROGRESS]

    def get_task(self, task_id: str) -> dict[str, t.Any]:
        """``tasks/get``: the task (in the modern era with its ``result``, ``error`` or ``inputRequests``)."""
        return self.request("tasks/get", {"taskId": task_id})

    def task_result(self, task_id: str, *, answers: Answers | None = None) -> dict[str, t.Any]:
        """``tasks/result`` (2025-11-25): the task's outcome, once it has ended.

        A task waiting for input sends its questions on this request's
        stream; they are answered from *answers*.
        """
        return self.request("tasks/result", {"taskId": task_id}, answers=answers)

    def wait_for_task(
        self, task_id: str, statuses: t.Collection[str] = TASK_PAUSES, *, timeout: float = 10.0
    ) -> dict[str, t.Any]:
        """Poll ``tasks/get`` until the task's status is one of *statuses* (by default: ended, or waiting
        for answers); the task then.

        Polls as a client would, every ``pollIntervalMs`` (at most every 20 ms here).

        :raises AssertionError: it did not get there within *timeout* seconds.
        """
        deadline = time.monotonic() + timeout
        while True:
            task = self.get_task(task_id)
            if task["status"] in statuses:
                return task
            assert time.monotonic() < deadline, f"task {task_id} is still {task['status']} after {timeout} s"
            time.sleep(min(0.02, (task.get("pollIntervalMs") or task.get("pollInterval") or 20) / 1000))

    def list_tools(self) -> list[dict[str, t.Any]]:
        """Every tool descriptor, following ``nextCursor`` across pages."""
        return self._list_all("tools/list", "tools")

    def list_resources(self) -> list[dict[str, t.Any]]:
        """Every static resource descriptor, following ``nextCursor`` across pages."""
        return self._list_all("resources/list", "resources")

    def list_resource_templates(self) -> list[dict[str, t.Any]]:
        """Every resource template descriptor, following ``nextCursor`` across pages."""
        return self._list_all("resources/templates/list", "resourceTemplates")

    def list_prompts(self) -> list[dict[str, t.Any]]:
        """Every prompt descriptor, following ``nextCursor`` across pages."""
        return self._list_all("prompts/list", "prompts")

    def complete(
        self,
        ref: dict[str, t.Any],
        argument: str,
        value: str,
        context: dict[str, str] | None = None,
    ) -> dict[str, t.Any]:
        """``completion/complete``; returns the ``completion`` object (``values``, ``total``, ``hasMore``).

        :param ref: what is completed: ``{"type": "ref/prompt", "name": ...}``
            or ``{"type": "ref/resource", "uri": <template>}``.
        :param argument: the argument (or template variable) being typed.
        :param value: what has been typed so far.
        :param context: the values of arguments already chosen.
        """
        params: dict[str, t.Any] = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context is not None:
            params["context"] = {"arguments": context}
        return t.cast(dict[str, t.Any], self.request("completion/complete", params)["completion"])

    def read_resource(self, uri: str, *, answers: Answers | None = None) -> list[dict[str, t.Any]]:
        """``resources/read``; returns the result's ``contents`` list, not the whole ``ReadResourceResult``.

        Each item is ``{"uri", "mimeType", "text"}`` (or ``"blob"``, base64),
        so ``client.read_resource("config://app")[0]["text"]`` is the first
        content's text. ``request("resources/read", {"uri": uri})`` returns
        the whole result (with its ``_meta``).
        """
        return t.cast(list[dict[str, t.Any]], self.rounds("resources/read", {"uri": uri}, answers)["contents"])

    def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None, *, answers: Answers | None = None
    ) -> dict[str, t.Any]:
        """``prompts/get``; returns the ``GetPromptResult``."""
        return self.rounds("prompts/get", {"name": name, "arguments": arguments or {}}, answers)

    def _list_all(self, method: str, key: str) -> list[dict[str, t.Any]]:
        items: list[dict[str, t.Any]] = []
        params: dict[str, t.Any] = {}
        while True:
            result = self.request(method, params)
            items.extend(result[key])
            if "nextCursor" not in result:
                return items
            params = {"cursor": result["nextCursor"]}
