"""A 2026-07-28 request whose handler talks back, streamed from a greenlet of the request's thread.

A handshake-era stream keeps an event log and an in-flight marker, so that a
client may resume it or cancel its request from anywhere
(:mod:`~flask_mcp.transport.channel`, :mod:`~flask_mcp.transport.streaming`).
A 2026-07-28 stream keeps neither: its request stands alone, nothing resumes
the stream, and closing it cancels the request. What is left is the
handler's messages handed to the response as they come, and this module is
that alone: one object is the handler's channel, runs it (in one of the
thread's runners, :func:`~flask_mcp.transport.handler_runs.take_runner`) and
is the response's body, in as few steps as a view streaming the same events
takes, since this is the path a call that reports progress takes on every
request.

The view runs the handler until its first message. A handler that sends
none is answered with plain JSON; otherwise the answer is an event stream
that starts with that message, and the server's reading of each next event
runs the handler until it sends another. Messages of the handler's own
threads cannot switch to the response: they wait, in order, for the next
event. A handler that looks at ``ctx.cancelled`` gives the stream a turn
for a keep-alive once ``MCP_SSE_KEEPALIVE`` seconds passed without an event,
so a client that left is seen. As on the handshake era's inline runs, the
handler shares the view's app context, kept until the handler ends once the
answer is a stream (:meth:`~flask_mcp.transport.handler_runs.InlineRun.outlive_view`).

``MCP_STREAM_THREADS = True`` runs 2026-07-28 handlers on threads of their
own instead, the handshake era's way.
"""

from __future__ import annotations

import collections
import contextvars
import functools
import math
import threading
import typing as t
from time import monotonic

import greenlet

from ..protocol import jsonrpc
from .handler_runs import KeptContext, left_unfinished, read_in_another_thread, take_runner

__all__ = ["InlineStream"]

#: What a handler's run switches to the response with when it gives the stream a turn for a keep-alive.
_TURN = object()
#: A comment: proxies and clients see that a stream with nothing to send is alive.
_KEEPALIVE = b": keep-alive\n\n"


def _event(data: bytes) -> bytes:
    """One SSE event carrying a JSON-RPC message (a 2026-07-28 stream has no event ids)."""
    return b"event: message\ndata: " + data + b"\n\n"


class InlineStream:
    """The channel, the run and the response's body of one streamed 2026-07-28 request.

    :param keepalive: ``MCP_SSE_KEEPALIVE``: seconds without an event after
        which a handler looking at ``ctx.cancelled`` gives the stream a turn.
    :param serialize: the server's encoder of a response envelope.
    """

    #: Set by the handler's first message: from then on the answer is an event stream.
    streaming = False
    #: Set when the client closed the stream before the response: the request is cancelled.
    abandoned = False

    def __init__(self, keepalive: float, serialize: t.Callable[[dict[str, t.Any]], bytes]) -> None:
        self.keepalive = keepalive
        self._serialize = serialize
        #: When the stream is next owed a turn, should the handler look at ``ctx.cancelled``.
        self.due = math.inf
        self.thread = threading.get_ident()
        #: The greenlet that reads: the view's, then the response's.
        self.reader = greenlet.getcurrent()
        self.runner: greenlet.greenlet | None = None
        #: Set when the handler's run is over (its runner may serve another request already).
        self.ended = False
        #: The response: its envelope while nothing was streamed, its JSON once something was.
        self.final: t.Any = None
        #: Messages of the handler's own threads, waiting for the next event (their JSON).
        self.foreign: collections.deque[bytes] = collections.deque()
        #: Orders the messages of the handler's threads against the choice of JSON or a stream.
        self.lock = threading.Lock()
        self._first: bytes | None = None
        self._kept = KeptContext()

    # What the handler's Context sends through (core.context.Channel).

    def notify(self, method: str, params: dict[str, t.Any]) -> None:
        """Send a notification: an event now, or from another thread, with the next one."""
        data = jsonrpc.encode({"jsonrpc": "2.0", "method": method, "params": params})
        if greenlet.getcurrent() is not self.runner:
            with self.lock:
                if self.final is None and not self.ended:
                    self.streaming = True
                    self.foreign.append(data)  # a message after the response has no stream left
            return
        self.streaming = True
        if self.foreign:  # the handler's threads spoke first: theirs go first
            self.foreign.append(data)
            data = self.foreign.popleft()
        self.reader.switch(data)
        self.due = monotonic() + self.keepalive

    def request(self, method: str, params: dict[str, t.Any], timeout: float) -> dict[str, t.Any]:
        """Never sent: a 2026-07-28 handler asks with an input_required round (:meth:`unavailable`)."""
        raise RuntimeError("a 2026-07-28 request sends no requests to its client")

    def unavailable(self) -> str | None:
        """Requests to the client need a session: its answer comes back on another POST."""
        return "a session (the server is stateless)"

    def cancelled(self) -> bool:
        """Whether the client closed the stream; gives the stream a turn for a keep-alive when one is due."""
        if monotonic() >= self.due and greenlet.getcurrent() is self.runner:
            self.reader.switch(_TURN)
            self.due = monotonic() + self.keepalive
        return self.abandoned

    def close_stream(self) -> None:
        """Nothing: a 2026-07-28 stream that closed would cost the call its answer (nothing resumes it)."""

    # The run, from the view.

    def run(self, handle: t.Callable[[InlineStream], dict[str, t.Any]], here: bool = False) -> dict[str, t.Any] | None:
        """Run *handle* until its first message; its response when it sent none (then it has ended).

        Otherwise the answer is a stream: :meth:`outlive_view`, then this object is its body.

        :param here: run it to its end in the view, as a handler without a context runs: for a
            request that asked for nothing it could send (:func:`~flask_mcp.core.context.notifications_asked`).
            Whatever it sends all the same waits, and the stream carries it with the response.
        """
        if here:
            self._run(handle)
            return None if self.streaming else t.cast(dict[str, t.Any], self.final)
        runner = self.runner = take_runner()
        runner.gr_context = contextvars.copy_context()
        runner.parent = self.reader  # should the run ever raise, the request gets the exception
        data = runner.switch(functools.partial(self._run, handle))
        while data is _TURN:  # a keep-alive before anything was answered: nothing to send it on yet
            data = runner.switch()
        if self.ended:
            if self.streaming:  # only the handler's threads spoke: the stream starts with theirs
                return None
            return t.cast(dict[str, t.Any], self.final)
        self._first = data
        return None

    def _run(self, handle: t.Callable[[InlineStream], dict[str, t.Any]]) -> greenlet.greenlet:
        self.due = monotonic() + self.keepalive
        try:
            response = handle(self)
            with self.lock:
                self.final = self._serialize(response) if self.streaming else response
        finally:
            self.ended = True
        return self.reader

    def outlive_view(self) -> None:
        """From the view, whose answer is a stream: keep its app context for the handler, whose end releases it
        (:class:`~flask_mcp.transport.handler_runs.KeptContext`)."""
        if not self.ended:
            self._kept.keep()

    # The response's body, read by the server.

    def __iter__(self) -> InlineStream:
        return self

    def __next__(self) -> bytes:
        first = self._first
        if first is not None:
            self._first = None
            return _event(first)
        if self.foreign:
            return _event(self.foreign.popleft())
        if not self.ended:
            data = self._resume()
            if not self.ended:
                # _event's, written out: this is the step of every event.
                return _KEEPALIVE if data is _TURN else b"event: message\ndata: " + data + b"\n\n"
            if self.foreign:  # sent by the handler's threads before its response
                return _event(self.foreign.popleft())
        final, self.final = self.final, None
        if final is None or self.abandoned:
            raise StopIteration
        return _event(final)

    def _resume(self) -> t.Any:
        """Switch to the handler until it sends something, or ends; pop the kept context once it ended."""
        if threading.get_ident() != self.thread:
            raise read_in_another_thread()
        self.reader = greenlet.getcurrent()
        try:
            return t.cast(greenlet.greenlet, self.runner).switch()
        finally:
            if self.ended:
                self._kept.release()

    def closed(self) -> None:
        """The server is done with the response: before the response, the client left, which cancels the request.

        The handler then runs to its end, its further messages unsent (``ctx.cancelled`` tells it).
        """
        if self.ended:
            self._kept.release()
            return
        if threading.get_ident() != self.thread:
            left_unfinished()
            return
        self.abandoned = True
        while not self.ended:
            self._resume()
