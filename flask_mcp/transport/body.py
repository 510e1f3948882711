"""Reading a request body: framed unambiguously, bounded, and never a 500.

Every adapter that takes a body (the MCP endpoint, the REST routes, CGI)
reads it through :func:`read_body`, so they refuse the same requests the
same way:

* ``Content-Length`` together with ``Transfer-Encoding`` is refused (400):
  the two framings can disagree, the classic request-smuggling setup that
  RFC 9112 §6.3 says to treat as an error;
* a ``Content-Length`` that is not a plain ASCII decimal number is 400;
* a body longer than the limit is 413, announced or chunked;
* a chunked body is read only when the server says it decoded the chunks
  (``wsgi.input_terminated``); otherwise 411;
* any failure of the input stream (a malformed chunk, a client that hung
  up, a body shorter than announced) is 400;
* a body that has not arrived within ``MCP_BODY_TIMEOUT`` seconds, however
  slowly it trickles in, is 408 (:mod:`~flask_mcp.transport.deadline`);
* a body still arriving after ``MCP_BODY_GRACE`` seconds while
  ``MCP_BODY_WAITERS`` other bodies of the process are already waiting is
  503 with ``Retry-After``: a few slow clients cannot hold every thread.
"""

from __future__ import annotations

import logging
import typing as t

from ..protocol.numerals import parse_numeral
from .deadline import BUSY, BodyWatchdog, socket_of

if t.TYPE_CHECKING:
    from ..config.settings import Settings

__all__ = ["BODY_RETRY_AFTER", "BodyRejected", "read_body", "read_request_body"]

logger = logging.getLogger("flask_mcp")

#: The largest Content-Length that is parsed at all (then compared with the limit).
_MAX_DECLARED_LENGTH = 2**63 - 1
#: Seconds a client refused for lack of waiting places is told to wait.
BODY_RETRY_AFTER = 5


class BodyRejected(Exception):
    """The body cannot be read; the adapter answers *status* with *message* in its own format.

    :param retry_after: seconds to send in a ``Retry-After`` header, if any.
    """

    def __init__(self, status: int, message: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after = retry_after

    @property
    def headers(self) -> dict[str, str]:
        """The headers the answer carries (``Retry-After``)."""
        return {"Retry-After": str(self.retry_after)} if self.retry_after is not None else {}


def _too_large(limit: int) -> BodyRejected:
    return BodyRejected(413, f"Payload Too Large: the limit is {limit} bytes")


def _cut_off(why: str, timeout: float | None, grace: float | None) -> BodyRejected:
    if why == BUSY:
        return BodyRejected(
            503,
            f"Service Unavailable: the body did not arrive within {grace:g} seconds, and this server "
            "is already waiting for as many slow bodies as it may; retry shortly",
            BODY_RETRY_AFTER,
        )
    return BodyRejected(408, f"Request Timeout: the body did not arrive within {timeout:g} seconds")


#: A Content-Length of fewer digits than this is read as it is (it is far below any size limit).
_PLAIN_LENGTH_DIGITS = 10


def _declared_length(environ: t.Mapping[str, t.Any]) -> int | None:
    """The ``Content-Length`` as a number, ``None`` when the body is chunked or absent."""
    # Servers give "" as well as no key for a missing header.
    declared = environ.get("CONTENT_LENGTH") or None
    coding = environ.get("HTTP_TRANSFER_ENCODING")
    if coding is None:
        if declared is None:
            return 0  # RFC 9112 §6.3: neither header, no body
        try:
            return parse_numeral(declared, _MAX_DECLARED_LENGTH)
        except ValueError:
            raise BodyRejected(400, "Bad Request: Content-Length must be a decimal number of bytes") from None
    if declared is not None:
        raise BodyRejected(400, "Bad Request: a request may not have both Content-Length and Transfer-Encoding")
    if coding.rpartition(",")[2].strip().lower() != "chunked":
        # RFC 9112 §6.3: without chunked last, the body's length cannot be known.
        raise BodyRejected(400, "Bad Request: the last transfer coding of a request must be chunked")
    if not environ.get("wsgi.input_terminated"):
        # The server hands over the raw chunks, or nothing: reading on could wait forever.
        raise BodyRejected(411, "Length Required: this server reads no chunked bodies; send Content-Length")
    return None


def _read_on(stream: t.Any, data: bytes, size: int) -> bytes:
    """*data*, the first part of a body of up to *size* bytes, with the rest of *stream* up to *size*."""
    chunks = [data]
    remaining = size - len(data)
    while remaining > 0:
        chunk = stream.read(remaining)
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


#: Keeps the body deadlines of this process.
WATCHDOG = BodyWatchdog()


def read_body(
    environ: t.Mapping[str, t.Any],
    stream: t.Any,
    limit: int,
    timeout: float | None = None,
    grace: float | None = None,
    waiters: int | None = None,
) -> bytes:
    """The body of the request described by *environ*, read from *stream*.

    :param environ: the WSGI (or CGI) environ, for its framing headers.
    :param stream: the input stream (``wsgi.input``, a CGI script's stdin).
    :param limit: the largest body accepted, in bytes.
    :param timeout: seconds the whole body may take to arrive
        (``MCP_BODY_TIMEOUT``); past it the answer is 408.
    :param grace: seconds the body may take without one of the process's
        waiting places (``MCP_BODY_GRACE``).
    :param waiters: the most bodies of this process that may wait past their
        grace at once (``MCP_BODY_WAITERS``); past it the answer is 503.
        ``None``: any number.

    The clocks are kept where the server exposes the client's socket
    (werkzeug, gunicorn).

    :raises BodyRejected: with the status and message to answer (see the
        module docstring).
    """
    declared = environ.get("CONTENT_LENGTH")
    if declared and len(declared) < _PLAIN_LENGTH_DIGITS and declared.isdigit() and declared.isascii():
        # The common case, read without the checks of the others (_declared_length).
        length: int | None = int(declared) if "HTTP_TRANSFER_ENCODING" not in environ else _declared_length(environ)
    else:
        length = _declared_length(environ)
    if length is not None and length > limit:
        raise _too_large(limit)
    if length == 0:
        return b""
    timed = timeout is not None or (grace is not None and waiters is not None)
    sock = socket_of(environ) if timed else None
    token = WATCHDOG.watch(sock, timeout, grace, waiters) if sock is not None else None
    try:
        # A chunked body: one byte past the limit tells one that is too large.
        size = limit + 1 if length is None else length
        body: bytes = stream.read(size)
        if len(body) < size and body:  # a server that hands the body over in parts
            body = _read_on(stream, body, size)
    except Exception as exc:
        why = WATCHDOG.done(token) if token is not None else None
        if why is not None:
            raise _cut_off(why, timeout, grace) from None
        # Whatever the server's input stream raises (werkzeug's ClientDisconnected,
        # OSError, ValueError, gunicorn's chunk parse errors) is the client's
        # bytes or connection failing, not a fault of this server.
        logger.info("MCP request body could not be read: %s: %s", type(exc).__name__, exc)
        raise BodyRejected(400, "Bad Request: the request body could not be read") from None
    why = WATCHDOG.done(token) if token is not None else None
    if why is not None:
        raise _cut_off(why, timeout, grace)
    if length is None and len(body) > limit:
        raise _too_large(limit)
    if length is not None and len(body) < length:
        raise BodyRejected(400, f"Bad Request: the body ended after {len(body)} of its {length} bytes")
    return body


def read_request_body(environ: t.Mapping[str, t.Any], settings: Settings) -> bytes:
    """:func:`read_body` of a WSGI request, with the limits and clocks of *settings*."""
    return read_body(
        environ,
        environ["wsgi.input"],
        settings.max_content_length,
        settings.body_timeout,
        settings.body_grace,
        settings.body_waiters,
    )
