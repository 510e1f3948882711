"""Server-Sent Events for requests whose handler talks back while it runs.

A handler that takes a :class:`~flask_mcp.Context` runs in a worker thread
(with a copy of the request context). The view waits for the first thing it
produces: the final response keeps the plain ``application/json`` answer;
a notification or a server-to-client request switches the answer to
``text/event-stream``, which then carries every message until the response.
Requests to handlers without a context never come here: they keep the
synchronous JSON path.

Answers to server-to-client requests arrive on other POSTs, in any thread,
process or host; they travel through the session cache
(:class:`~flask_mcp.sessions.Mailbox`), never through process memory.
"""

from __future__ import annotations

import itertools
import queue
import secrets
import threading
import typing as t

from flask import Response, copy_current_request_context, stream_with_context

from .. import jsonrpc
from ..jsonrpc import MCPError

if t.TYPE_CHECKING:
    from ..extension import MCPState
    from ..server import ClientState

__all__ = ["HTTPChannel", "respond", "sse_event"]

#: Error code when the client did not answer a server-to-client request in time.
REQUEST_TIMEOUT = -32001
_DONE = "done"
_MESSAGE = "message"


def sse_event(data: bytes, event_id: str | None = None, retry_ms: int | None = None) -> bytes:
    """One SSE event carrying a JSON-RPC message (or an empty priming event)."""
    lines = []
    if event_id is not None:
        lines.append(b"id: " + event_id.encode())
    if retry_ms is not None:
        lines.append(b"retry: " + str(retry_ms).encode())
    if data:
        lines.append(b"event: message")
    lines.append(b"data: " + data)
    return b"\n".join(lines) + b"\n\n"


class HTTPChannel:
    """The :class:`~flask_mcp.context.Channel` of one POST handled with SSE."""

    def __init__(self, state: MCPState, client: ClientState, request_id: jsonrpc.RequestId) -> None:
        self.state = state
        self.client = client
        self.request_id = request_id
        self.outbox: queue.Queue[tuple[str, t.Any]] = queue.Queue()

    def notify(self, method: str, params: dict[str, t.Any]) -> None:
        """Queue a notification for the event stream."""
        self.outbox.put((_MESSAGE, {"jsonrpc": "2.0", "method": method, "params": params}))

    def request(self, method: str, params: dict[str, t.Any], timeout: float) -> dict[str, t.Any]:
        """Send a request on the stream and wait for the answer through the session cache."""
        mailbox = self.state.mailbox
        session_id = self.client.session_id
        if mailbox is None or session_id is None:
            raise MCPError(jsonrpc.INTERNAL_ERROR, f"{method} needs a session (the server is stateless)")
        outgoing_id = f"srv-{secrets.token_urlsafe(12)}"
        mailbox.expect(session_id, outgoing_id)
        self.outbox.put((_MESSAGE, {"jsonrpc": "2.0", "id": outgoing_id, "method": method, "params": params}))
        answer = mailbox.wait(session_id, outgoing_id, timeout, self.cancelled)
        if answer is None:
            raise MCPError(REQUEST_TIMEOUT, f"the client did not answer {method} within {timeout:g} seconds")
        if answer.get("error") is not None:
            error = answer["error"]
            raise MCPError(error.get("code", jsonrpc.INTERNAL_ERROR), error.get("message", ""), error.get("data"))
        return t.cast(dict[str, t.Any], answer.get("result") or {})

    def cancelled(self) -> bool:
        """Whether ``notifications/cancelled`` arrived for this request."""
        mailbox, session_id = self.state.mailbox, self.client.session_id
        return mailbox is not None and session_id is not None and mailbox.is_cancelled(session_id, self.request_id)


def respond(state: MCPState, message: jsonrpc.Request, client: ClientState) -> Response:
    """Run the handler in a worker thread and answer with JSON or an event stream."""
    channel = HTTPChannel(state, client, message.id)
    session_id = client.session_id
    mailbox = state.mailbox
    if mailbox is not None and session_id is not None and not mailbox.claim(session_id, message.id):
        error = MCPError(
            jsonrpc.INVALID_REQUEST, f"Invalid Request: id {message.id!r} is already in use in this session"
        )
        return Response(jsonrpc.encode(jsonrpc.failure(message.id, error)), status=409, content_type="application/json")

    @copy_current_request_context
    def work() -> None:
        response: dict[str, t.Any] | None = None
        try:
            response = state.server.handle(message, client, channel)
            if client.changed and session_id is not None and state.sessions is not None:
                state.sessions.save(session_id, client)
        finally:
            if mailbox is not None and session_id is not None:
                mailbox.release(session_id, message.id)
            if response is None:
                response = jsonrpc.failure(
                    message.id, state.server.internal_error(RuntimeError("handler thread failed"))
                )
            channel.outbox.put((_DONE, response))

    threading.Thread(target=work, name=f"mcp-request-{message.id}", daemon=True).start()
    kind, first = channel.outbox.get()
    if kind == _DONE:
        return Response(state.server.serialize(first), content_type="application/json")
    return Response(
        stream_with_context(_events(state, channel, first)),
        content_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


def _events(state: MCPState, channel: HTTPChannel, first: dict[str, t.Any]) -> t.Iterator[bytes]:
    stream_id = secrets.token_urlsafe(8)
    counter = itertools.count(1)
    keepalive = state.settings.sse_keepalive
    # The priming event (an id and no data) lets the client resume this stream.
    yield sse_event(b"", f"{stream_id}:0", state.settings.sse_retry_ms)
    yield sse_event(jsonrpc.encode(first), f"{stream_id}:{next(counter)}")
    while True:
        try:
            kind, payload = channel.outbox.get(timeout=keepalive)
        except queue.Empty:
            yield b": keep-alive\n\n"  # a comment: proxies and clients see the stream is alive
            continue
        data = state.server.serialize(payload) if kind == _DONE else jsonrpc.encode(payload)
        yield sse_event(data, f"{stream_id}:{next(counter)}")
        if kind == _DONE:
            return
