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
"""

from __future__ import annotations

import typing as t

from flask import Response

if t.TYPE_CHECKING:
    from _typeshed.wsgi import WSGIEnvironment

__all__ = ["JSON_CONTENT_TYPE", "JSONAnswer"]

JSON_CONTENT_TYPE = "application/json"
# The headers of an answer as made (werkzeug keeps the order they were set in).
_AS_MADE = ("Content-Type", "Content-Length")


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
