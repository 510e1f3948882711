"""``MCP_MAX_STREAMS``: a process's open streams against their cap, and a gone client's slot freed at the cap."""

from __future__ import annotations

import contextlib
import socket
import typing as t

from hypothesis import given, settings
from hypothesis import strategies as st

from flask_mcp.transport.stream_slots import StreamSlots, client_gone


@contextlib.contextmanager
def connections(count: int) -> t.Iterator[list[tuple[socket.socket, socket.socket]]]:
    """*count* connected pairs: (the server's end, the client's end)."""
    pairs = [socket.socketpair() for _ in range(count)]
    try:
        yield pairs
    finally:
        for pair in pairs:
            for end in pair:
                end.close()


def test_a_live_idle_client_is_not_gone_and_a_closed_one_is() -> None:
    with connections(1) as [(server, client)]:
        assert not client_gone(server)
        client.sendall(b"GET / HTTP/1.1\r\n\r\n")  # a client still talking is there
        assert not client_gone(server)
        assert server.recv(64)  # the server read its request, as a stream's has
        client.close()
        assert client_gone(server)
        server.close()
        assert client_gone(server)


def test_at_the_cap_a_gone_clients_slot_is_given_up_at_once() -> None:
    with connections(3) as pairs:
        slots = StreamSlots(2)
        assert slots.take(pairs[0][0]) and slots.take(pairs[1][0])
        assert not slots.take(pairs[2][0])  # both clients are there
        pairs[0][1].close()  # the first one leaves; its stream has not written since
        assert slots.take(pairs[2][0]) and slots.open == 2
        # Its socket was shut down, so its stream's next write fails and its thread ends ...
        try:
            pairs[0][0].sendall(b": keep-alive\n\n")
            written = True
        except OSError:
            written = False
        assert not written
        # ... and its own give_back later is no second release.
        slots.give_back(pairs[0][0])
        assert slots.open == 2
        slots.give_back(pairs[1][0])
        assert slots.open == 1


@settings(max_examples=25, deadline=None)
@given(limit=st.integers(1, 6), live=st.integers(0, 8), gone=st.integers(0, 8))
def test_the_cap_holds_for_live_clients_however_many_left(limit: int, live: int, gone: int) -> None:
    """Never more than *limit* live streams; each gone one frees its slot only when the cap is reached."""
    with connections(live + gone + 1) as pairs:
        slots = StreamSlots(limit)
        taken = [pair for pair in pairs[: live + gone] if slots.take(pair[0])]
        assert slots.open == len(taken) == min(limit, live + gone)
        for _server, client in taken[:gone]:
            client.close()
        still = len(taken) - min(gone, len(taken))
        newcomer = slots.take(pairs[-1][0])
        assert newcomer is (still < limit or len(taken) < limit)
        assert slots.open <= limit
        if newcomer and len(taken) == limit:
            assert slots.open == still + 1  # every gone stream was found at the cap, not only one
