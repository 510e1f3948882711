"""The granian command of ``docs/deployment.rst`` serves both eras and streams, started for real on a free port."""

from __future__ import annotations

import importlib.util
import json
import re
import shlex
import socket
import subprocess
import sys
import time
import typing as t
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("granian") is None, reason="granian is not installed (pip install -e '.[test]')"
)

ROOT = Path(__file__).resolve().parents[1]
DEPLOYMENT = ROOT / "docs" / "deployment.rst"
MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}


def documented_command() -> list[str]:
    """The granian command line of the deployment page, as a user would type it."""
    found = re.search(r"^\s+(granian --interface wsgi .*'app:create_app')$", DEPLOYMENT.read_text(), re.MULTILINE)
    assert found, "docs/deployment.rst shows no granian command for app:create_app"
    return shlex.split(found.group(1))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_documented_command() -> tuple[subprocess.Popen[bytes], int]:
    """The documented command, serving ``tests/deployment_app.py`` on a free port, once it listens."""
    port = free_port()
    command = documented_command()
    command[command.index("--port") + 1] = str(port)
    command[-1] = "tests.deployment_app:create_app"
    command = [sys.executable, "-m", *command]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process, port
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                output = process.stdout.read().decode() if process.stdout else ""  # type: ignore[union-attr]
                pytest.fail(f"granian did not start: {output}")
            time.sleep(0.05)  # polling the real condition (the port answers), with a deadline


def stop(process: subprocess.Popen[bytes]) -> str:
    """Stop *process*; everything it printed."""
    process.terminate()
    try:
        output, _ = process.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
    return output.decode(errors="replace")


def test_every_warning_of_the_documented_command_is_explained() -> None:
    """What granian warns of at start is quoted on the page, with why it is fine."""
    process, _ = start_documented_command()
    output = stop(process)
    page = " ".join(DEPLOYMENT.read_text().split())
    warned = re.findall(r"\[WARNING\] (.*)", output)
    for warning in warned:
        quoted = re.search(r"which (seems quite high compared to the number of CPU cores available)", warning)
        assert quoted is not None, f"granian warns of something the page does not explain: {warning}"
        assert f'"{quoted.group(1)}"' in page


@pytest.fixture
def granian_server() -> t.Iterator[str]:
    """The documented command, serving ``tests/deployment_app.py`` on a free port; its base URL."""
    process, port = start_documented_command()
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(process)


def post(url: str, message: dict[str, t.Any], headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(
        url,
        json.dumps(message).encode(),
        {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()


def events(body: bytes) -> list[dict[str, t.Any]]:
    return [json.loads(line[5:]) for line in body.decode().splitlines() if line.startswith("data:")]


def test_the_documented_command_is_one_worker_with_threads_above_the_stream_cap() -> None:
    command = documented_command()
    assert command[command.index("--workers") + 1] == "1"
    assert int(command[command.index("--blocking-threads") + 1]) > 32  # MCP_MAX_STREAMS' default


def test_both_eras_and_a_stream_under_granian(granian_server: str) -> None:
    url = granian_server
    # The handshake era: initialize, then a call in the session.
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    status, headers, _ = post(url, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}, {})
    session = {"Mcp-Session-Id": headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
    assert status == 200
    post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    call = {"name": "add", "arguments": {"a": 40, "b": 2}}
    _, _, body = post(url, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}, session)
    assert json.loads(body)["result"]["structuredContent"] == {"result": 42}
    # The 2026-07-28 era: no session, the envelope in _meta and the routing headers.
    modern = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "add"}
    message = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {**call, "_meta": META}}
    _, _, body = post(url, message, modern)
    result = json.loads(body)["result"]
    assert (result["structuredContent"], result["resultType"]) == ({"result": 42}, "complete")
    # A streamed call: its progress, then its result, as events.
    streamed = {"name": "count", "arguments": {"to": 3}, "_meta": {**META, "progressToken": "p"}}
    message = {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": streamed}
    _, headers, body = post(url, message, {**modern, "Mcp-Name": "count"})
    assert headers["content-type"].startswith("text/event-stream")
    sent = events(body)
    assert [e["params"]["progress"] for e in sent if e.get("method") == "notifications/progress"] == [1, 2, 3]
    assert sent[-1]["id"] == 4 and sent[-1]["result"]["structuredContent"] == {"result": 3}
