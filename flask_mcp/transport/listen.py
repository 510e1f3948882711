"""``subscriptions/listen`` over HTTP (2026-07-28): a long-lived event stream of change notifications.

The core accepts the filter; this module holds the stream open: first
``notifications/subscriptions/acknowledged``, then every change notification
the filter asks for, published by any process that shares the store
(``notifications/*/list_changed`` from run-time registration,
``notifications/resources/updated`` from :meth:`flask_mcp.MCP.notify_resource_updated`),
with keep-alive comments while nothing happens. After
``MCP_LISTEN_MAX_LIFETIME`` seconds the stream ends with its result, and the
client listens again. A client that closes the stream cancels it; the
thread serving it is released at its next wake-up.

Streams count against ``MCP_MAX_STREAMS`` like the handshake era's GET streams.
"""

from __future__ import annotations

import functools
import time
import typing as t

from flask import Response, request, stream_with_context

from ..core.client import ClientState
from ..core.listen import Subscription
from ..protocol import jsonrpc
from ..protocol.jsonrpc import SERVICE_UNAVAILABLE, MCPError
from ..stores.events import BROADCAST, event_count
from ..stores.failures import unavailable
from .answer import EVENT_STREAM_HEADERS
from .deadline import socket_of
from .status import json_answer
from .streaming import STREAM_RETRY_AFTER, sse_event

if t.TYPE_CHECKING:
    from ..binding.state import MCPState
    from ..policies.principal import Principal
    from ..stores.events import EventLog

__all__ = ["IDLE", "follow", "respond", "subscription_of"]


def subscription_of(
    state: MCPState, message: jsonrpc.Request, principal: Principal | None
) -> tuple[Subscription | None, dict[str, t.Any] | None]:
    """The subscription a listen request asks for, or the error response refusing it."""
    response = t.cast(dict[str, t.Any], state.server.handle(message, ClientState(), principal=principal))
    if "error" in response:
        return None, response
    if state.events is None:
        error = MCPError(jsonrpc.METHOD_NOT_FOUND, "Method not found: subscriptions/listen needs a store")
        return None, jsonrpc.failure(message.id, error)
    return Subscription(message.id, response["result"]["notifications"]), None


def respond(state: MCPState, message: jsonrpc.Request, principal: Principal | None) -> Response:
    """Answer a (checked) modern ``subscriptions/listen`` request with its stream, or an error."""
    subscription, refusal = subscription_of(state, message, principal)
    if subscription is None:
        return json_answer(state, t.cast(dict[str, t.Any], refusal), modern=True)
    sock = socket_of(request.environ)  # looked at when every slot is taken (stream_slots.py)
    if not state.streams.take(sock):
        error = MCPError(
            SERVICE_UNAVAILABLE,
            f"Service Unavailable: this server holds {state.streams.limit} open streams; retry shortly",
            {"retryAfter": STREAM_RETRY_AFTER},
        )
        return json_answer(state, jsonrpc.failure(message.id, error), modern=True)
    try:
        events = t.cast("EventLog", state.events)
        start = events.last(None, BROADCAST)
        stream = Response(
            stream_with_context(_stream(state, subscription, events, start)),
            headers=EVENT_STREAM_HEADERS,
        )
    except BaseException:
        state.streams.give_back(sock)
        raise
    # The WSGI server closes the response when the stream ends or the client goes away.
    stream.call_on_close(functools.partial(state.streams.give_back, sock))
    return stream


#: What :func:`follow` yields while nothing happens: time for a keep-alive (and to notice a gone client).
IDLE = None


def follow(
    state: MCPState,
    subscription: Subscription,
    events: EventLog,
    number: int,
    stopped: t.Callable[[], bool] = bool,
    tick: float | None = None,
) -> t.Iterator[dict[str, t.Any] | None]:
    """The messages of one listen stream, for any transport to write.

    The acknowledgement, then every wanted broadcast after event *number*
    (tagged), :data:`IDLE` every ``MCP_SSE_KEEPALIVE`` seconds without one,
    and the closing response once ``MCP_LISTEN_MAX_LIFETIME`` has passed. It
    reads the store only when the process's watcher says the broadcast
    counter moved. A store that stops answering ends it with an error response.

    :param stopped: asked at every wake-up; true ends the stream without a response (cancellation).
    :param tick: the longest wait between two looks at *stopped* (default: the keep-alive interval).
    """
    settings = state.settings
    counter = events.counter_key(None, BROADCAST)
    yield subscription.acknowledgement()
    last_sent = time.monotonic()
    ends = last_sent + settings.listen_max_lifetime
    reader = events.reader(None, BROADCAST, number)
    try:
        while not stopped() and not state.waker.closed:  # closed: the app is shut down
            raw = events.cache.get(counter)  # as the watcher will see it
            for _event_id, message in reader.read(event_count(raw), time.monotonic(), settings.sse_replay_max):
                if subscription.wants(message):
                    yield subscription.tagged(message)
                    last_sent = time.monotonic()
            now = time.monotonic()
            if now >= ends:
                yield subscription.closing()
                return
            timeout = min(ends, last_sent + settings.sse_keepalive) - now
            if tick is not None:
                timeout = min(timeout, tick)
            if reader.behind:
                timeout = min(timeout, settings.sse_poll_interval)  # an event is on its way: look again soon
            if not state.waker.wait(events.cache.cache, {counter: raw}, timeout) and (
                time.monotonic() - last_sent >= settings.sse_keepalive
            ):
                yield IDLE
                last_sent = time.monotonic()
    except state.store_errors as exc:
        # The store is down: end the stream in bounded time, saying why; the client listens again later.
        yield jsonrpc.failure(subscription.request_id, unavailable(exc))


def _stream(state: MCPState, subscription: Subscription, events: EventLog, number: int) -> t.Iterator[bytes]:
    """:func:`follow` as Server-Sent Events; a client that went away shows at the next write."""
    for message in follow(state, subscription, events, number):
        # A comment keeps proxies from closing an idle stream.
        yield b": keep-alive\n\n" if message is IDLE else sse_event(jsonrpc.encode(message))
