"""The stdio transport: newline-delimited JSON-RPC on a process's stdin and stdout.

Desktop clients (Claude Desktop, Cursor, the SDK's ``stdio_client``) launch
a local server as a subprocess and speak MCP over its standard streams: one
JSON-RPC message per line, in both directions. stdout carries nothing but
those lines, so while :func:`serve_stdio` runs, ``print()`` and logging
handlers that wrote to stdout are sent to stderr instead.

Both eras are served, message by message. In the handshake era the process
is the session: one :class:`~flask_mcp.core.server.ClientState` lives as
long as stdin stays open, and answers to server-to-client requests come back
on the same stdin, so they are routed in memory. A modern (2026-07-28)
request carries its own envelope and is answered on its own; its
``subscriptions/listen`` writes the stream's notifications as lines until
the client cancels it with ``notifications/cancelled`` (the one client
notification of the modern era) or stdin closes.

Every message is handled inside a request context made with
``app.test_request_context(MCP_URL_PREFIX, method="POST")``: ``current_app``,
``g`` and ``url_for`` work in handlers exactly as over HTTP, while
``request`` describes a synthetic request without client headers and no
``before_request`` hooks run.
"""

from __future__ import annotations

import itertools
import logging
import sys
import threading
import time
import typing as t

from flask.testing import EnvironBuilder

from ..core.client import ClientState
from ..core.context import NoAnswer
from ..globals import state_of
from ..protocol import jsonrpc
from ..protocol.envelope import is_modern
from ..protocol.jsonrpc import MCPError
from ..protocol.params import validate_notification_params
from ..stores.events import BROADCAST
from .channel import REQUEST_CANCELLED, REQUEST_TIMEOUT
from .listen import IDLE, follow, subscription_of
from .stdout import stdout_to_stderr

if t.TYPE_CHECKING:
    from _typeshed.wsgi import WSGIEnvironment
    from flask import Flask
    from flask.ctx import RequestContext

    from ..policies.principal import Principal
    from ..stores.events import EventLog


__all__ = ["NETWORK_TRANSPORT_KEY", "StdioChannel", "StdioServer", "message_context", "serve_stdio"]

logger = logging.getLogger("flask_mcp")


#: Where :func:`message_context` keeps the environ it copies, per endpoint path, in ``app.extensions``.
_ENVIRONS_KEY = "mcp_message_environs"
#: The WSGI environ key of a context made by :func:`message_context`: the network transport
#: the message came over (``"pipe"`` for stdio), or ``None`` for none (the CLI, a task's run).
#: Its absence means a real HTTP request.
NETWORK_TRANSPORT_KEY = "flask_mcp.network_transport"


def message_context(app: Flask, path: str | None = None, transport: str | None = None) -> RequestContext:
    """The request context one message is handled in (see the module docstring).

    :param path: the endpoint's path; by default that of the current server
        (:func:`~flask_mcp.globals.state_of`), whose request it then is.
    :param transport: what the message came over, as OpenTelemetry's
        ``network.transport`` names it (``"pipe"``); ``None``: no network.
    """
    if path is None:
        state = state_of(app)
        path = state.endpoint_path or state.settings.url_prefix
    # The WSGI environ of a POST to the endpoint is built once per app and path, then copied:
    # building it is most of what a context costs, and every message's is the same.
    built: dict[str, WSGIEnvironment] = app.extensions.setdefault(_ENVIRONS_KEY, {})
    environ = built.get(path)
    if environ is None:
        builder = EnvironBuilder(app, path=path, method="POST")
        try:
            environ = built[path] = builder.get_environ()
        finally:
            builder.close()
    return app.request_context({**environ, NETWORK_TRANSPORT_KEY: transport})


class _Pending:
    """A server-to-client request waiting for the client's answer."""

    def __init__(self, owner: jsonrpc.RequestId) -> None:
        self.owner = owner
        self.done = threading.Event()
        self.answer: jsonrpc.Response | None = None


class StdioChannel:
    """The :class:`~flask_mcp.core.context.Channel` of one request handled over stdio.

    :param server: the connection the request arrived on.
    :param request_id: the id of the request being handled.
    """

    def __init__(self, server: StdioServer, request_id: jsonrpc.RequestId) -> None:
        self.server = server
        self.request_id = request_id

    def notify(self, method: str, params: dict[str, t.Any]) -> None:
        """Write a notification line."""
        self.server.write({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: dict[str, t.Any], timeout: float) -> dict[str, t.Any]:
        """Write a request line and wait for the client's response, routed here by the reader loop."""
        outgoing_id, pending = self.server.expect(self.request_id)
        try:
            self.server.write({"jsonrpc": "2.0", "id": outgoing_id, "method": method, "params": params})
            pending.done.wait(timeout)
        finally:
            self.server.forget(outgoing_id)
        answer = pending.answer
        if answer is None and self.cancelled():
            raise NoAnswer(REQUEST_CANCELLED, f"the request was cancelled while waiting for {method}")
        if answer is None and self.server.closed:
            raise NoAnswer(jsonrpc.INTERNAL_ERROR, f"stdin was closed while waiting for the answer to {method}")
        if answer is None:
            raise NoAnswer(REQUEST_TIMEOUT, f"the client did not answer {method} within {timeout:g} seconds")
        if answer.error is not None:
            error = answer.error
            raise MCPError(error.get("code", jsonrpc.INTERNAL_ERROR), error.get("message", ""), error.get("data"))
        return t.cast(dict[str, t.Any], answer.result or {})

    def cancelled(self) -> bool:
        """Whether ``notifications/cancelled`` arrived for this request."""
        return self.server.is_cancelled(self.request_id)

    def close_stream(self) -> None:
        """Nothing to do: the pipe stays open for the whole session."""

    def unavailable(self) -> str | None:
        """Requests to the client always work: its answers arrive on stdin."""
        return None


class StdioServer:
    """One stdio connection: reads messages, handles them, writes responses.

    :param app: the Flask app the MCP extension is set up on.
    :param stdin: where lines are read from (binary).
    :param stdout: where lines are written to (binary); nothing else writes there.
    :param principal: the caller, from a token or ``MCP_LOCAL_PRINCIPAL``
        (:func:`flask_mcp.auth.local.local_principal`); ``None``: nobody.
    """

    def __init__(self, app: Flask, stdin: t.BinaryIO, stdout: t.BinaryIO, principal: Principal | None = None) -> None:
        self.app = app
        #: Who the process serves (:mod:`flask_mcp.auth.local`), for every message.
        self.principal = principal
        self.mcp = state_of(app)
        # Worker threads do not see the server the CLI chose: each message names it by its path.
        self.path = self.mcp.endpoint_path or self.mcp.settings.url_prefix
        self.stdin = stdin
        self.stdout = stdout
        #: The session: the process serves exactly one client.
        self.client = ClientState(surface="stdio")
        #: When the session began (seconds since the epoch), for its duration's metric.
        self.started = time.time()
        #: Set once stdin reached EOF; waiting handlers then give up.
        self.closed = False
        self._write_lock = threading.Lock()
        # Guards the bookkeeping below, shared by the reader loop and workers.
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._pending: dict[str, _Pending] = {}
        self._cancelled: set[jsonrpc.RequestId] = set()
        self._running: dict[jsonrpc.RequestId, threading.Thread] = {}

    # -- output ----------------------------------------------------------

    def write(self, message: dict[str, t.Any]) -> None:
        """Write *message* as one line; whole lines only, even from several threads."""
        data = self.mcp.server.serialize(message)
        with self._write_lock:
            self.stdout.write(data + b"\n")
            self.stdout.flush()

    # -- bookkeeping for workers -------------------------------------------

    def expect(self, owner: jsonrpc.RequestId) -> tuple[str, _Pending]:
        """Reserve a fresh id for a server-to-client request made while handling *owner*."""
        pending = _Pending(owner)
        with self._lock:
            outgoing_id = f"srv-{next(self._ids)}"
            self._pending[outgoing_id] = pending
            if self.closed:
                pending.done.set()
        return outgoing_id, pending

    def forget(self, outgoing_id: str) -> None:
        """Stop waiting for the answer to *outgoing_id*."""
        with self._lock:
            self._pending.pop(outgoing_id, None)

    def is_cancelled(self, request_id: jsonrpc.RequestId) -> bool:
        """Whether the client cancelled *request_id*."""
        with self._lock:
            return request_id in self._cancelled

    # -- the loop ----------------------------------------------------------

    def run(self) -> None:
        """Handle lines until stdin reaches EOF, then let running handlers finish.

        A line longer than ``MCP_MAX_CONTENT_LENGTH`` is answered with -32600
        and skipped without being kept in memory, as HTTP answers 413.
        """
        limit = self.mcp.settings.max_content_length
        while raw := self.stdin.readline(limit + 1):
            if len(raw) > limit and not raw.endswith(b"\n"):
                self._skip_line()
                error = MCPError(jsonrpc.INVALID_REQUEST, f"Invalid Request: a message is larger than {limit} bytes")
                self.write(jsonrpc.failure(None, error))
                continue
            line = raw.strip()
            if line:
                self.receive(line)
        with self._lock:
            self.closed = True
            waiting = list(self._pending.values())
            running = list(self._running.values())
        # Nobody can answer any more: waiting handlers fail fast instead of timing out.
        for pending in waiting:
            pending.done.set()
        for thread in running:
            thread.join()
        tracer = self.mcp.server.tracer
        if tracer is not None and self.client.client_info is not None:  # a handshake session: stdin closing ends it
            with message_context(self.app, self.path, "pipe"):
                tracer.session_ended(self.started, time.time(), self.client)

    def _skip_line(self) -> None:
        """Read on to the end of the current line, a bounded piece at a time."""
        while (piece := self.stdin.readline(64 * 1024)) and not piece.endswith(b"\n"):
            pass

    def receive(self, line: bytes) -> None:
        """Handle one line of input."""
        payload: t.Any = None
        try:
            payload = jsonrpc.loads(line, self.mcp.server.json_limits)
            message = jsonrpc.parse_message(payload)
        except MCPError as exc:
            self.write(jsonrpc.failure(jsonrpc.request_id_of(payload), exc))
            return
        if isinstance(message, jsonrpc.Notification):
            try:
                validate_notification_params(message.method, message.params)
            except MCPError as exc:
                # A notification is never answered, not even with an error.
                logger.warning("MCP stdio: dropped %s: %s", message.method, exc.message)
                return
        if isinstance(message, jsonrpc.Response):
            self._route(message)
            return
        if isinstance(message, jsonrpc.Notification) and message.method == "notifications/cancelled":
            self._cancel(message.params.get("requestId"))
        if isinstance(message, jsonrpc.Request) and self._is_listen(message):
            self._start(message, self._listen)
            return
        if isinstance(message, jsonrpc.Request) and self.mcp.server.needs_channel(message):
            self._start(message, self._work)
            return
        self._handle(message, None)

    def _is_listen(self, message: jsonrpc.Request) -> bool:
        return message.method == "subscriptions/listen" and self.mcp.server.modern_era and is_modern(message.params)

    def _route(self, answer: jsonrpc.Response) -> None:
        with self._lock:
            pending = self._pending.get(answer.id) if isinstance(answer.id, str) else None
        if pending is None:
            logger.warning("MCP stdio: dropped a response to unknown request id %r", answer.id)
            return
        pending.answer = answer
        pending.done.set()

    def _cancel(self, request_id: t.Any) -> None:
        with self._lock:
            if request_id not in self._running:
                return  # finished already, or never existed: nothing to stop
            self._cancelled.add(request_id)
            waiting = [p for p in self._pending.values() if p.owner == request_id]
        for pending in waiting:
            pending.done.set()

    def _start(self, message: jsonrpc.Request, work: t.Callable[[jsonrpc.Request], None]) -> None:
        # A Context handler may wait for the client, whose answer arrives on
        # stdin, and a listen stream lasts: each runs in a worker so this loop keeps reading.
        with self._lock:
            if message.id in self._running:
                error = MCPError(jsonrpc.INVALID_REQUEST, f"Invalid Request: id {message.id!r} is already in use")
                duplicate = True
            else:
                duplicate = False
                thread = threading.Thread(target=work, args=(message,), name=f"mcp-stdio-{message.id}", daemon=True)
                self._running[message.id] = thread
        if duplicate:
            self.write(jsonrpc.failure(message.id, error))
            return
        thread.start()

    def _work(self, message: jsonrpc.Request) -> None:
        try:
            self._handle(message, StdioChannel(self, message.id))
        finally:
            with self._lock:
                self._running.pop(message.id, None)
                self._cancelled.discard(message.id)

    def _listen(self, message: jsonrpc.Request) -> None:
        """Write one listen stream's notifications until it is cancelled, stdin closes or its lifetime ends."""

        def stopped() -> bool:
            return self.closed or self.is_cancelled(message.id)

        try:
            with message_context(self.app, self.path):
                subscription, refusal = subscription_of(self.mcp, message, self.principal)
                if subscription is None:
                    self.write(t.cast(dict[str, t.Any], refusal))
                    return
                events = t.cast("EventLog", self.mcp.events)
                # Looks at stopped() at least this often: stdin closing ends the stream promptly.
                stream = follow(self.mcp, subscription, events, events.last(None, BROADCAST), stopped, tick=0.25)
                for item in stream:
                    if stopped():
                        return  # cancelled: no response, as for any cancelled request
                    if item is not IDLE:
                        self.write(item)
        except Exception:
            logger.exception("MCP stdio listen stream failed")
        finally:
            with self._lock:
                self._running.pop(message.id, None)
                self._cancelled.discard(message.id)

    def _handle(self, message: jsonrpc.Message, channel: StdioChannel | None) -> None:
        response: dict[str, t.Any] | None = None
        try:
            with message_context(self.app, self.path, "pipe"):
                self.mcp.keep_in_step()
                response = self.mcp.server.handle(message, self.client, channel, self.principal)
        except Exception as exc:  # the core answers its own errors; this is the context's
            logger.exception("MCP stdio message failed")
            if isinstance(message, jsonrpc.Request):
                response = jsonrpc.failure(message.id, self.mcp.server.internal_error(exc))
        if response is None:
            return
        if isinstance(message, jsonrpc.Request) and self.is_cancelled(message.id):
            return  # the specification: no response to a cancelled request
        self.write(response)


def serve_stdio(
    app: Flask,
    stdin: t.BinaryIO | None = None,
    stdout: t.BinaryIO | None = None,
    principal: Principal | None = None,
) -> None:
    """Serve the app's MCP endpoint over stdio until stdin is closed.

    :param app: a Flask app the :class:`~flask_mcp.MCP` extension is set up on.
    :param stdin: binary input; ``sys.stdin.buffer`` by default.
    :param stdout: binary output; ``sys.stdout.buffer`` by default.
    :param principal: the caller of every message (``flask mcp stdio`` gets it
        from ``--token``, ``FLASK_MCP_TOKEN`` or ``MCP_LOCAL_PRINCIPAL``).
    """
    state_of(app)  # refuses an app without the extension, before anything is read
    # Resolved here, before stdout is redirected, so MCP lines reach the real stdout.
    server = StdioServer(app, stdin or sys.stdin.buffer, stdout or sys.stdout.buffer, principal)
    with stdout_to_stderr():
        server.run()
