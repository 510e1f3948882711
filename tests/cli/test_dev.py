"""``flask mcp dev``: Flask's run with reloader and debugger, announcing the endpoint and the Inspector command."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import typing as t
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from flask import Flask

from flask_mcp import MCP
from flask_mcp.cli.dev import endpoint_url, inspector_command

from ..conftest import free_port
from ..stdio_app import app as stdio_app

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, t.Any]]:
    """What Flask's run command would serve, instead of serving it."""
    calls: list[dict[str, t.Any]] = []
    monkeypatch.setattr("flask.cli.run_simple", lambda *args, **kwargs: calls.append({"args": args, **kwargs}))
    monkeypatch.delenv("WERKZEUG_RUN_MAIN", raising=False)
    monkeypatch.setenv("FLASK_DEBUG", "0")  # restored after the test: dev sets it as flask --debug does
    monkeypatch.setattr(stdio_app, "debug", False)  # and so is the shared app's debug flag
    return calls


def dev(app: Flask, *args: str) -> t.Any:
    return app.test_cli_runner().invoke(args=["mcp", "dev", *args])


def test_dev_runs_flasks_server_with_reloader_and_debugger(served: list[dict[str, t.Any]]) -> None:
    result = dev(stdio_app, "--port", "5077", "--host", "0.0.0.0")
    assert result.exit_code == 0, result.output
    [call] = served
    assert call["args"][:2] == ("0.0.0.0", 5077)
    assert call["use_reloader"] is True and call["use_debugger"] is True
    assert os.environ["FLASK_DEBUG"] == "1" and stdio_app.debug
    url = "http://127.0.0.1:5077/mcp"  # a wildcard address is reached on loopback
    assert result.stdout.splitlines()[:4] == [
        f"MCP endpoint: {url} (Streamable HTTP)",
        "Open it in the MCP Inspector:",
        f"  npx @modelcontextprotocol/inspector --transport http --server-url {url}",
        "",
    ]
    assert " * Debug mode: on" in result.stdout  # Flask's own banner follows
    assert "token" not in result.stdout


def test_the_reloaded_process_prints_nothing_again(
    served: list[dict[str, t.Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WERKZEUG_RUN_MAIN", "true")
    result = dev(stdio_app)
    assert result.exit_code == 0, result.output
    assert "MCP endpoint" not in result.stdout
    assert len(served) == 1


def test_a_protected_app_says_how_to_give_the_inspector_a_token(
    served: list[dict[str, t.Any]], make_app: t.Callable[..., Flask]
) -> None:
    app = make_app(MCP(name="shop"), MCP_AUTH_TOKENS={"t": "ada"}, MCP_URL_PREFIX="/api/mcp")
    text = dev(app, "--port", "8123").stdout
    assert "--server-url http://127.0.0.1:8123/api/mcp" in text
    assert "This app requires a bearer token" in text
    assert '--header "Authorization: Bearer $FLASK_MCP_TOKEN"' in text


def test_an_oauth_app_says_the_inspector_signs_in(
    served: list[dict[str, t.Any]], make_app: t.Callable[..., Flask]
) -> None:
    app = make_app(
        MCP(name="shop"), MCP_AUTH_TOKENS={"t": "ada"}, MCP_AUTH_AUTHORIZATION_SERVERS=["https://auth.example.com"]
    )
    text = dev(app).stdout
    assert "This app signs clients in with OAuth (https://auth.example.com):" in text
    assert "--header" not in text


def test_a_port_the_system_would_pick_is_refused(served: list[dict[str, t.Any]]) -> None:
    result = dev(stdio_app, "--port", "0")
    assert result.exit_code == 2
    assert "give a port to listen on" in result.stderr
    assert served == []


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("127.0.0.1", "http://127.0.0.1:5000/mcp"),
        ("localhost", "http://localhost:5000/mcp"),
        ("0.0.0.0", "http://127.0.0.1:5000/mcp"),
        ("::", "http://[::1]:5000/mcp"),
        ("::1", "http://[::1]:5000/mcp"),
    ],
)
def test_endpoint_url(host: str, url: str) -> None:
    assert endpoint_url(stdio_app, host, 5000) == url
    assert inspector_command(url).endswith(f"--transport http --server-url {url}")


# -- the real thing: a subprocess with its reloader ------------------------------------


def _pump(stream: t.IO[bytes], lines: queue.Queue[str | None]) -> None:
    for raw in iter(stream.readline, b""):
        lines.put(raw.decode(errors="replace"))
    lines.put(None)


def _initialize(url: str, deadline: float) -> dict[str, t.Any]:
    """The result of ``initialize`` at *url*, retried until the server listens (or the deadline)."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    while True:
        request = urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                text = response.read().decode()
                kind = response.headers.get_content_type()
            break
        except urllib.error.URLError as exc:
            if not isinstance(exc.reason, ConnectionRefusedError) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)  # polling a real condition: the reloaded process accepting connections
    if kind == "text/event-stream":
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
    return t.cast(dict[str, t.Any], json.loads(text)["result"])


def _gone(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return True
    return False


def test_dev_serves_the_app_in_a_real_process_and_stops_with_its_group(tmp_path: Path) -> None:
    port = free_port()
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("FLASK_", "WERKZEUG_"))}
    command = [sys.executable, "-m", "flask", "--app", "tests/stdio_app.py", "mcp", "dev", "--port", str(port)]
    with open(tmp_path / "stderr.log", "wb") as errors:
        process = subprocess.Popen(
            command, cwd=REPO, env=environment, stdout=subprocess.PIPE, stderr=errors, start_new_session=True
        )
    assert process.stdout is not None
    lines: queue.Queue[str | None] = queue.Queue()
    reader = threading.Thread(target=_pump, args=(process.stdout, lines))
    reader.start()
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 60
        seen: list[str] = []
        while not any(f"MCP endpoint: {url}" in line for line in seen):
            line = lines.get(timeout=max(deadline - time.monotonic(), 0.01))
            assert line is not None, "".join(seen) + (tmp_path / "stderr.log").read_text()
            seen.append(line)
        result = _initialize(url, deadline)
        assert result["serverInfo"]["name"] == "stdio-app"
        assert result["protocolVersion"] == "2025-11-25"
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
        reader.join(timeout=30)
        process.stdout.close()
    # The reloader's parent reaps the server process it started: nothing of the group is left.
    deadline = time.monotonic() + 30
    while not _gone(process.pid):
        assert time.monotonic() < deadline, "a process of the dev server's group outlived it"
        time.sleep(0.05)
    assert " * Debugger is active!" in (tmp_path / "stderr.log").read_text()
