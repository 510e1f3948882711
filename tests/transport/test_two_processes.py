"""The official client against two gunicorn processes sharing one redis-server, as behind a load balancer.

A round-robin TCP proxy on loopback hands each new connection to the next
process, and the client opens a new connection for every request, so the
rounds of one call and a listen stream's trigger land on different
processes. Nothing configures a secret: the key that seals ``requestState``
is shared through Redis.
"""

from __future__ import annotations

import contextlib
import itertools
import socket
import threading
import typing as t
import uuid

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.subscriptions import ToolsListChanged

from ..conftest import free_port
from .test_streaming import gunicorn

pytestmark = pytest.mark.anyio

#: Seconds a socket operation of the proxy may block.
PROXY_TIMEOUT = 30.0


class RoundRobinProxy:
    """Hands each accepted connection to the next backend port, in turn; records which one took it.

    Setting :attr:`pinned` sends every new connection to that port instead.
    """

    def __init__(self, backends: list[int]) -> None:
        self.port = free_port()
        self.backends = backends
        self.chosen: list[int] = []
        self.pinned: int | None = None
        self._next = itertools.cycle(backends)
        self._server = socket.create_server(("127.0.0.1", self.port))
        self._server.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def __enter__(self) -> RoundRobinProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(PROXY_TIMEOUT)
        self._server.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._server.accept()
            except TimeoutError:
                continue
            backend = self.pinned if self.pinned is not None else next(self._next)
            self.chosen.append(backend)
            upstream = socket.create_connection(("127.0.0.1", backend), timeout=PROXY_TIMEOUT)
            for source, target in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(source, target), daemon=True).start()

    def _pipe(self, source: socket.socket, target: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                target.sendall(data)
        with contextlib.suppress(OSError):
            target.shutdown(socket.SHUT_WR)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@contextlib.contextmanager
def balanced(redis_url: str) -> t.Iterator[tuple[str, RoundRobinProxy]]:
    """Two gunicorn processes of ``tests.streaming_app`` on one Redis, behind a round-robin proxy."""
    env = {
        "MCP_CACHE_TYPE": "RedisCache",
        "MCP_CACHE_REDIS_URL": redis_url,
        "MCP_CACHE_KEY_PREFIX": f"flask_mcp_balanced:{uuid.uuid4().hex}:",
    }
    with gunicorn(**env) as first, gunicorn(**env) as second, RoundRobinProxy([first.port, second.port]) as proxy:
        yield f"http://127.0.0.1:{proxy.port}/mcp", proxy


def connection_per_request() -> httpx2.AsyncClient:
    """An HTTP client that never reuses a connection: each request meets the balancer afresh."""
    return httpx2.AsyncClient(limits=httpx2.Limits(max_keepalive_connections=0), timeout=30)


async def test_the_rounds_of_one_call_land_on_both_processes(redis_url: str) -> None:
    async def sampling(context: t.Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        text = params.messages[0].content.text.upper()  # type: ignore[union-attr]
        return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text=text), model="m")

    async def elicitation(context: t.Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    with balanced(redis_url) as (url, proxy):
        transport = streamable_http_client(url, http_client=connection_per_request())
        async with Client(
            transport, mode="2026-07-28", sampling_callback=sampling, elicitation_callback=elicitation
        ) as c:
            result = await c.call_tool("interview", {"prompt": "hello"})
    assert not result.is_error, result
    outcome = result.structured_content
    assert outcome is not None
    assert (outcome["reply"], outcome["action"], outcome["content"]) == ("HELLO", "accept", {"name": "Ada"})
    # Three rounds (ask the model, ask the user, complete), each on a new connection: both processes served them.
    assert len(proxy.chosen) >= 3 and len(set(proxy.chosen)) == 2


async def test_a_listen_stream_hears_a_change_made_on_the_other_process(redis_url: str) -> None:
    with balanced(redis_url) as (url, proxy):
        transport = streamable_http_client(url, http_client=connection_per_request())
        async with Client(transport, mode="2026-07-28") as client:
            first, second = proxy.backends
            proxy.pinned = first
            async with client.listen(tools_list_changed=True) as stream:
                proxy.pinned = second  # the change is made on the other process
                flipped = await client.call_tool("flip", {})
                assert flipped.content[0].text == "disabled"  # type: ignore[union-attr]
                with anyio.fail_after(10):
                    assert isinstance(await stream.__anext__(), ToolsListChanged)
            tools = {tool.name for tool in (await client.list_tools()).tools}
            assert "spare" not in tools and "flip" in tools


def modern_post(url: str, method: str, params: dict[str, t.Any], name: str | None = None) -> dict[str, t.Any]:
    """One stateless 2026-07-28 request declaring the tasks extension; its JSON-RPC response."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {},
            "extensions": {"io.modelcontextprotocol/tasks": {}},
        },
    }
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28",
               "Mcp-Method": method}  # fmt: skip
    if name is not None:
        headers["Mcp-Name"] = name
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
    answer = httpx2.post(url, json=body, headers=headers, timeout=30)
    assert answer.status_code == 200, answer.text
    return t.cast(dict[str, t.Any], answer.json())


def poll_task(url: str, task_id: str, statuses: set[str]) -> dict[str, t.Any]:
    """``tasks/get`` at *url* until the task's status is one of *statuses* (10 s at most)."""
    deadline = threading.Event()
    timer = threading.Timer(10, deadline.set)
    timer.start()
    try:
        while not deadline.is_set():
            task = modern_post(url, "tasks/get", {"taskId": task_id}, name=task_id)["result"]
            if task["status"] in statuses:
                return task
            deadline.wait(0.02)
    finally:
        timer.cancel()
    raise AssertionError(f"task {task_id} never reached {statuses}")


def test_a_task_made_on_one_process_is_followed_answered_and_finished_through_the_other(redis_url: str) -> None:
    env = {
        "MCP_CACHE_TYPE": "RedisCache",
        "MCP_CACHE_REDIS_URL": redis_url,
        "MCP_CACHE_KEY_PREFIX": f"flask_mcp_tasks:{uuid.uuid4().hex}:",
    }
    with gunicorn(**env) as first, gunicorn(**env) as second:
        call = {"name": "confirm_on", "arguments": {"host": "db1"}}
        created = modern_post(first.url, "tools/call", call, "confirm_on")
        task_id = created["result"]["taskId"]
        assert created["result"]["resultType"] == "task"
        # The other process reads the task the first one runs, up to its question.
        waiting = poll_task(second.url, task_id, {"input_required", "failed"})
        assert waiting["status"] == "input_required" and set(waiting["inputRequests"]) == {"ok"}
        answer = {"ok": {"action": "accept", "content": {"ok": True}}}
        updated = modern_post(second.url, "tasks/update", {"taskId": task_id, "inputResponses": answer}, task_id)
        assert updated["result"]["resultType"] == "complete"
        # The answer given to the second process resumes the task there; the first sees it end.
        done = poll_task(first.url, task_id, {"completed", "failed"})
        assert done["status"] == "completed", done
        result = done["result"]["structuredContent"]
        assert (result["host"], result["ok"]) == ("db1", True)
