"""The body watchdog: deadlines, and the process's budget of threads waiting for slow bodies."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
import typing as t
from concurrent.futures import Future

import pytest

from flask_mcp.transport import deadline
from flask_mcp.transport.body import BodyRejected, read_body
from flask_mcp.transport.deadline import BodyWatchdog

#: Seconds any step of these tests may take before it counts as hung.
WAIT = 10.0
BODY = b'{"a": 1}'


class Upload:
    """One request body read by :func:`read_body` in a thread of its own, from a socket the test writes to."""

    def __init__(self, **limits: t.Any) -> None:
        self.server, self.client = socket.socketpair()
        self.result: Future[bytes] = Future()
        environ = {"CONTENT_LENGTH": str(len(BODY)), "werkzeug.socket": self.server}
        self.thread = threading.Thread(target=self._read, args=(environ, limits), name="test-upload")

    def _read(self, environ: dict[str, t.Any], limits: dict[str, t.Any]) -> None:
        try:
            with self.server.makefile("rb") as stream:
                self.result.set_result(read_body(environ, stream, 1024, **limits))
        except BaseException as exc:
            self.result.set_exception(exc)

    def start(self, first: bytes = b"") -> Upload:
        self.client.sendall(first)
        self.thread.start()
        return self

    def refusal(self) -> BodyRejected:
        error = self.result.exception(timeout=WAIT)
        assert isinstance(error, BodyRejected), error
        return error

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.server.shutdown(socket.SHUT_RDWR)  # a read still blocked ends now
        self.thread.join(WAIT)
        self.server.close()
        self.client.close()


@pytest.fixture
def uploads() -> t.Iterator[t.Callable[..., Upload]]:
    made: list[Upload] = []

    def upload(**limits: t.Any) -> Upload:
        made.append(Upload(**limits))
        return made[-1]

    yield upload
    for each in made:
        each.close()


def test_past_the_budget_a_slow_body_is_503_while_one_within_it_waits_on(uploads: t.Callable[..., Upload]) -> None:
    limits = {"timeout": 60, "grace": 0.1, "waiters": 1}
    first = uploads(**limits).start(BODY[:3])
    second = uploads(**limits)
    # The first takes the only waiting place when its grace ends; only then does the second start.
    with contextlib.suppress(TimeoutError):
        first.result.exception(timeout=0.5)
    assert not first.result.done()
    second.start(BODY[:3])
    refusal = second.refusal()
    assert refusal.status == 503 and refusal.headers == {"Retry-After": "5"}
    assert "retry shortly" in refusal.message
    first.client.sendall(BODY[3:])  # the waiting one is read whole
    assert first.result.result(timeout=WAIT) == BODY


def test_a_place_given_back_serves_the_next_slow_body(uploads: t.Callable[..., Upload]) -> None:
    limits = {"timeout": 60, "grace": 0.05, "waiters": 1}
    for _ in range(3):
        upload = uploads(**limits).start(BODY[:1])
        with contextlib.suppress(TimeoutError):
            upload.result.exception(timeout=0.3)  # past its grace: it holds the place
        upload.client.sendall(BODY[1:])
        assert upload.result.result(timeout=WAIT) == BODY


def test_with_no_waiting_places_a_body_in_the_buffer_is_still_read(uploads: t.Callable[..., Upload]) -> None:
    """A body that is already there never needs a place: only slow ones are refused."""
    assert uploads(timeout=60, grace=0.2, waiters=0).start(BODY).result.result(timeout=WAIT) == BODY
    assert uploads(timeout=60, grace=0.05, waiters=0).start(BODY[:2]).refusal().status == 503


def test_a_body_with_a_place_still_has_its_deadline(uploads: t.Callable[..., Upload]) -> None:
    refusal = uploads(timeout=0.3, grace=0.05, waiters=5).start(BODY[:2]).refusal()
    assert refusal.status == 408 and "within 0.3 seconds" in refusal.message


def test_without_a_budget_only_the_deadline_counts(uploads: t.Callable[..., Upload]) -> None:
    refusal = uploads(timeout=0.3, grace=0.05, waiters=None).start(BODY[:2]).refusal()
    assert refusal.status == 408


def test_the_watchdog_thread_ends_after_the_last_body() -> None:
    watchdog = BodyWatchdog()
    left, right = socket.socketpair()
    with left, right:
        token = watchdog.watch(left, 60, 0.5, 2)
        thread = watchdog._thread
        assert thread is not None and thread.is_alive()
        assert watchdog.done(token) is None
        thread.join(WAIT)
        assert not thread.is_alive() and watchdog._thread is None
        assert watchdog.waiting == 0 and watchdog.watching == 0


def test_bodies_read_from_many_threads_while_the_watchdog_steps_them_give_every_place_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A body registers and leaves without a lock; the watchdog steps bodies under its own. Looking
    # every millisecond, with no grace and one waiting place, it steps bodies as they come and go:
    # one takes the place, the others are refused, and every place taken must be given back.
    monkeypatch.setattr(deadline, "GRANULARITY", 0.001)
    watchdog = BodyWatchdog()
    stepped = [0] * 6  # bodies the watchdog stepped, per reader thread
    stop = threading.Event()

    def reader(index: int) -> None:
        left, right = socket.socketpair()
        with left, right:
            while not stop.is_set():
                token = watchdog.watch(left, 60, 0.0, 1)
                watchdog.done(token)
                stepped[index] += token.stepped

    threads = [threading.Thread(target=reader, args=(index,)) for index in range(len(stepped))]
    for thread in threads:
        thread.start()
    give_up = time.monotonic() + WAIT
    while sum(stepped) < 20 and time.monotonic() < give_up:
        stop.wait(0.01)  # polling a real condition, with a deadline
    stop.set()
    for thread in threads:
        thread.join(WAIT)
    assert sum(stepped) >= 20, "the watchdog stepped too few bodies to tell anything"
    assert watchdog.waiting == 0 and watchdog.watching == 0
