"""The way back to the client of a POST whose handler talks back while it runs.

An :class:`HTTPChannel` hands each message of the handler to its response
(:mod:`~flask_mcp.transport.streaming`), which streams it as an event, and
keeps it in the session's event log for a client that resumes the stream.
Answers to server-to-client requests arrive on other POSTs, in any thread,
process or host; they travel through the session cache
(:class:`~flask_mcp.stores.mailbox.Mailbox`), never through process memory.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import secrets
import threading
import typing as t
from time import monotonic

from ..core.context import NoAnswer
from ..policies.ratelimit import caller_key
from ..protocol import jsonrpc
from ..protocol.jsonrpc import MCPError
from ..stores.events import DELIVERED_GRACE
from .handler_runs import CLOSE, DONE, MESSAGE, HandlerRun, handler_run

if t.TYPE_CHECKING:
    from ..binding.state import MCPState
    from ..core.client import ClientState
    from ..policies.principal import Principal
    from ..stores.events import EventLog
    from ..stores.mailbox import InFlight, Mailbox

__all__ = ["LOG_DELAY", "REQUEST_CANCELLED", "REQUEST_TIMEOUT", "TOO_MANY_WAITING", "HTTPChannel"]

logger = logging.getLogger("flask_mcp")

#: Error code when the client did not answer a server-to-client request in time.
REQUEST_TIMEOUT = -32001
#: Error code when the client cancelled the request while a handler waited for its answer.
REQUEST_CANCELLED = -32800
#: Error code of a request to the client not sent: the client has too many waiting for its answers.
TOO_MANY_WAITING = -32003
#: Seconds after a batch written to the event log before a streamed message makes the next one
#: at once: until then messages wait in memory for the handler's next message, its next look at
#: ``ctx.cancelled``, a break of the stream or the response (a resumed stream sees them that late,
#: after a break the server did not notice).
LOG_DELAY = 1.0


class _StreamNames:
    """Names of this process's streams: a random prefix drawn once per process, then a count.

    A name need only be unique (a client resumes a stream of its own session
    alone), so it costs no draw from the system's random source per stream:
    that is a system call, which gives the interpreter's lock away on a busy
    worker. A forked worker draws its own prefix.
    """

    def __init__(self) -> None:
        self.reseed()
        os.register_at_fork(after_in_child=self.reseed)

    def reseed(self) -> None:
        self.prefix = secrets.token_urlsafe(9)
        self.count = itertools.count(1)

    def next(self) -> str:
        return f"{self.prefix}{next(self.count)}"


_stream_names = _StreamNames()


class HTTPChannel:
    """The :class:`~flask_mcp.core.context.Channel` of one POST handled with SSE.

    Every message is handed to the live stream, if it is still open, and
    kept in the session's event log, so that the stream can be resumed with
    ``Last-Event-ID`` in any process. The log gets the messages in batches,
    one store write each: at once for a request to the client (the handler
    waits for its answer), when the stream closes or breaks, with the
    response, and otherwise with the handler's first message (or look at
    ``ctx.cancelled``) :data:`LOG_DELAY` seconds after the last batch. A call
    that streams a few messages and its response within a second writes its
    log once.

    :param run: how the handler and its response take turns (a new :class:`InlineRun` when not given).
    :param principal: the authenticated caller, whose questions these are.
    """

    #: Set when the client went away before the response (modern era: that is cancellation).
    abandoned = False
    #: Set by the first message: from then on the answer is an event stream.
    streaming = False
    #: The request's in-flight marker, when held (a handshake session's request, by its response).
    held: InFlight | None = None
    #: The stream's name in its event ids (a stream without a log has none: nothing can resume it).
    stream_id = ""
    # What only a stream with a log keeps (the rest of it set by __init__).
    #: Messages streamed but not logged yet: (number, JSON).
    _pending: list[tuple[int, bytes]]
    _last_number = 0
    #: Whether the event log knows which request this stream carries.
    _begun = False
    #: Whether the client still reads the live stream: once not, every message is logged at once.
    _live = True
    #: The last event logged for the events' whole lifetime (the rest went with the response).
    _kept_to = 0
    #: The batch logged with the response, for the short :data:`DELIVERED_GRACE` (kept to log it
    #: again for the events' lifetime, should the stream break before the client has it).
    _final: tuple[list[tuple[int, bytes]], t.Any] | None = None

    def __init__(
        self,
        state: MCPState,
        client: ClientState,
        request_id: jsonrpc.RequestId,
        modern: bool = False,
        run: HandlerRun | None = None,
        principal: Principal | None = None,
    ) -> None:
        self.state = state
        #: The authenticated caller: at most ``MCP_MAX_WAITING_PER_CALLER`` of its (or, anonymous,
        #: its address's) handlers wait for its answers in this process.
        self.principal = principal
        self.client = client
        self.request_id = request_id
        #: A modern-era stream: no event ids (nothing can be resumed), and closing it cancels the request.
        self.modern = modern
        self.run = run if run is not None else handler_run(state.settings.stream_threads, state.settings.sse_keepalive)
        # Guards the switch: the final response must know whether a stream began.
        self.lock = threading.RLock()
        #: Whether messages go to an event log at all (a handshake-era stream of a session).
        self._logs = not modern and state.events is not None and client.session_id is not None
        if not modern:  # a handshake-era stream has event ids, and a priming event
            self.stream_id = _stream_names.next()
        if self._logs:
            self._numbers = itertools.count(1)
            self._pending = []
            #: When the pending messages go to the log at the latest (at the handler's next message).
            self._log_due = monotonic() + LOG_DELAY

    def send(self, kind: str, message: dict[str, t.Any], last: bool = False) -> None:
        """Hand *message* to the stream under the next event id of this stream, and to the event log."""
        self._send(kind, jsonrpc.encode(message), last)

    def _send(self, kind: str, data: bytes, last: bool, log_now: bool = False) -> None:
        """Send *data*, a message's JSON; *log_now*: into the log before it goes out."""
        with self.lock:
            self.streaming = True
            if not self._logs:  # nothing to resume: a modern stream has no event ids, a stateless one no log
                self.run.put((kind, None, data), last)
                return
            number = self._last_number = next(self._numbers)
            self._pending.append((number, data))
            if log_now or not self._live or monotonic() >= self._log_due:
                self._log()
            self.run.put((kind, f"{self.stream_id}:{number}", data), last)

    def _log(self, timeout: int | None = None) -> None:
        """Write the pending messages (and the note of the stream's request, the first time) in one batch.

        :param timeout: given for the batch that ends with the response of a live stream, kept
            that long as the stream's tail (:meth:`EventLog.write_many <flask_mcp.stores.events.EventLog.write_many>`).
        """
        pending, self._pending = self._pending, []
        carries = None if self._begun else self.request_id
        self._log_due = monotonic() + LOG_DELAY
        if not pending and carries is None:
            return
        try:
            t.cast("EventLog", self.state.events).write_many(
                self.client.session_id, self.stream_id, pending, carries, timeout, ends=timeout is not None
            )
        except self.state.store_errors:
            # The store is down: the live stream still gets the messages (and ends with the
            # response); only resuming it later is lost.
            logger.warning("MCP store unavailable: events of stream %s not logged", self.stream_id)
            return
        self._begun = True
        if timeout is None:
            self._kept_to = self._last_number
        else:
            self._final = (pending, carries)

    def finish(self, response: dict[str, t.Any]) -> None:
        """Deliver the final response: plain JSON if nothing was streamed, else the last event.

        Either way its bytes are those of the plain answer (the server's serializer).
        A live stream's log gets the response with what is still pending, to be
        kept :data:`DELIVERED_GRACE` seconds only: enough for a client that lost
        the last bytes on the way to resume it. Should the stream break before
        it reaches the client, :meth:`abandon` keeps it for the events' lifetime.
        """
        with self.lock:
            if not self.streaming:
                self.run.put((DONE, None, response), last=True)
                return
            data = self.state.server.serialize(response)
            if not self._logs:
                self.run.put((DONE, None, data), last=True)
                return
            number = self._last_number = next(self._numbers)
            self._pending.append((number, data))
            self._log(DELIVERED_GRACE if self._live else None)
            self.run.put((DONE, f"{self.stream_id}:{number}", data), last=True)

    def delivered(self) -> None:
        """The stream reached the client whole: what was logged for longer need only outlive a lost last read."""
        with self.lock:
            if not self._kept_to:
                return  # everything went with the response, for the short grace already
            # The store is down: the entries expire with the events' lifetime instead.
            with contextlib.suppress(*self.state.store_errors):
                t.cast("EventLog", self.state.events).delivered(self.client.session_id, self.stream_id, self._kept_to)

    def abandon(self) -> None:
        """The live stream ended before the response reached the client: the log keeps everything from now on."""
        with self.lock:
            if not self._logs or not self._live:
                return
            self._live = False
            final, self._final = self._final, None
            if final is not None:  # logged for the short grace: the client may never have had it
                self._pending, self._begun = [*final[0], *self._pending], final[1] is None
            self._log()

    def notify(self, method: str, params: dict[str, t.Any]) -> None:
        """Send a notification on the event stream."""
        self.send(MESSAGE, {"jsonrpc": "2.0", "method": method, "params": params})

    def close_stream(self) -> None:
        """End the live stream now; later messages wait in the log for the client to resume."""
        with self.lock:
            if self._logs:
                self._live = False
                self._log()  # and the note of whose stream it is, for whoever resumes it
            self.streaming = True
            self.run.put((CLOSE, None, None))

    def end_without_response(self) -> None:
        """The request was cancelled: its stream ends, now and for whoever resumes it, with no response."""
        with self.lock:
            if self._logs:
                self._live = False
                self._log()
                try:
                    if self._begun:
                        t.cast("EventLog", self.state.events).end(t.cast(str, self.client.session_id), self.stream_id)
                except self.state.store_errors:
                    logger.warning("MCP store unavailable: the end of stream %s not logged", self.stream_id)
            self.streaming = True
            self.run.put((CLOSE, None, None), last=True)

    def request(self, method: str, params: dict[str, t.Any], timeout: float) -> dict[str, t.Any]:
        """Send a request on the stream and wait for the answer through the session cache.

        :raises NoAnswer: at once, nothing sent, when the caller already has
            ``MCP_MAX_WAITING_PER_CALLER`` handlers waiting in this process
            (:mod:`~flask_mcp.transport.waiting_slots`).
        """
        waiting = self.state.waiting
        # Found when first asked: most handlers never ask (the address is read from the request).
        caller = caller_key(self.principal, self.state.server.client_key)
        if not waiting.take(caller):
            raise NoAnswer(
                TOO_MANY_WAITING,
                f"{method} was not sent: this client already has {waiting.limit} requests of this server "
                "waiting for its answers; answer those first",
            )
        try:
            return self._ask(method, params, timeout)
        finally:
            waiting.give_back(caller)

    def _ask(self, method: str, params: dict[str, t.Any], timeout: float) -> dict[str, t.Any]:
        mailbox = t.cast("Mailbox", self.state.mailbox)
        session_id = t.cast(str, self.client.session_id)
        outgoing_id = f"srv-{secrets.token_urlsafe(12)}"
        mailbox.expect(session_id, outgoing_id)
        # Logged before it goes out: a client that misses it resumes the stream to answer it.
        outgoing = {"jsonrpc": "2.0", "id": outgoing_id, "method": method, "params": params}
        self._send(MESSAGE, jsonrpc.encode(outgoing), False, log_now=True)
        # While it waits, the stream sends its keep-alives (an inline handler gives it a turn).
        owner, pause = self.request_id, self.run.pause
        answer = mailbox.wait(session_id, outgoing_id, timeout, self.cancelled, owner=owner, idle=pause)
        if answer is None and self.cancelled():
            raise NoAnswer(REQUEST_CANCELLED, f"the request was cancelled while waiting for {method}")
        if answer is None:
            raise NoAnswer(REQUEST_TIMEOUT, f"the client did not answer {method} within {timeout:g} seconds")
        if answer.get("error") is not None:
            error = answer["error"]
            raise MCPError(error.get("code", jsonrpc.INTERNAL_ERROR), error.get("message", ""), error.get("data"))
        return t.cast(dict[str, t.Any], answer.get("result") or {})

    def unavailable(self) -> str | None:
        """Requests to the client need a session: its answer comes back on another POST."""
        if self.state.mailbox is None or self.client.session_id is None:
            return "a session (the server is stateless)"
        return None

    def cancelled(self) -> bool:
        """Whether ``notifications/cancelled`` arrived for this request, or its modern stream was closed."""
        # A handler looking is a handler that may give its stream a turn: a keep-alive that fails to
        # reach the client is how a modern stream's closing (its cancellation) is seen.
        self.run.pause()
        if self._logs and self._pending and monotonic() >= self._log_due:
            with self.lock:
                self._log()
        return self.was_cancelled()

    def was_cancelled(self) -> bool:
        """:meth:`cancelled`, without the stream's turn: what the handler's end looks at."""
        if self.abandoned:
            return True
        mailbox, held = self.state.mailbox, self.held
        return mailbox is not None and held is not None and mailbox.cancelled(held)
