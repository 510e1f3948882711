"""``WSGIBridge``: an ``httpx2`` client's requests served by a Flask app in this process, bodies streamed."""

from __future__ import annotations

import asyncio
import threading
import typing as t

import anyio
import httpx2
import pytest
from flask import Flask, Response, jsonify, request, stream_with_context

from flask_mcp.sdk import WSGIBridge
from flask_mcp.sdk.wsgi_bridge import THREAD_NAME

from ..conftest import Gates

pytestmark = pytest.mark.anyio


class Boom(Exception):
    pass


def bridge_threads() -> set[threading.Thread]:
    return {thread for thread in threading.enumerate() if thread.name.startswith(THREAD_NAME)}


def ended(threads: set[threading.Thread]) -> bool:
    for thread in threads:
        thread.join(10)
    return not any(thread.is_alive() for thread in threads)


@pytest.fixture
def closed() -> threading.Event:
    """Set when the app's streamed body is closed (its WSGI ``close``)."""
    return threading.Event()


@pytest.fixture
def app(gates: Gates, closed: threading.Event) -> Flask:
    app = Flask("bridge")
    app.config["TESTING"] = True

    @app.post("/echo/<name>")
    def echo(name: str) -> t.Any:
        response = jsonify(
            name=name,
            query=request.args.to_dict(),
            body=request.get_json(),
            header=request.headers.get("X-Test"),
            host=request.host,
            remote=request.remote_addr,
        )
        response.headers["X-Answer"] = "42"
        return response, 201

    @app.get("/slow")
    def slow() -> Response:
        """A first chunk, then the rest once the test has seen it (and the request's context in every chunk)."""

        def chunks() -> t.Iterator[bytes]:
            yield f"first {request.args['n']}\n".encode()
            gates.release.wait(10)
            yield f"second {request.args['n']}\n".encode()

        return Response(stream_with_context(chunks()), mimetype="text/plain")

    @app.get("/endless")
    def endless() -> Response:
        def chunks() -> t.Iterator[bytes]:
            while not closed.is_set():
                yield b"tick\n"
                gates.started.set()

        response = Response(chunks(), mimetype="text/plain")
        response.call_on_close(closed.set)
        return response

    @app.get("/late")
    def late() -> str:
        gates.started.set()
        gates.release.wait(10)
        return "late"

    @app.get("/boom")
    def boom() -> str:
        raise Boom("the view failed")

    return app


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_request_reaches_the_app_and_its_response_comes_back(app: Flask) -> None:
    bridge = WSGIBridge(app, environ={"REMOTE_ADDR": "10.1.2.3"})
    async with httpx2.AsyncClient(transport=bridge) as http:
        response = await http.post("http://shop.test/echo/ada?x=1&y=two", json={"a": [1, 2]}, headers={"X-Test": "yes"})
    assert response.status_code == 201 and response.headers["X-Answer"] == "42"
    assert response.json() == {
        "name": "ada",
        "query": {"x": "1", "y": "two"},
        "body": {"a": [1, 2]},
        "header": "yes",
        "host": "shop.test",
        "remote": "10.1.2.3",
    }


async def test_a_streamed_body_comes_chunk_by_chunk_in_one_request_context(app: Flask, gates: Gates) -> None:
    """The second chunk is yielded only once the client has the first: a buffered body would never end."""
    async with (
        httpx2.AsyncClient(transport=WSGIBridge(app)) as http,
        http.stream("GET", "http://localhost/slow?n=7") as response,
    ):
        lines = response.aiter_lines()
        with anyio.fail_after(10):
            assert await anext(lines) == "first 7"
        gates.release.set()
        with anyio.fail_after(10):
            assert [line async for line in lines] == ["second 7"]


async def test_a_response_closed_early_closes_the_apps_body_and_its_thread_ends(
    app: Flask, gates: Gates, closed: threading.Event
) -> None:
    before = bridge_threads()
    async with (
        httpx2.AsyncClient(transport=WSGIBridge(app)) as http,
        http.stream("GET", "http://localhost/endless") as response,
    ):
        async for chunk in response.aiter_bytes():
            assert chunk.startswith(b"tick")
            break
    assert await anyio.to_thread.run_sync(closed.wait, 10)
    assert await anyio.to_thread.run_sync(ended, bridge_threads() - before)


async def test_a_caller_that_stops_waiting_before_the_answer_leaves_no_thread(app: Flask, gates: Gates) -> None:
    before = bridge_threads()
    async with httpx2.AsyncClient(transport=WSGIBridge(app)) as http:
        with anyio.move_on_after(10) as scope:
            async with anyio.create_task_group() as group:
                group.start_soon(http.get, "http://localhost/late")
                assert await anyio.to_thread.run_sync(gates.started.wait, 10)
                group.cancel_scope.cancel()
        assert not scope.cancelled_caught
    gates.release.set()  # the view returns to nobody, and its thread ends
    assert await anyio.to_thread.run_sync(ended, bridge_threads() - before)


async def test_an_exception_of_the_app_reaches_the_caller(app: Flask) -> None:
    async with httpx2.AsyncClient(transport=WSGIBridge(app)) as http:
        with pytest.raises(Boom, match="the view failed"):
            await http.get("http://localhost/boom")
    app.config["TESTING"] = False  # outside testing, Flask answers 500 itself
    async with httpx2.AsyncClient(transport=WSGIBridge(app)) as http:
        assert (await http.get("http://localhost/boom")).status_code == 500


def test_a_thread_never_waits_on_an_event_loop_that_stopped_running(app: Flask, closed: threading.Event) -> None:
    """The loop stays open but runs nothing more (as between two async tests): the app's thread still ends."""
    before = bridge_threads()

    async def first_chunk() -> bytes:
        async with (
            httpx2.AsyncClient(transport=WSGIBridge(app)) as http,
            http.stream("GET", "http://localhost/endless") as response,
        ):
            async for chunk in response.aiter_bytes():
                return chunk
        raise AssertionError("no chunk")

    with asyncio.Runner() as runner:
        assert runner.run(first_chunk()).startswith(b"tick")
        assert closed.wait(10)
        assert ended(bridge_threads() - before)
