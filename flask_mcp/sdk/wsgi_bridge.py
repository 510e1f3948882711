"""An ``httpx2`` transport that hands every request to a WSGI app, in this process.

The official SDK speaks Streamable HTTP through an ``httpx2.AsyncClient``;
given this transport, its requests reach the Flask app without a socket.
httpx2's own ``WSGITransport`` is synchronous and reads a response to its
end before returning it, which an event stream never has: a tool that
reports progress or asks the user something would hang. Here each request
runs in a thread of its own, from the call of the app to the end of its
body (so the contexts Flask pushes around a streamed body are pushed and
popped in one thread), and every chunk the app yields reaches the client as
soon as it is yielded.

A response the client closes early ends in the app the way it does behind
a real server: at the app's next write (an event or a keep-alive comment),
which then finds no reader.
"""

from __future__ import annotations

import itertools
import threading
import typing as t

import anyio
import anyio.from_thread
import anyio.lowlevel
import httpx2
from werkzeug.test import EnvironBuilder, run_wsgi_app

if t.TYPE_CHECKING:
    from _typeshed.wsgi import WSGIApplication

__all__ = ["WSGIBridge"]

#: Chunks a response may have yielded ahead of the client's reading (each further one waits).
BUFFERED_CHUNKS = 16
#: The threads that run requests are named after it (with a number).
THREAD_NAME = "mcp-sdk-request"

_numbers = itertools.count(1)


class _Head(t.NamedTuple):
    status: int
    headers: list[tuple[str, str]]


class _End:
    """The app's body has ended."""


_Item = _Head | bytes | _End | BaseException


class _Body(httpx2.AsyncByteStream):
    """The body of one response, as the app's thread yields it."""

    def __init__(self, exchange: _Exchange) -> None:
        self._exchange = exchange

    async def __aiter__(self) -> t.AsyncIterator[bytes]:
        async for item in self._exchange.receive:
            if isinstance(item, _End):
                return
            if isinstance(item, BaseException):
                raise item
            if isinstance(item, bytes):
                yield item

    async def aclose(self) -> None:
        await self._exchange.close()


class _Exchange:
    """One request handed to the app in a thread of its own, and its way back.

    The thread hands each item to the event loop that asked
    (``anyio.from_thread``), which then has to run. Once the client closes
    the response, no hand-off starts any more, and :meth:`close` waits on
    the loop for the one under way: a thread never waits on a loop that
    stopped running (between two tests, say) for a reader that is gone.
    """

    def __init__(self, app: WSGIApplication, environ: dict[str, t.Any]) -> None:
        self.app = app
        self.environ = environ
        self.send, self.receive = anyio.create_memory_object_stream[_Item](BUFFERED_CHUNKS)
        self.token = anyio.lowlevel.current_token()
        self.thread = threading.Thread(target=self.run, name=f"{THREAD_NAME}-{next(_numbers)}", daemon=True)
        self._lock = threading.Lock()
        self._closed = False
        self._handing = 0
        self._handed: anyio.Event | None = None

    def put(self, item: _Item) -> bool:
        """Hand *item* to the client (in the app's thread); ``False`` once nobody reads."""
        with self._lock:
            if self._closed:
                return False
            self._handing += 1
        try:
            anyio.from_thread.run(self._deliver, item, token=self.token)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, RuntimeError):
            # RuntimeError: the event loop that asked is gone.
            with self._lock:
                self._closed = True
            return False
        return True

    async def _deliver(self, item: _Item) -> None:
        try:
            await self.send.send(item)
        finally:
            with self._lock:
                self._handing -= 1
                handed = self._handed if self._handing == 0 else None
            if handed is not None:
                handed.set()

    async def close(self) -> None:
        """Nobody reads any more (on the event loop): end the hand-offs; the app's thread ends at its next chunk."""
        with self._lock:
            self._closed = True
            handed = self._handed = anyio.Event() if self._handing else None
        await self.receive.aclose()  # a hand-off under way now fails at once
        if handed is not None:
            await handed.wait()
        self.send.close()

    def run(self) -> None:
        try:
            body, status, headers = run_wsgi_app(self.app, self.environ, buffered=False)
        except BaseException as exc:  # the app raised (TESTING propagates exceptions): the caller sees it
            self.put(exc)
            return
        try:
            if not self.put(_Head(int(status.split(" ", 1)[0]), list(headers.items()))):
                return
            for chunk in body:
                if chunk and not self.put(chunk):
                    return
            self.put(_End())
        except BaseException as exc:
            self.put(exc)
        finally:
            close = getattr(body, "close", None)
            if close is not None:
                close()  # WSGI: the server closes the body, which ends Flask's contexts and stream hooks


class WSGIBridge(httpx2.AsyncBaseTransport):
    """Serve an ``httpx2.AsyncClient``'s requests from *app*, without a socket.

    :param app: a WSGI application (a Flask app, or its ``wsgi_app`` behind middleware).
    :param environ: more WSGI environ keys for every request (the client's address,
        ``flask_mcp.testing.principal``...).
    """

    def __init__(self, app: WSGIApplication, *, environ: t.Mapping[str, t.Any] | None = None) -> None:
        self.app = app
        self.environ = dict(environ or {})

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Run *request* through the app in a thread; the response as soon as its status and headers are known."""
        content = await request.aread()
        url = request.url
        builder = EnvironBuilder(
            path=url.path,
            base_url=f"{url.scheme}://{url.netloc.decode('ascii')}",
            query_string=url.query.decode("ascii"),
            method=request.method,
            headers=[(key, value) for key, value in request.headers.multi_items() if key.lower() != "host"],
            data=content,
            multithread=True,
            environ_overrides=self.environ,
        )
        try:
            environ = builder.get_environ()
        finally:
            builder.close()
        exchange = _Exchange(self.app, environ)
        exchange.thread.start()
        try:
            first = await exchange.receive.receive()
        except BaseException:
            await exchange.close()
            raise
        if isinstance(first, BaseException):
            await exchange.close()
            raise first
        if not isinstance(first, _Head):
            await exchange.close()
            raise httpx2.RemoteProtocolError("the app answered without a status", request=request)
        return httpx2.Response(first.status, headers=first.headers, stream=_Body(exchange), request=request)
