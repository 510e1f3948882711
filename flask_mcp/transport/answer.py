"""The endpoint's JSON answers, handed to the server as they were made.

For every response, werkzeug's :meth:`~werkzeug.wrappers.Response.get_wsgi_response`
copies the headers, looks through them for a ``Location`` to make absolute,
drops the length of a 1xx, 204 or 304 answer, counts a length the response
does not give, and wraps the body in an iterator that calls what
:meth:`~werkzeug.wrappers.Response.call_on_close` registered. A JSON answer
as the endpoint makes it needs none of that: its body is one ``bytes``
object, its only headers ``Content-Type`` and ``Content-Length``, and nothing
waits for it to close. :class:`JSONAnswer` keeps that shortcut for exactly
that case, and only while it holds when the server asks for the answer: an
``after_request`` handler, Flask's session or an extension that adds a
header, makes the body anything but one ``bytes`` object (``set_data``
keeps it one, with its length), changes the status to one without a body
or registers a callback sends it werkzeug's way, which then answers as it
would for any response.

:class:`EventStreamAnswer` does the same for an event stream: its chunks go
to the server as the stream makes them, without werkzeug's wrapper around
each, and what runs when the server closes it is the stream's own.
"""

from __future__ import annotations

import typing as t

from flask import Response

if t.TYPE_CHECKING:
    from _typeshed.wsgi import WSGIEnvironment

__all__ = ["EVENT_STREAM_HEADERS", "JSON_CONTENT_TYPE", "EventStreamAnswer", "JSONAnswer"]

JSON_CONTENT_TYPE = "application/json"
# The headers of an answer as made (werkzeug keeps the order they were set in).
_AS_MADE = ("Content-Type", "Content-Length")
#: The headers of an event stream, in werkzeug's order: not to be cached or buffered on the way
#: (nginx reads ``X-Accel-Buffering``).
EVENT_STREAM_HEADERS = (
    ("Cache-Control", "no-cache"),
    ("X-Accel-Buffering", "no"),
    ("Content-Type", "text/event-stream"),
)
_STREAM_AS_MADE = list(EVENT_STREAM_HEADERS)


class JSONAnswer(Response):
    """A response whose body is one JSON text, given whole.

    :param body: the encoded JSON text.
    :param status: the HTTP status.
    :param headers: further headers (they send the answer werkzeug's way).
    """

    # Whether anything was registered to call when the answer is closed.
    _closes = False

    def __init__(self, body: bytes, status: int = 200, headers: t.Mapping[str, str] | None = None) -> None:
        # A list body is not measured again by werkzeug (bytes would be, by set_data): its length is set here.
        super().__init__([body], status=status, headers=headers, content_type=JSON_CONTENT_TYPE)
        self.headers.add("Content-Length", str(len(body)))

    def call_on_close(self, func: t.Callable[[], t.Any]) -> t.Callable[[], t.Any]:
        """As werkzeug's; the answer then goes werkzeug's way, which calls *func*."""
        self._closes = True
        return super().call_on_close(func)

    def get_wsgi_response(self, environ: WSGIEnvironment) -> tuple[t.Iterable[bytes], str, list[tuple[str, str]]]:
        """The body, status and headers for the server: as made, while the answer is still as made.

        Otherwise (and for a ``HEAD`` request, or a status that carries no
        body) werkzeug's own.
        """
        body = self.response
        code = self.status_code
        if (
            type(body) is list
            and len(body) == 1
            and type(body[0]) is bytes
            and not self._closes
            and not self.direct_passthrough
            and code >= 200
            and code != 204
            and code != 304
            and environ["REQUEST_METHOD"] != "HEAD"
        ):
            headers = self.headers.to_wsgi_list()
            # Neither a Location to correct nor a length to count: werkzeug would send these as they are.
            if len(headers) == 2 and headers[0][0] == _AS_MADE[0] and headers[1][0] == _AS_MADE[1]:
                return body, self.status, headers
        return super().get_wsgi_response(environ)


class EventStreamAnswer(Response):
    """A ``text/event-stream`` response whose chunks the server takes as they are made.

    :param chunks: the stream's events, as bytes.
    :param on_close: called once the server closes the response (sent whole, or the client gone).
    """

    # Whether anything else was registered to call when the answer is closed.
    _closes = False

    def __init__(self, chunks: t.Iterator[bytes], on_close: t.Callable[[], t.Any]) -> None:
        super().__init__(chunks, headers=EVENT_STREAM_HEADERS[:2], content_type=EVENT_STREAM_HEADERS[2][1])
        self._stream_closed = on_close

    def call_on_close(self, func: t.Callable[[], t.Any]) -> t.Callable[[], t.Any]:
        """As werkzeug's; the answer then goes werkzeug's way, which calls *func* after the stream's own."""
        self._closes = True
        return super().call_on_close(func)

    def get_wsgi_response(self, environ: WSGIEnvironment) -> tuple[t.Iterable[bytes], str, list[tuple[str, str]]]:
        """The stream, status and headers for the server: as made, while the answer is still as made.

        Otherwise (and for a ``HEAD`` request) werkzeug's own, which calls the stream's *on_close* too.
        """
        if (
            not self._closes
            and not self.direct_passthrough
            and self.status_code == 200
            and environ["REQUEST_METHOD"] != "HEAD"
        ):
            headers = self.headers.to_wsgi_list()
            if headers == _STREAM_AS_MADE:
                return _Closing(self.response, self._stream_closed), self.status, headers
        if self._stream_closed not in self._on_close:
            self._on_close.insert(0, self._stream_closed)  # the stream's own first, as if registered when made
        return super().get_wsgi_response(environ)


class _Closing:
    """A stream for the server: iterated as it is, closed with its *on_close* (PEP 3333's ``close``)."""

    __slots__ = ("_chunks", "_on_close")

    def __init__(self, chunks: t.Any, on_close: t.Callable[[], t.Any]) -> None:
        self._chunks = chunks
        self._on_close = on_close

    def __iter__(self) -> t.Iterator[bytes]:
        return iter(self._chunks)

    def close(self) -> None:
        try:
            close = getattr(self._chunks, "close", None)
            if close is not None:
                close()
        finally:
            self._on_close()
