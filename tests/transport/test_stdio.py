"""The stdio transport: lines through in-memory streams and pipes, and the SDK client over a real subprocess."""

from __future__ import annotations

import io
import json
import logging
import os
import queue
import sys
import threading
import typing as t

import anyio
import mcp_types as types
import pytest
from flask import Flask
from mcp import Client, StdioServerParameters

import flask_mcp
from flask_mcp import MCP
from flask_mcp.transport.stdio import serve_stdio

from ..conftest import REPO_ROOT
from ..stdio_app import app as stdio_app

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {"sampling": {}}, "clientInfo": {"name": "t"}},
}


def run_lines(app: Flask, *messages: dict[str, t.Any] | bytes) -> list[dict[str, t.Any]]:
    """Feed *messages* (dicts, or raw lines) through :func:`serve_stdio` and return the decoded output lines."""
    lines = [m if isinstance(m, bytes) else json.dumps(m).encode() for m in messages]
    stdout = io.BytesIO()
    serve_stdio(app, io.BytesIO(b"".join(line + b"\n" for line in lines)), stdout)
    output = stdout.getvalue()
    assert output == b"" or output.endswith(b"\n")
    return [json.loads(line) for line in output.splitlines()]


def test_ping() -> None:
    assert run_lines(stdio_app, {"jsonrpc": "2.0", "id": 7, "method": "ping"}) == [
        {"jsonrpc": "2.0", "id": 7, "result": {}}
    ]


def test_initialize_then_tools_call() -> None:
    init, call = run_lines(
        stdio_app,
        INIT,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 2, "b": 3}}},
    )
    assert init["result"]["serverInfo"] == {"name": "stdio-app", "version": "2.0.0"}
    assert call == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"content": [{"type": "text", "text": "5"}], "structuredContent": {"result": 5}},
    }


def test_notifications_and_blank_lines_get_no_answer() -> None:
    output = run_lines(
        stdio_app,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        b"",
        b"   ",
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}},
        {"jsonrpc": "2.0", "id": "srv-404", "result": {}},  # an answer nobody waits for
    )
    assert output == []


@pytest.mark.parametrize(
    ("line", "code", "msg_id"),
    [
        (b"{not json", -32700, None),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "x": NaN}', -32700, None),
        (b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', -32600, None),
        (b'{"jsonrpc": "1.0", "id": 5, "method": "ping"}', -32600, 5),
        (b'{"jsonrpc": "2.0", "id": 6, "method": 3}', -32600, 6),
    ],
)
def test_invalid_lines_get_the_http_transport_errors(line: bytes, code: int, msg_id: int | None) -> None:
    [error] = run_lines(stdio_app, line, {"jsonrpc": "2.0", "id": "after", "method": "ping"})[:1]
    assert (error["id"], error["error"]["code"]) == (msg_id, code)


@pytest.mark.parametrize(
    ("line", "code", "msg_id"),
    [
        (b'{"jsonrpc": "2.0", "id": 1, "id": 2, "method": "ping"}', -32700, None),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"n": 1e999}}', -32700, None),
        ('{"jsonrpc": "2.0", "id": 1, "method": "ping"}'.encode("utf-32-le"), -32700, None),
        (b'{"jsonrpc": "2.0", "id": "' + b"x" * 257 + b'", "method": "ping"}', -32600, None),
        (b'{"jsonrpc": "2.0", "id": 9007199254740993, "method": "ping"}', -32600, None),
        (
            b'{"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {"x": ' + b"[" * 65 + b"]" * 65 + b"}}",
            -32600,
            None,
        ),
    ],
    ids=["duplicate-key", "overflow", "utf-32", "long-id", "large-id", "too-deep"],
)
def test_lines_are_decoded_as_strictly_as_http_bodies(line: bytes, code: int, msg_id: int | None) -> None:
    error, after = run_lines(stdio_app, line, {"jsonrpc": "2.0", "id": "after", "method": "ping"})
    assert (error["id"], error["error"]["code"]) == (msg_id, code)
    assert after == {"jsonrpc": "2.0", "id": "after", "result": {}}


def test_the_input_limits_of_the_app_apply(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    app = make_app(mcp, MCP_MAX_CONTENT_LENGTH=128, MCP_MAX_JSON_KEYS=4)
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    too_long = {**ping, "params": {"pad": "x" * 128}}
    too_many = {**ping, "params": {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}}
    length, keys, answered = run_lines(app, too_long, too_many, ping)
    assert length["error"] == {"code": -32600, "message": "Invalid Request: a message is larger than 128 bytes"}
    assert keys["error"]["message"] == "Invalid Request: an object has 5 members, more than the limit of 4"
    assert answered == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_an_overlong_line_is_skipped_without_being_kept(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    app = make_app(mcp, MCP_MAX_CONTENT_LENGTH=64)
    reads: list[int] = []

    class Recording(io.BytesIO):
        def readline(self, size: int | None = -1) -> bytes:
            line = super().readline(size)
            reads.append(len(line))
            return line

    stdin = Recording(b"[" * 1_000_000 + b"\n" + json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}).encode())
    stdout = io.BytesIO()
    serve_stdio(app, stdin, stdout)
    first, second = (json.loads(line) for line in stdout.getvalue().splitlines())
    assert first["error"]["code"] == -32600 and second == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert max(reads) <= 64 * 1024


@pytest.mark.parametrize(
    "params", [{"requestId": "x" * 257}, {"requestId": 2**53 + 1}, {"requestId": True}, {"reason": 3}]
)
def test_a_malformed_cancellation_is_dropped_unanswered(
    params: dict[str, t.Any], caplog: pytest.LogCaptureFixture
) -> None:
    output = run_lines(
        stdio_app,
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params},
        {"jsonrpc": "2.0", "id": "after", "method": "ping"},
    )
    assert output == [{"jsonrpc": "2.0", "id": "after", "result": {}}]
    assert "dropped notifications/cancelled" in caplog.text


def test_the_loop_goes_on_after_a_bad_line() -> None:
    output = run_lines(stdio_app, b"{", {"jsonrpc": "2.0", "id": "after", "method": "ping"})
    assert [m["id"] for m in output] == [None, "after"]


def test_unknown_method_and_tool_error() -> None:
    unknown, failed = run_lines(
        stdio_app,
        {"jsonrpc": "2.0", "id": 1, "method": "nope"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "explode", "arguments": {"reason": "x"}},
        },
    )
    assert unknown["error"]["code"] == -32601
    assert failed["result"]["isError"] is True
    assert failed["result"]["content"][0]["text"].endswith("exploded: x")


def test_print_and_stdout_logging_go_to_stderr(
    capsys: pytest.CaptureFixture[str], make_app: t.Callable[..., Flask], mcp: MCP
) -> None:
    noisy = logging.getLogger("tests.stdio.noisy")
    handler = logging.StreamHandler(sys.stdout)
    noisy.addHandler(handler)

    @mcp.tool
    def shout() -> str:
        print("printed while serving")
        noisy.warning("logged while serving")
        return "done"

    try:
        noisy.warning("logged before serving")
        original = sys.stdout
        [response] = run_lines(
            make_app(mcp), {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "shout"}}
        )
        assert sys.stdout is original and handler.stream is original  # both restored
    finally:
        noisy.removeHandler(handler)
    assert response["result"]["content"] == [{"type": "text", "text": "done"}]
    captured = capsys.readouterr()
    assert captured.out == "logged before serving\n"
    assert "printed while serving" in captured.err and "logged while serving" in captured.err


def test_needs_the_extension() -> None:
    with pytest.raises(RuntimeError, match="not set up"):
        serve_stdio(Flask("bare"), io.BytesIO(), io.BytesIO())


# -- a Context handler over pipes ---------------------------------------------


class PipeSession:
    """serve_stdio in a thread, fed and read through OS pipes, as a client process would."""

    def __init__(self, app: Flask) -> None:
        in_read, in_write = os.pipe()
        out_read, out_write = os.pipe()
        self.stdin = os.fdopen(in_write, "wb")
        self.stdout = os.fdopen(out_read, "rb")
        server_in, server_out = os.fdopen(in_read, "rb"), os.fdopen(out_write, "wb")
        self.lines: queue.Queue[bytes] = queue.Queue()

        def serve() -> None:
            with server_in, server_out:
                serve_stdio(app, server_in, server_out)

        def read() -> None:
            for line in iter(self.stdout.readline, b""):
                self.lines.put(line)

        self.server = threading.Thread(target=serve, daemon=True)
        self.reader = threading.Thread(target=read, daemon=True)
        self.server.start()
        self.reader.start()

    def send(self, message: dict[str, t.Any]) -> None:
        self.stdin.write(json.dumps(message).encode() + b"\n")
        self.stdin.flush()

    def receive(self) -> dict[str, t.Any]:
        line = self.lines.get(timeout=10)
        assert line.endswith(b"\n")
        return t.cast(dict[str, t.Any], json.loads(line))

    def close(self) -> list[dict[str, t.Any]]:
        """Close stdin; the server must end; return what it wrote after that."""
        self.stdin.close()
        self.server.join(timeout=10)
        assert not self.server.is_alive()
        self.reader.join(timeout=10)
        rest = []
        while not self.lines.empty():
            rest.append(json.loads(self.lines.get()))
        return rest


def ask(request_id: int) -> dict[str, t.Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "ask", "arguments": {"question": "6x7?"}, "_meta": {"progressToken": "p"}},
    }


def waiting_for_sampling() -> tuple[PipeSession, dict[str, t.Any]]:
    """A session whose ``ask`` call (id 1) sent its progress and now waits for the sampling answer."""
    session = PipeSession(stdio_app)
    session.send(INIT)
    session.receive()
    session.send(ask(1))
    session.receive()  # progress
    sampling = session.receive()
    assert sampling["method"] == "sampling/createMessage"
    return session, sampling


def test_context_tool_progress_and_sampling_round_trip() -> None:
    session = PipeSession(stdio_app)
    session.send(INIT)
    assert session.receive()["id"] == 0
    session.send(ask(1))
    assert session.receive() == {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": "p", "progress": 1, "total": 2, "message": "asking"},
    }
    sampling = session.receive()
    assert sampling["method"] == "sampling/createMessage"
    assert sampling["params"]["messages"] == [{"role": "user", "content": {"type": "text", "text": "6x7?"}}]
    # The reader loop keeps serving other requests while the tool waits.
    session.send({"jsonrpc": "2.0", "id": "p1", "method": "ping"})
    assert session.receive() == {"jsonrpc": "2.0", "id": "p1", "result": {}}
    answer = {"role": "assistant", "content": {"type": "text", "text": "42"}, "model": "m"}
    session.send({"jsonrpc": "2.0", "id": sampling["id"], "result": answer})
    assert session.receive()["params"]["progress"] == 2
    response = session.receive()
    assert response["id"] == 1
    assert response["result"]["content"] == [{"type": "text", "text": "model said: 42"}]
    assert session.close() == []


def test_sampling_error_answer_reaches_the_tool() -> None:
    session, sampling = waiting_for_sampling()
    session.send({"jsonrpc": "2.0", "id": sampling["id"], "error": {"code": -1, "message": "user rejected"}})
    response = session.receive()
    assert response["id"] == 1
    assert "user rejected" in json.dumps(response)
    session.close()


def test_cancelled_request_stops_waiting_and_gets_no_response() -> None:
    session, _ = waiting_for_sampling()
    session.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
    session.send({"jsonrpc": "2.0", "id": "p", "method": "ping"})
    assert session.receive()["id"] == "p"
    assert session.close() == []


def test_eof_while_waiting_ends_the_handler() -> None:
    session, _ = waiting_for_sampling()
    [response] = session.close()  # would hang for the client request timeout if the handler kept waiting
    assert response["id"] == 1
    assert "stdin was closed" in json.dumps(response)


def test_without_sampling_capability_the_tool_is_told() -> None:
    session = PipeSession(stdio_app)
    session.send({**INIT, "params": {**INIT["params"], "capabilities": {}}})  # type: ignore[dict-item]
    session.receive()
    session.send(ask(1))
    session.receive()  # progress
    response = session.receive()
    assert response["id"] == 1
    assert "sampling" in json.dumps(response)
    session.close()


def test_reusing_a_running_id_is_rejected() -> None:
    session, sampling = waiting_for_sampling()
    session.send(ask(1))
    duplicate = session.receive()
    assert (duplicate["id"], duplicate["error"]["code"]) == (1, -32600)
    session.send(
        {
            "jsonrpc": "2.0",
            "id": sampling["id"],
            "result": {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m"},
        }
    )
    session.receive()  # progress 2
    assert session.receive()["result"]["content"][0]["text"] == "model said: ok"
    session.close()


# -- the official SDK client over a real subprocess -------------------------------


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def server_parameters() -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "flask", "--app", "tests.stdio_app", "mcp", "stdio"],
        env={"PYTHONPATH": str(REPO_ROOT)},
        cwd=str(REPO_ROOT),
    )


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto", "2026-07-28"])
async def test_sdk_client_over_stdio(mode: t.Literal["legacy", "auto", "2026-07-28"]) -> None:
    """The official client launches ``flask --app tests.stdio_app mcp stdio`` and uses every kind."""
    asked: list[str] = []

    async def sampling(context: t.Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        asked.append(params.messages[0].content.text)  # type: ignore[union-attr]
        return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="42"), model="m")

    async with Client(server_parameters(), mode=mode, sampling_callback=sampling) as client:
        tools = await client.list_tools()
        assert {tool.name for tool in tools.tools} == {"add", "explode", "chatty", "ask", "touch"}
        added = await client.call_tool("add", {"a": 20, "b": 22})
        assert added.structured_content == {"result": 42}
        chatty = await client.call_tool("chatty", {"word": "yo"})  # prints: must not corrupt the stream
        assert chatty.content[0].text == "tests.stdio_app:yo"  # type: ignore[union-attr]
        failed = await client.call_tool("explode", {"reason": "boom"})
        assert failed.is_error
        answered = await client.call_tool("ask", {"question": "6x7?"})
        assert answered.content[0].text == "model said: 42"  # type: ignore[union-attr]
        motd = await client.read_resource("config://motd")
        assert motd.contents[0].text == "Hello from stdio"  # type: ignore[union-attr]
        templated = await client.read_resource("notes://7")
        assert templated.contents[0].text == "note 7"  # type: ignore[union-attr]
        prompt = await client.get_prompt("review", {"code": "x = 1"})
        assert prompt.messages[0].content.text == "Review this python:\nx = 1"  # type: ignore[union-attr]
    assert asked == ["6x7?"]


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "2026-07-28"])
async def test_sdk_client_listens_over_stdio(mode: t.Literal["auto", "2026-07-28"]) -> None:
    """A listen stream shares stdout with the calls: the update for the subscribed URI arrives, tagged."""
    async with Client(server_parameters(), mode=mode) as client:
        assert client.protocol_version == "2026-07-28"
        async with client.listen(resource_subscriptions=["notes://7"]) as subscription:
            await client.call_tool("touch", {"note_id": "8"})  # not subscribed: never delivered
            await client.call_tool("touch", {"note_id": "7"})
            with anyio.fail_after(10):
                event = await subscription.__anext__()
    assert str(event.uri) == "notes://7"  # type: ignore[union-attr]


# -- the modern era over stdio --------------------------------------------------------------

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"sampling": {}},
}


def modern(request_id: t.Any, method: str, **params: t.Any) -> dict[str, t.Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": MODERN_META}}


def test_modern_requests_stand_alone_beside_a_handshake_session() -> None:
    """No initialize needed; removed methods are unknown; a handshake on the same pipe still works."""
    session = PipeSession(stdio_app)
    session.send(modern(1, "tools/call", name="add", arguments={"a": 1, "b": 2}))
    result = session.receive()["result"]
    assert (result["structuredContent"], result["resultType"]) == ({"result": 3}, "complete")
    session.send(modern(2, "ping"))
    assert session.receive()["error"]["code"] == -32601
    session.send(INIT)
    assert session.receive()["result"]["protocolVersion"] == "2025-11-25"
    session.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
    assert session.receive() == {"jsonrpc": "2.0", "id": 3, "result": {}}
    assert session.close() == []


def test_a_modern_round_over_stdio() -> None:
    """The tool's question is an input_required result; the retry with the answer completes it."""
    session = PipeSession(stdio_app)
    session.send(modern(1, "tools/call", name="ask", arguments={"question": "6x7?"}))
    asked = session.receive()["result"]
    [(key, request)] = asked["inputRequests"].items()
    assert request["method"] == "sampling/createMessage"
    answer = {"role": "assistant", "content": {"type": "text", "text": "42"}, "model": "m"}
    retry = {"inputResponses": {key: answer}, "requestState": asked["requestState"]}
    session.send(modern(2, "tools/call", name="ask", arguments={"question": "6x7?"}, **retry))
    assert session.receive()["result"]["content"] == [{"type": "text", "text": "model said: 42"}]
    assert session.close() == []


def test_a_listen_stream_ends_with_its_cancellation_and_without_a_response() -> None:
    session = PipeSession(stdio_app)
    session.send(modern("L", "subscriptions/listen", notifications={"resourceSubscriptions": ["notes://1"]}))
    ack = session.receive()
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": "L"}
    session.send(modern(1, "tools/call", name="touch", arguments={"note_id": "1"}))
    first, second = session.receive(), session.receive()
    update = first if "method" in first else second
    assert update == {
        "jsonrpc": "2.0",
        "method": "notifications/resources/updated",
        "params": {"uri": "notes://1", "_meta": {"io.modelcontextprotocol/subscriptionId": "L"}},
    }
    session.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "L"}})
    session.send(modern(2, "tools/call", name="touch", arguments={"note_id": "1"}))
    assert session.receive()["id"] == 2  # the cancelled stream says nothing more
    assert session.close() == []


def waiting_task(make_app: t.Callable[..., Flask], **config: t.Any) -> tuple[PipeSession, str]:
    """A stdio session whose 2025-11-25 task (tool ``erase``) waits for the answer to its question."""
    mcp = MCP(name="stdio-tasks")

    @mcp.tool(task="required")
    def erase(filename: str, ctx: flask_mcp.Context) -> str:
        answer = ctx.elicit(f"Erase {filename}?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
        return "erased" if (answer.content or {}).get("ok") else "kept"

    session = PipeSession(make_app(mcp, MCP_TASK_POLL_INTERVAL=0.01, **config))
    session.send({**INIT, "params": {**INIT["params"], "capabilities": {"elicitation": {}}}})
    session.receive()
    session.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                  "params": {"name": "erase", "arguments": {"filename": "a.txt"}, "task": {}}})  # fmt: skip
    task_id = session.receive()["result"]["task"]["taskId"]
    status, polls = "working", 0
    while status == "working" and polls < 500:  # poll as a client does, bounded
        polls += 1
        session.send({"jsonrpc": "2.0", "id": f"get-{polls}", "method": "tasks/get", "params": {"taskId": task_id}})
        status = session.receive()["result"]["status"]
    assert status == "input_required"
    return session, task_id


def ask_for_result(session: PipeSession, task_id: str, request_id: int) -> dict[str, t.Any]:
    """Send tasks/result; the question it brings."""
    session.send({"jsonrpc": "2.0", "id": request_id, "method": "tasks/result", "params": {"taskId": task_id}})
    question = session.receive()
    assert question["method"] == "elicitation/create" and question["params"]["message"] == "Erase a.txt?"
    assert question["params"]["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}
    return question


def test_a_handshake_tasks_question_comes_on_tasks_result_over_stdio(make_app: t.Callable[..., Flask]) -> None:
    session, task_id = waiting_task(make_app)
    question = ask_for_result(session, task_id, 2)
    session.send({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": {"ok": True}}})
    messages = [session.receive()]
    while "id" not in messages[-1]:
        messages.append(session.receive())
    assert messages[-1]["id"] == 2 and messages[-1]["result"]["content"][0]["text"] == "erased"
    assert {message["method"] for message in messages[:-1]} == {"notifications/tasks/status"}
    session.close()


def test_a_question_left_unanswered_is_asked_again_by_the_next_tasks_result(make_app: t.Callable[..., Flask]) -> None:
    session, task_id = waiting_task(make_app, MCP_CLIENT_REQUEST_TIMEOUT=0.2)
    ask_for_result(session, task_id, 2)  # and no answer
    ended = session.receive()
    assert ended["id"] == 2 and ended["error"]["code"] == -32001
    session.send({"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": {"taskId": task_id}})
    assert session.receive()["result"]["status"] == "input_required"  # still waiting, not failed
    question = ask_for_result(session, task_id, 4)
    session.send({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "decline"}})
    messages = [session.receive()]
    while "id" not in messages[-1]:
        messages.append(session.receive())
    assert messages[-1]["id"] == 4 and messages[-1]["result"]["content"][0]["text"] == "kept"
    session.close()
