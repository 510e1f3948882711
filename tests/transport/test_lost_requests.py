"""A resumed stream of a request that died with its worker ends with a JSON-RPC error, instead of waiting forever."""

from __future__ import annotations

import contextlib
import http.client
import os
import signal
import typing as t
import uuid

from flask import Flask

from flask_mcp import MCP
from flask_mcp.transport.lost_requests import LOST_MESSAGE

from ..stores.test_events import open_stream
from .test_streaming import PROTOCOL_VERSION, WAIT, Endpoint, call, gunicorn, read_events

PROGRESS = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}}


def _session(
    mcp: MCP, make_app: t.Callable[..., Flask], make_client: t.Callable[..., t.Any], **config: t.Any
) -> tuple[Flask, t.Any]:
    app = make_app(mcp, **config)
    client = make_client(app)
    client.initialize()
    return app, client


def test_a_stream_whose_request_no_worker_holds_ends_with_an_error(
    mcp: MCP, make_app: t.Callable[..., Flask], make_client: t.Callable[..., t.Any]
) -> None:
    """What a worker logged before it died is replayed; then the request's error ends the stream."""
    app, client = _session(mcp, make_app, make_client)
    with app.app_context():
        events = app.extensions["mcp"].events
        events.write_many(client.session_id, "strm", [], carries=7)  # as the dead worker did; its marker is gone
        events.append(client.session_id, "strm", PROGRESS)
    response, stream = open_stream(client, "strm:0")
    with contextlib.closing(response):
        replayed, lost = list(stream)
    assert replayed["message"] == PROGRESS
    assert lost["message"] == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": -32603, "message": LOST_MESSAGE, "data": {"reason": "request_lost", "requestId": 7}},
    }


def test_a_cancelled_requests_stream_ends_without_an_error(
    mcp: MCP, make_app: t.Callable[..., Flask], make_client: t.Callable[..., t.Any]
) -> None:
    """A cancelled request has no response (the specification), and is not lost either."""
    app, client = _session(mcp, make_app, make_client)
    with app.app_context():
        events = app.extensions["mcp"].events
        events.write_many(client.session_id, "strm", [], carries="r1")
        events.end(client.session_id, "strm")
    response, stream = open_stream(client, "strm:0")
    with contextlib.closing(response):
        assert list(stream) == []


def test_a_stream_that_carries_no_known_request_is_not_ended(
    mcp: MCP, make_app: t.Callable[..., Flask], make_client: t.Callable[..., t.Any]
) -> None:
    """Without the note of its request (a stream from before, or expired), the stream waits as it always did."""
    app, client = _session(mcp, make_app, make_client, MCP_SSE_IDLE_TIMEOUT=1)
    with app.app_context():
        app.extensions["mcp"].events.append(client.session_id, "strm", PROGRESS)
    response, stream = open_stream(client, "strm:0")
    with contextlib.closing(response):
        assert [event["message"] for event in stream] == [PROGRESS]  # and then the idle timeout


def test_a_call_whose_worker_was_killed_is_answered_lost_on_the_other_worker(redis_url: str) -> None:
    """Two gunicorn processes on one Redis: the worker running a call dies; the client resumes on the other."""
    env = {
        "MCP_CACHE_TYPE": "RedisCache",
        "MCP_CACHE_REDIS_URL": redis_url,
        "MCP_CACHE_KEY_PREFIX": f"flask_mcp_lost:{uuid.uuid4().hex}:",
        "MCP_INFLIGHT_TTL": "3",
    }
    with gunicorn(**env) as server_a, gunicorn(**env) as server_b:
        a, b = Endpoint(server_a.url), Endpoint(server_b.url)
        session_id = a.initialize({"sampling": {}, "elicitation": {}})
        connection, response = a.open(call("interview", {"prompt": "ping"}, request_id="r1"), session_id)
        with contextlib.closing(connection):
            stream = read_events(iter(response.readline, b""))
            next(stream)  # priming
            asked = next(stream)  # the tool waits for the client's model
            assert asked.message["method"] == "sampling/createMessage"
            os.kill(int(response.headers["X-Worker-Pid"]), signal.SIGKILL)
        resumed = http.client.HTTPConnection(b.host, b.port, timeout=WAIT)
        with contextlib.closing(resumed):
            headers = {
                "Accept": "text/event-stream",
                "Mcp-Session-Id": session_id,
                "MCP-Protocol-Version": PROTOCOL_VERSION,
                "Last-Event-ID": asked.fields["id"],
            }
            resumed.request("GET", b.path, headers=headers)
            answer = resumed.getresponse()
            assert answer.status == 200
            # The stream ends (a read that never ends would time out after WAIT seconds).
            priming, *messages = list(read_events(iter(answer.readline, b"")))
        assert priming.fields["id"] == asked.fields["id"]
        (lost,) = [event.message for event in messages]
        assert lost["id"] == "r1" and lost["error"]["message"] == LOST_MESSAGE
        # The id is free again: the client retries the call under the same id, on the live worker.
        retry, retried = b.open(call("interview", {"prompt": "again"}, request_id="r1"), session_id)
        with contextlib.closing(retry):
            assert retried.status == 200
