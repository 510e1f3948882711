"""Server-Sent Events for requests whose handler talks back while it runs.

A handler that takes a :class:`~flask_mcp.Context` runs beside its response
(in a greenlet of the request's thread, or a thread of its own:
:mod:`~flask_mcp.transport.handler_runs`). The view waits for the first thing
it produces: the final response keeps the plain ``application/json`` answer;
a notification or a server-to-client request switches the answer to
``text/event-stream``, which then carries every message until the response.
Requests to handlers without a context never come here: they keep the
synchronous JSON path.

The handler's messages reach the response through its
:class:`~flask_mcp.transport.channel.HTTPChannel`.
"""

from __future__ import annotations

import functools
import logging
import queue
import time
import typing as t

from flask import Response, request, stream_with_context

from ..core.context import notifications_asked
from ..protocol import jsonrpc
from ..protocol.jsonrpc import SERVICE_UNAVAILABLE, MCPError
from ..stores.events import BROADCAST, GAP_GRACE, event_count, parse_event_id
from ..stores.failures import unavailable
from .answer import EVENT_STREAM_HEADERS, EventStreamAnswer, JSONAnswer
from .channel import HTTPChannel
from .deadline import socket_of
from .handler_runs import CLOSE, DONE, KEEPALIVE, Item, handler_run
from .inline_stream import InlineStream
from .lost_requests import LostRequest
from .status import http_status

if t.TYPE_CHECKING:
    from ..binding.state import MCPState
    from ..core.client import ClientState
    from ..core.context import Channel
    from ..policies.principal import Principal
    from ..stores.events import EventLog
    from ..stores.sessions import Session

__all__ = ["respond", "respond_with", "resume_or_listen", "sse_event"]

logger = logging.getLogger("flask_mcp")

#: Seconds a client refused for lack of stream slots is told to wait.
STREAM_RETRY_AFTER = 5
#: A comment: proxies and clients see that a stream with nothing to send is alive.
_KEEPALIVE = b": keep-alive\n\n"


def sse_event(data: bytes, event_id: str | None = None, retry_ms: int | None = None) -> bytes:
    """One SSE event carrying a JSON-RPC message (or an empty priming event)."""
    head = b"" if event_id is None else b"id: " + event_id.encode() + b"\n"
    if retry_ms is not None:
        head += b"retry: " + str(retry_ms).encode() + b"\n"
    return head + (b"event: message\ndata: " if data else b"data: ") + data + b"\n\n"


def respond(
    state: MCPState,
    message: jsonrpc.Request,
    client: ClientState,
    principal: Principal | None = None,
    session: Session | None = None,
    modern: bool = False,
) -> Response:
    """Run the handler beside its response and answer with JSON or an event stream.

    Only the plain JSON answer can still carry a 403 or 429 status for a
    permission denial or a rate limit: once the stream has started, the
    status is sent, and the error travels as the last event.

    :param principal: the authenticated caller, handed to the protocol core.
    :param session: the loaded session of *client*, stored again if the handler changes it.
    :param modern: a modern-era request: its errors carry the revision's
        HTTP statuses, its stream has no event ids, and closing it cancels the handler.
    """

    def handle(channel: Channel) -> dict[str, t.Any] | None:
        return state.server.handle(message, client, channel, principal)

    quiet = modern and not notifications_asked(message.params)
    return respond_with(state, message.id, handle, client, session, modern, principal, quiet)


def respond_with(
    state: MCPState,
    request_id: jsonrpc.RequestId,
    handle: t.Callable[[Channel], dict[str, t.Any] | None],
    client: ClientState,
    session: Session | None = None,
    modern: bool = False,
    principal: Principal | None = None,
    quiet: bool = False,
) -> Response:
    """:func:`respond` with *handle*, which answers the request *request_id* given its channel.

    The fast lane's call of a tool that takes a :class:`~flask_mcp.Context`
    (:mod:`~flask_mcp.transport.fast_lane`) runs its tool straight from here.

    :param principal: the authenticated caller, whose questions the handler asks.
    :param quiet: a 2026-07-28 request that asked for nothing its handler could send
        (:func:`~flask_mcp.core.context.notifications_asked`): its handler runs in the view.
    """
    if modern and not state.settings.stream_threads:
        return _respond_inline(state, request_id, handle, quiet)
    run = handler_run(state.settings.stream_threads, state.settings.sse_keepalive)
    channel = HTTPChannel(state, client, request_id, modern, run, principal)
    session_id = client.session_id
    mailbox = state.mailbox
    if mailbox is not None and session_id is not None:
        held = channel.held = mailbox.claim(session_id, request_id)
        if held is None:
            error = MCPError(
                jsonrpc.INVALID_REQUEST, f"Invalid Request: id {request_id!r} is already in use in this session"
            )
            return JSONAnswer(jsonrpc.encode(jsonrpc.failure(request_id, error)), 409)

    def work() -> None:
        response: dict[str, t.Any] | None = None
        try:
            response = handle(channel)
            if client.changed and session is not None and state.sessions is not None:
                state.sessions.store(session)
            elif client.changed and session_id is not None and state.sessions is not None:
                state.sessions.save(session_id, client)
        except state.store_errors as exc:
            response = jsonrpc.failure(request_id, unavailable(exc))
        finally:
            cancelled = False
            try:
                # Read before release, which clears the cancellation with the in-flight marker.
                cancelled = channel.was_cancelled()
                if mailbox is not None and channel.held is not None:
                    mailbox.give_back(channel.held)
            except state.store_errors:
                # The marker expires on its own once no heartbeat renews it.
                logger.warning("MCP store unavailable while ending request %r", request_id)
            if cancelled:
                # The specification: a cancelled request gets no response; its stream just ends.
                channel.end_without_response()
            else:
                if response is None:
                    response = jsonrpc.failure(request_id, state.server.internal_error(RuntimeError("handler failed")))
                channel.finish(response)

    run.start(work, f"mcp-request-{request_id}")
    first = run.get()
    while first[0] == KEEPALIVE:  # nothing to answer yet
        first = run.get()
    if first[0] == DONE and not channel.streaming:  # nothing was streamed: the fast JSON answer
        status, headers = http_status(first[2], state.auth, modern)
        return JSONAnswer(state.server.serialize(first[2]), status, headers)
    # The handler runs on after the view: the app context it shares with the view stays until it ends
    # (handler_runs). A handler whose stream it closed (ctx.close_stream) runs on once the response is sent.
    run.outlive_view()
    return EventStreamAnswer(_post_stream(state, channel, first), run.finish)


def _respond_inline(
    state: MCPState,
    request_id: jsonrpc.RequestId,
    handle: t.Callable[[Channel], dict[str, t.Any] | None],
    quiet: bool = False,
) -> Response:
    """:func:`respond_with` for a 2026-07-28 request, its handler inline (:mod:`~flask_mcp.transport.inline_stream`)."""
    server = state.server

    def work(stream: InlineStream) -> dict[str, t.Any]:
        try:
            response = handle(stream)
        except state.store_errors as exc:
            response = jsonrpc.failure(request_id, unavailable(exc))
        if response is None:
            response = jsonrpc.failure(request_id, server.internal_error(RuntimeError("handler failed")))
        return response

    stream = InlineStream(state.settings.sse_keepalive, server.serialize)
    response = stream.run(work, here=quiet)
    if response is not None:  # nothing was streamed: the fast JSON answer
        status, headers = http_status(response, state.auth, True)
        return JSONAnswer(server.serialize(response), status, headers)
    stream.outlive_view()
    return EventStreamAnswer(stream, stream.closed)


def _post_stream(state: MCPState, channel: HTTPChannel, first: Item) -> t.Iterator[bytes]:
    keepalive = state.settings.sse_keepalive
    get = channel.run.get
    finished = False
    try:
        kind, event_id, payload = first
        # The priming event (an id and no data) lets the client resume this stream. It goes out in
        # one write with the first message: a server writes each chunk with a system call of its own.
        primer = b"" if channel.modern else sse_event(b"", f"{channel.stream_id}:0", state.settings.sse_retry_ms)
        if kind == CLOSE:
            finished = True
            if primer:
                yield primer
            return  # the client resumes with GET and Last-Event-ID
        yield primer + (_KEEPALIVE if kind == KEEPALIVE else sse_event(payload, event_id))
        while kind != DONE:
            try:
                kind, event_id, payload = get(keepalive)
            except queue.Empty:
                yield _KEEPALIVE  # nothing to send for a while: proxies and clients see the stream is alive
                continue
            if kind == CLOSE:
                finished = True
                return  # the client resumes with GET and Last-Event-ID
            # A keep-alive while the handler waits for the client.
            yield _KEEPALIVE if kind == KEEPALIVE else sse_event(payload, event_id)
        finished = True
        channel.delivered()
    finally:
        if not finished:
            # The client closed the stream before the response: in the modern era that cancels the request.
            channel.abandoned = channel.modern
            channel.abandon()
            channel.run.finish()


def resume_or_listen(
    state: MCPState, client: ClientState, last_event_id: str | None, owner: str | None = None
) -> Response:
    """The answer to GET: resume a stream after ``Last-Event-ID``, or listen to the session's stream.

    A process holds at most ``MCP_MAX_STREAMS`` of these at once; past it the
    answer is 503 with ``Retry-After`` (each open stream holds a thread).

    :param owner: the subject owning the session, to read its subscriptions again.
    """
    sock = socket_of(request.environ)  # looked at when every slot is taken (stream_slots.py)
    if not state.streams.take(sock):
        error = MCPError(
            SERVICE_UNAVAILABLE,
            f"Service Unavailable: this server holds {state.streams.limit} open streams; retry shortly",
            {"retryAfter": STREAM_RETRY_AFTER},
        )
        body = jsonrpc.encode(jsonrpc.failure(None, error))
        headers = {"Retry-After": str(STREAM_RETRY_AFTER)}
        return JSONAnswer(body, 503, headers)
    try:
        session_id = t.cast(str, client.session_id)
        events = t.cast("EventLog", state.events)
        parsed = parse_event_id(last_event_id) if last_event_id else None
        if parsed is None:
            stream, number = BROADCAST, events.last(session_id, BROADCAST)
        else:
            stream, number = parsed
        response = Response(
            stream_with_context(_tail(state, client, stream, number, owner, events.cache.cache)),
            headers=EVENT_STREAM_HEADERS,
        )
    except BaseException:
        state.streams.give_back(sock)
        raise
    # The WSGI server closes the response when the stream ends or the client goes away.
    response.call_on_close(functools.partial(state.streams.give_back, sock))
    return response


def _tail(
    state: MCPState, client: ClientState, stream: str, number: int, owner: str | None, backend: t.Any
) -> t.Iterator[bytes]:
    """Events of *stream* after *number*, as they are logged, until the stream ends.

    A stream ends with the response it carries, after ``MCP_SSE_IDLE_TIMEOUT``
    seconds without an event or ``MCP_SSE_MAX_LIFETIME`` in all (the client
    reconnects with ``Last-Event-ID`` and loses nothing), or with an error
    event when the store stops answering. It reads the store only when the
    process's watcher (:class:`~flask_mcp.stores.waker.Waker`) says the stream's
    counter moved: an idle stream costs the store nothing.
    """
    settings = state.settings
    events = t.cast("EventLog", state.events)
    session_id = t.cast(str, client.session_id)
    counter = events.counter_key(session_id, stream)
    yield sse_event(b"", f"{stream}:{number}", settings.sse_retry_ms)
    started = last_sent = last_event = time.monotonic()
    reader = events.reader(session_id, stream, number)
    request = LostRequest.of(state, session_id, stream)
    try:
        while True:
            raw = events.cache.get(counter)  # as the watcher will see it (None before the first event)
            # Resuming far behind: replay the newest events only, not the whole history.
            for event_id, message in reader.read(event_count(raw), time.monotonic(), settings.sse_replay_max):
                if stream == BROADCAST and not _concerns(state, client, message, owner):
                    continue
                yield sse_event(jsonrpc.encode(message), event_id)
                last_sent = last_event = time.monotonic()
                if stream != BROADCAST and "method" not in message:
                    return  # the request's response: its stream is complete
            now = time.monotonic()
            watched = {counter: raw}
            if request is not None:
                verdict = request.look(now, reader.behind)
                if verdict is not None:
                    if verdict:
                        yield sse_event(jsonrpc.encode(request.failure()))
                    return  # lost, or cancelled: nothing more will come
                watched[request.marker] = request.present
            ends = min(started + settings.sse_max_lifetime, last_event + settings.sse_idle_timeout)
            if now >= ends:
                return  # idle or old: the client reconnects with Last-Event-ID
            timeout = min(ends, last_sent + settings.sse_keepalive) - now
            if reader.behind:
                timeout = min(timeout, settings.sse_poll_interval)  # an event is on its way: look again soon
            if request is not None and request.missing_since is not None:
                timeout = min(timeout, max(request.missing_since + GAP_GRACE - now, settings.sse_poll_interval))
            woken = state.waker.wait(backend, watched, timeout)
            if state.waker.closed:
                return  # the app is shut down: the client resumes elsewhere
            if not woken and time.monotonic() - last_sent >= settings.sse_keepalive:
                yield _KEEPALIVE
                last_sent = time.monotonic()
    except state.store_errors as exc:
        # The store is down: end the stream in bounded time, saying why; the client retries later.
        yield sse_event(jsonrpc.encode(jsonrpc.failure(None, unavailable(exc))))


def _concerns(state: MCPState, client: ClientState, message: dict[str, t.Any], owner: str | None) -> bool:
    """Resource updates go only to sessions that subscribed to the URI."""
    if message.get("method") != "notifications/resources/updated":
        return True
    session_id = t.cast(str, client.session_id)
    current = state.sessions.load(session_id, owner) if state.sessions is not None else None
    return current is not None and message.get("params", {}).get("uri") in current.subscriptions
