"""How a handler that talks back runs beside the response that carries its messages.

A handler that takes a :class:`~flask_mcp.Context` may send notifications and
requests while it runs, and the response streams them as they come. The
handler and the response take turns in one of two ways:

:class:`InlineRun` (the default)
    The handler runs in a greenlet of the request's own thread. Each message
    switches to the response, which hands it to the WSGI server and switches
    back. No thread is started and no lock is waited on, so a streamed call
    costs about what streaming its events costs. While the handler waits for
    the client's answer it lets the stream send its keep-alives; while it
    computes, the stream is silent.

:class:`ThreadRun` (``MCP_STREAM_THREADS = True``)
    The handler runs on a thread of its own and hands each message over
    through a queue. The stream sends keep-alives whatever the handler does,
    and messages the handler sends from threads of its own go out at once;
    each call pays for a thread and the handoffs between the two.

Either way the handler sees the request. Inline, it runs in the view's app
context (its ``g`` is the view's, as a plain tool's is); once its answer is a
stream, that context's teardown waits for the handler's end, as Flask's
:func:`~flask.stream_with_context` makes it wait for a stream's. On a thread,
the handler has an app context of its own, torn down when it ends.
"""

from __future__ import annotations

import collections
import contextvars
import functools
import logging
import math
import queue
import threading
import time
import typing as t

import greenlet
from flask import copy_current_request_context
from flask.globals import _cv_app, _cv_request

if t.TYPE_CHECKING:
    from flask.ctx import AppContext

__all__ = [
    "CLOSE",
    "DONE",
    "KEEPALIVE",
    "MESSAGE",
    "HandlerRun",
    "InlineRun",
    "Item",
    "KeptContext",
    "ThreadRun",
    "handler_run",
    "left_unfinished",
    "read_in_another_thread",
    "take_runner",
]

logger = logging.getLogger("flask_mcp")

#: The handler's response: the last item of a run.
DONE = "done"
#: A notification or a server-to-client request.
MESSAGE = "message"
#: The live stream ends here; whatever follows waits in the event log.
CLOSE = "close"
#: The handler waits: a keep-alive comment may go out meanwhile.
KEEPALIVE = "keep-alive"
#: What a handler gives its response: (kind, event id, JSON-RPC message).
Item = tuple[str, str | None, t.Any]
_PAUSE: Item = (KEEPALIVE, None, None)
#: What a runner hands its reader when the handler's run is over.
_ENDED = object()


def read_in_another_thread() -> RuntimeError:
    """The error of an inline handler's response read in another thread than the request's (no greenlet follows)."""
    return RuntimeError(
        "this WSGI server reads the response in another thread than the request's: set MCP_STREAM_THREADS = True"
    )


def left_unfinished() -> None:
    """Say that an inline handler's response was closed in another thread, so its handler never ends."""
    logger.error("MCP: a streamed handler was left unfinished: its response was closed in another thread")


class KeptContext:
    """The view's app context, pushed once more for an inline handler that outlives the view.

    :meth:`keep` is called in the view, :meth:`release` in the response once
    the handler ended: a context variable's tokens are reset in the context
    they were made in, the request's. Flask's pop at the view's end then
    leaves the context to the handler, and its teardown comes after the
    handler's last line, as :func:`~flask.stream_with_context` makes a
    stream's teardown wait.
    """

    __slots__ = ("_context",)

    def __init__(self) -> None:
        self._context: AppContext | None = None

    def keep(self) -> None:
        """Push the current app context once more, if there is one (once)."""
        if self._context is None:
            context = _cv_app.get(None)
            if context is not None:
                context.push()
                self._context = context

    def release(self) -> None:
        """Pop it again: its teardown, when the view already ended."""
        context, self._context = self._context, None
        if context is not None:
            context.pop()


class HandlerRun(t.Protocol):
    """What a streamed handler and its response share: the handler puts, the response gets."""

    def start(self, work: t.Callable[[], None], name: str) -> None:
        """Begin running *work* (the handler and its response), named *name* where names show."""

    def put(self, item: Item, last: bool = False) -> None:
        """Hand *item* to the response; *last*: nothing follows it."""

    def get(self, timeout: float | None = None) -> Item:
        """The next item; :class:`queue.Empty` after *timeout* seconds without one."""

    def pause(self) -> None:
        """From a waiting or looking handler: let the response send a keep-alive if one is due."""

    def finish(self) -> None:
        """From the response, which takes nothing more: let the handler run to its end."""

    def outlive_view(self) -> None:
        """From the view, whose answer is a stream: keep what the handler shares with it until the handler ends."""


class ThreadRun:
    """The handler on a thread of its own, its items handed over through a queue."""

    def __init__(self) -> None:
        self.items: queue.Queue[Item] = queue.Queue()

    def start(self, work: t.Callable[[], None], name: str) -> None:
        """Start *work* on a daemon thread, in a copy of the request context."""
        target = _in_request_variables(copy_current_request_context(work))
        threading.Thread(target=target, name=name, daemon=True).start()

    def put(self, item: Item, last: bool = False) -> None:
        """Queue *item*, from any thread."""
        self.items.put(item)

    def get(self, timeout: float | None = None) -> Item:
        """The next queued item, waiting at most *timeout* seconds."""
        return self.items.get(timeout=timeout)

    def pause(self) -> None:
        """Nothing: the response sends keep-alives while it waits on the queue."""

    def finish(self) -> None:
        """Nothing: the thread runs to its end on its own."""

    def outlive_view(self) -> None:
        """Nothing: the thread's contexts are its own."""


class InlineRun:
    """The handler in a greenlet of the request's thread, switching to its response at each item.

    Items put from another thread (a handler's own worker threads) cannot
    switch: they wait in order and go out when the handler next gives way.
    The handler runs in the view's app context; once the view's answer is a
    stream (:meth:`outlive_view`), the context is pushed once more, so that
    the view's end does not tear it down, and popped in the response once the
    handler ended: its teardown comes after the handler's last line.
    The greenlet is one of the thread's runners (:func:`take_runner`): it runs
    one handler after another, so that a call does not pay for a greenlet's
    start (a stack of its own for Python's frames, mapped and unmapped).

    :param keepalive: seconds without a turn after which :meth:`pause` gives the response one.
    """

    def __init__(self, keepalive: float = 15.0) -> None:
        self.keepalive = keepalive
        #: When the response is next owed a turn, if the handler pauses.
        self.due = math.inf
        self.thread = threading.get_ident()
        self.greenlet: greenlet.greenlet | None = None
        #: The greenlet that reads the items: the view's, then the response's.
        self.reader = greenlet.getcurrent()
        self.foreign: collections.deque[Item] = collections.deque()
        self.last: Item | None = None
        #: The handler's run, until its runner is first switched to.
        self._job: t.Callable[[], greenlet.greenlet] | None = None
        #: Set when the handler's run is over: its runner serves another request, or has ended.
        self.ended = False
        #: The view's app context, kept while the handler outlives the view.
        self._kept = KeptContext()

    def start(self, work: t.Callable[[], None], name: str) -> None:
        """Take a runner for *work*, in the request's context variables; :meth:`get` starts it."""
        run = self.greenlet = take_runner()
        run.gr_context = contextvars.copy_context()
        run.parent = self.reader  # should the run ever raise, the request gets the exception
        self._job = functools.partial(self._run, work)

    def _run(self, work: t.Callable[[], None]) -> greenlet.greenlet:
        self.due = time.monotonic() + self.keepalive
        try:
            work()
        finally:
            self.ended = True
        return self.reader

    def outlive_view(self) -> None:
        """Keep the view's app context for the handler (:class:`KeptContext`); :meth:`get` and :meth:`finish`
        release it once the handler ended."""
        if not self.ended:
            self._kept.keep()

    def _resume(self) -> t.Any:
        """Switch to the handler until it gives an item, or ends (:attr:`ended`)."""
        run: greenlet.greenlet = self.greenlet  # type: ignore[assignment]  # started: start() took a runner
        self.reader = greenlet.getcurrent()
        job = self._job
        if job is None:
            return run.switch()
        self._job = None
        return run.switch(job)

    def put(self, item: Item, last: bool = False) -> None:
        """Switch to the reader with *item* (the last one is kept for it: the handler ends next)."""
        if greenlet.getcurrent() is not self.greenlet:
            self.foreign.append(item)  # deque appends are thread-safe
        elif last:
            self.last = item
        elif self.foreign:  # items of other threads came first: they go first
            self.foreign.append(item)
            self._switch(self.foreign.popleft())
        else:
            self._switch(item)

    def _switch(self, item: Item) -> None:
        self.reader.switch(item)
        self.due = time.monotonic() + self.keepalive

    def get(self, timeout: float | None = None) -> Item:
        """Run the handler until its next item (*timeout* does not apply: the handler pauses itself)."""
        if self.foreign:
            return self.foreign.popleft()
        if not self.ended:
            if threading.get_ident() != self.thread:
                raise read_in_another_thread()
            try:
                item: Item = self._resume()
            finally:
                if self.ended:
                    self._kept.release()
            if not self.ended:
                return item
            if self.foreign:  # put by other threads before the handler's end
                return self.foreign.popleft()
        if self.last is None:
            raise RuntimeError("the handler ended without its response")
        item, self.last = self.last, None
        return item

    def pause(self) -> None:
        """Give the reader a turn to send a keep-alive, once :attr:`keepalive` seconds passed without one."""
        if time.monotonic() >= self.due and greenlet.getcurrent() is self.greenlet:
            self._switch(_PAUSE)

    def finish(self) -> None:
        """Run the handler to its end, its further items unread (the event log keeps them)."""
        if self.greenlet is None or self.ended:
            return
        if threading.get_ident() != self.thread:
            left_unfinished()
            return
        try:
            while not self.ended:
                self._resume()
        finally:
            if self.ended:
                self._kept.release()


#: Idle runners a thread keeps at most (a server that runs many requests in one thread, gevent's,
#: keeps as many as ran at once, up to this).
MAX_IDLE_RUNNERS = 8
_idle = threading.local()


def take_runner() -> greenlet.greenlet:
    """An idle runner of this thread, or a new one: switch to it with the job to run (see :func:`_serve`)."""
    runners: list[greenlet.greenlet] | None = getattr(_idle, "runners", None)
    if runners:
        return runners.pop()
    return greenlet.greenlet(_serve)


def _serve(job: t.Callable[[], greenlet.greenlet]) -> object:
    """A runner's life: run a handler, wait idle for the next one (or end, when enough wait already)."""
    while True:
        reader = job()
        # Idle, it holds nothing of the request it ran (its handler, its context variables): that
        # would live on until the next request, and grow the collector's older generations.
        del job
        current = greenlet.getcurrent()
        current.gr_context = None
        runners: list[greenlet.greenlet] | None = getattr(_idle, "runners", None)
        if runners is None:
            runners = _idle.runners = []
        if len(runners) >= MAX_IDLE_RUNNERS:
            return _ENDED
        runners.append(current)
        job = reader.switch(_ENDED)


def handler_run(threads: bool, keepalive: float) -> HandlerRun:
    """A :class:`ThreadRun` when *threads* (``MCP_STREAM_THREADS``), else an :class:`InlineRun`.

    :param keepalive: ``MCP_SSE_KEEPALIVE``.
    """
    return ThreadRun() if threads else InlineRun(keepalive)


def _in_request_variables(work: t.Callable[[], None]) -> t.Callable[[], None]:
    """*work*, to run in another thread with the request's context variables but Flask's own.

    The handler's trace is the request's (a tracing instrumentation's current
    span), as it would be in the request's own thread. Flask's app and request
    contexts are left out: *work* pushes its own (``copy_current_request_context``),
    and one shared with the request's thread would be torn down under it when
    the request ends (Flask-SQLAlchemy's session, keyed by the app context, closed
    while the handler still runs).
    """
    variables = contextvars.copy_context()
    variables.run(_cv_app.set, None)  # type: ignore[arg-type]
    variables.run(_cv_request.set, None)  # type: ignore[arg-type]
    return functools.partial(variables.run, work)
