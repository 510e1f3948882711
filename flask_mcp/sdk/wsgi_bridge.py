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

import contextlib
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
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

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

    def __init__(self, receive: MemoryObjectReceiveStream[_Item], exchange: _Exchange) -> None:
        self._receive = receive
        self._exchange = exchange

    async def __aiter__(self) -> t.AsyncIterator[bytes]:
        async for item in self._receive:
            if isinstance(item, _End):
                return
            if isinstance(item, BaseException):
                raise item
            if isinstance(item, bytes):
                yield item

    async def aclose(self) -> None:
        # The app's thread finds no reader at its next chunk and closes the body there.
        await self._receive.aclose()
        self._exchange.closed.set()


class _Exchange:
    """One request handed to the app in a thread, and its way back."""

    def __init__(self, app: WSGIApplication, environ: dict[str, t.Any], send: MemoryObjectSendStream[_Item]) -> None:
        self.app = app
        self.environ = environ
        self.send = send
        self.token = anyio.lowlevel.current_token()
        self.closed = threading.Event()
        self.thread = threading.Thread(target=self.run, name=f"{THREAD_NAME}-{next(_numbers)}", daemon=True)

    def put(self, item: _Item) -> bool:
        """Hand *item* to the client; ``False`` once nobody reads (the response closed, or the loop ended)."""
        if self.closed.is_set():
            return False
        try:
            anyio.from_thread.run(self.send.send, item, token=self.token)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, RuntimeError):
            # RuntimeError: the event loop that asked is gone.
            self.closed.set()
            return False
        return True

    def run(self) -> None:
        try:
            body, status, headers = run_wsgi_app(self.app, self.environ, buffered=False)
        except BaseException as exc:  # the app raised (TESTING propagates exceptions): the caller sees it
            self.put(exc)
            self._close_send()
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
            self._close_send()

    def _close_send(self) -> None:
        with contextlib.suppress(RuntimeError):  # the event loop is gone, and the stream with it
            anyio.from_thread.run_sync(self.send.close, token=self.token)


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
        send, receive = anyio.create_memory_object_stream[_Item](BUFFERED_CHUNKS)
        exchange = _Exchange(self.app, environ, send)
        exchange.thread.start()
        try:
            first = await receive.receive()
        except anyio.EndOfStream:
            raise httpx2.RemoteProtocolError("the app answered nothing", request=request) from None
        except BaseException:
            await receive.aclose()
            exchange.closed.set()
            raise
        if isinstance(first, BaseException):
            await receive.aclose()
            raise first
        head = t.cast(_Head, first)
        return httpx2.Response(head.status, headers=head.headers, stream=_Body(receive, exchange), request=request)
