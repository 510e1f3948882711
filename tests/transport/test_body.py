"""Reading request bodies: one set of framing rules for the MCP endpoint, REST and CGI."""

from __future__ import annotations

import contextlib
import io
import json
import socket
import threading
import typing as t
import urllib.request

import pytest
from werkzeug.exceptions import ClientDisconnected
from werkzeug.serving import DechunkedInput

from flask_mcp.transport.body import WATCHDOG, BodyRejected, read_body

BODY = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
CHUNKED = {"HTTP_TRANSFER_ENCODING": "chunked", "wsgi.input_terminated": True}


class FailingStream(io.RawIOBase):
    """An input stream that fails on the first read, as a server's does when the client breaks off."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: t.Any) -> int:
        raise self.error


class Trickle(io.RawIOBase):
    """A stream that hands out three bytes a read, as a socket may."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: t.Any) -> int:
        piece, self.data = self.data[:3], self.data[3:]
        buffer[: len(piece)] = piece
        return len(piece)


@pytest.mark.parametrize(
    ("environ", "stream"),
    [
        ({"CONTENT_LENGTH": str(len(BODY))}, io.BytesIO(BODY)),
        ({"CONTENT_LENGTH": str(len(BODY))}, Trickle(BODY)),
        ({"CONTENT_LENGTH": str(len(BODY))}, io.BytesIO(BODY + b"trailing bytes are not read")),
        (CHUNKED, io.BytesIO(BODY)),
        ({**CHUNKED, "CONTENT_LENGTH": ""}, DechunkedInput(io.BytesIO(b"%x\r\n%s\r\n0\r\n\r\n" % (len(BODY), BODY)))),
        ({**CHUNKED, "HTTP_TRANSFER_ENCODING": "gzip, Chunked"}, io.BytesIO(BODY)),
    ],
    ids=["content-length", "short-reads", "exact-length", "chunked", "dechunked", "chunked-last"],
)
def test_bodies_are_read(environ: dict[str, t.Any], stream: t.Any) -> None:
    assert read_body(environ, stream, 1024) == BODY


@pytest.mark.parametrize("environ", [{}, {"CONTENT_LENGTH": ""}, {"CONTENT_LENGTH": "0"}])
def test_without_a_length_there_is_no_body(environ: dict[str, str]) -> None:
    assert read_body(environ, FailingStream(AssertionError("read")), 1024) == b""


@pytest.mark.parametrize(
    ("environ", "stream", "status", "message"),
    [
        ({**CHUNKED, "CONTENT_LENGTH": "40"}, io.BytesIO(BODY), 400, "both Content-Length and Transfer-Encoding"),
        ({**CHUNKED, "HTTP_TRANSFER_ENCODING": "chunked, gzip"}, io.BytesIO(BODY), 400, "must be chunked"),
        ({**CHUNKED, "wsgi.input_terminated": False}, io.BytesIO(BODY), 411, "Length Required"),
        *(
            ({"CONTENT_LENGTH": value}, io.BytesIO(BODY), 400, "Content-Length must be a decimal number")
            for value in ["²", "٣", "\uff11", "+40", "-1", " 40", "40 ", "4_0", "0x28", "4e1", "40, 40", "9" * 5000]
        ),
        ({"CONTENT_LENGTH": "1025"}, io.BytesIO(BODY), 413, "the limit is 1024 bytes"),
        ({"CONTENT_LENGTH": str(2**63)}, io.BytesIO(BODY), 400, "Content-Length must be a decimal number"),
        (CHUNKED, io.BytesIO(b"x" * 1025), 413, "the limit is 1024 bytes"),
        ({"CONTENT_LENGTH": "100"}, io.BytesIO(BODY), 400, f"the body ended after {len(BODY)} of its 100 bytes"),
        *(
            ({"CONTENT_LENGTH": "40"}, FailingStream(error), 400, "the request body could not be read")
            for error in [OSError("reset"), ValueError("bad"), ClientDisconnected(), RuntimeError("a server's own")]
        ),
        *(
            (CHUNKED, DechunkedInput(io.BytesIO(raw)), 400, "the request body could not be read")
            for raw in [b"zz\r\n" + BODY, b"-5\r\nhello\r\n0\r\n\r\n", b"ff\r\n{", b"5\r\nhelloXX0\r\n\r\n"]
        ),
    ],
)
def test_refused_bodies(environ: dict[str, t.Any], stream: t.Any, status: int, message: str) -> None:
    with pytest.raises(BodyRejected) as info:
        read_body(environ, stream, 1024)
    assert info.value.status == status
    assert message in info.value.message


# -- a body that trickles in ---------------------------------------------------------


@pytest.mark.parametrize("path", ["/mcp", "/mcp/rest/tools/add"])
def test_a_body_that_trickles_in_is_408_at_its_deadline(
    mcp: t.Any, make_app: t.Callable[..., t.Any], live_server: t.Any, path: str
) -> None:
    """One byte every 50 ms never trips a socket timeout; the whole body's deadline ends it with a JSON 408."""

    @mcp.tool
    def add(a: int, b: int) -> int:
        return a + b

    app = make_app(mcp, MCP_BODY_TIMEOUT=0.3)
    with live_server(app) as server:
        host, port = server.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            head = (
                f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
                "Accept: application/json, text/event-stream\r\nContent-Length: 10000\r\n\r\n"
            )
            sock.sendall(head.encode())
            sock.setblocking(False)
            answer, pace = b"", threading.Event()
            for step in range(400):  # 50 ms a step, until the server has answered (20 s at most)
                try:
                    chunk = sock.recv(65536)
                except BlockingIOError:
                    if step < 5:
                        # A byte every 50 ms up to just before the deadline; then nothing more, so no
                        # byte is left unread when the server closes (which would reset the connection).
                        sock.send(b" ")
                    pace.wait(0.05)
                    continue
                if not chunk:
                    break  # the server closed the connection after its answer
                answer += chunk
    status_line, _, rest = answer.partition(b"\r\n")
    assert status_line.split()[1] == b"408", answer[:300]
    assert b"Request Timeout" in rest and b"application/json" in rest


def test_a_body_in_time_is_read_and_its_clock_stopped() -> None:
    """Bodies read before their deadline leave nothing behind for the watchdog to shut."""
    left, right = socket.socketpair()
    with left, right:
        right.sendall(b'{"a": 1}')
        environ = {"CONTENT_LENGTH": "8", "werkzeug.socket": left}
        watched = WATCHDOG.watching
        assert read_body(environ, left.makefile("rb"), 100, timeout=60, grace=1, waiters=0) == b'{"a": 1}'
        assert WATCHDOG.watching == watched  # its clock is stopped: the watchdog will never shut this socket
        assert WATCHDOG.waiting == 0  # and it never took a waiting place


# -- slow clients against a real threaded server ------------------------------------------------

#: Seconds another caller may take to be answered while slow clients hold connections: generous.
ANSWERED_WITHIN = 15.0


class SlowClient:
    """A raw connection that announces a body and sends it a byte at a time, then stalls."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=ANSWERED_WITHIN + 15)
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{"
        )
        self.sock.sendall(head.encode())

    def drip(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.send(b" ")

    def answer(self) -> bytes:
        """What the server answered, once it closed the connection."""
        received = b""
        with contextlib.suppress(OSError):
            while chunk := self.sock.recv(65536):
                received += chunk
        return received


def test_slow_bodies_do_not_hold_every_gunicorn_thread() -> None:
    """Ten bodies trickling into gunicorn's gthread worker (8 threads): another caller is still answered.

    With the default limits, at most ``MCP_BODY_WAITERS`` slow bodies keep a
    thread until their deadline; the others are refused (503) after their
    grace, and the threads go on serving.
    """
    from .test_multiprocess import DISCOVER, HEADERS
    from .test_streaming import gunicorn

    with gunicorn(app="tests.streaming_app:create_app(note_threads=False)") as server, contextlib.ExitStack() as stack:
        slow = [SlowClient(server.port) for _ in range(10)]
        for client in slow:
            stack.callback(client.sock.close)
        pace = threading.Event()
        for _ in range(3):  # a byte each, a few times: then they stall, as a byte a second would
            pace.wait(0.2)
            for client in slow:
                client.drip()
        request = urllib.request.Request(
            server.url,
            data=json.dumps(DISCOVER).encode(),
            headers={"Content-Type": "application/json", **HEADERS},
        )
        with urllib.request.urlopen(request, timeout=ANSWERED_WITHIN) as response:
            assert response.status == 200
            assert "result" in json.loads(response.read())
        statuses = []
        for client in slow:
            status_line, _, rest = client.answer().partition(b"\r\n")
            statuses.append(int(status_line.split()[1]))
            assert b"application/json" in rest
        assert set(statuses) <= {408, 503} and 503 in statuses, statuses
