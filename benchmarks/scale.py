"""Whether a ``tools/call`` costs more on a bigger server: tools, resources, sessions, unused signals.

    python benchmarks/scale.py [--batch N] [--rounds N] [--json PATH]

Each variant is the benchmark app (``add(a, b)``, sessions in SimpleCache)
with one thing grown: 1,000 registered tools, 100 resources, 1,000 open
sessions, or receivers on every signal a ``tools/call`` does not send
(resource reads, prompt gets, sessions starting and ending). The same
``tools/call add`` is sent to each, in the handshake era (in a session) and
in the 2026-07-28 era, through the WSGI app in process with a prepared
environ: no server, no sockets, so only the app's own cost is measured.

The variants are measured in interleaved batches (every variant's batch,
then again, ``--rounds`` times), and each keeps its fastest batch: the CPU
time of the calling thread per call, which other processes on the machine
disturb least. The report is each variant's time and its ratio to the plain
app's in the same run.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import time
import typing as t
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.load import Era, call_body, call_headers
from benchmarks.servers.flask_mcp_app import BASE_TOOLS, create_app

if t.TYPE_CHECKING:
    from flask import Flask

DEFAULT_JSON = Path(__file__).with_name("results") / "scale.json"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "scale", "version": "1"}},
}


def environ_for(body: bytes, headers: dict[str, str]) -> dict[str, t.Any]:
    """A WSGI environ for ``POST /mcp`` with *body* and *headers* (``wsgi.input`` is set per call)."""
    environ: dict[str, t.Any] = {
        "REQUEST_METHOD": "POST", "PATH_INFO": "/mcp", "SCRIPT_NAME": "", "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "8000", "SERVER_PROTOCOL": "HTTP/1.1",
        "wsgi.url_scheme": "http", "wsgi.errors": sys.stderr, "wsgi.multithread": True,
        "wsgi.multiprocess": False, "wsgi.run_once": False, "wsgi.version": (1, 0),
        "REMOTE_ADDR": "127.0.0.1", "HTTP_HOST": "127.0.0.1:8000", "CONTENT_LENGTH": str(len(body)),
        # As gunicorn and granian say: the server ends the body (werkzeug then reads it as it is).
        "wsgi.input_terminated": True,
    }  # fmt: skip
    for name, value in headers.items():
        key = "CONTENT_TYPE" if name.lower() == "content-type" else "HTTP_" + name.upper().replace("-", "_")
        environ[key] = value
    return environ


def post(
    app: Flask, message: dict[str, t.Any], headers: dict[str, str], client: str = "127.0.0.1"
) -> tuple[str, dict[str, str], bytes]:
    """One POST through the WSGI app from address *client*: its status, headers and body."""
    body = json.dumps(message).encode()
    environ = {**environ_for(body, headers), "wsgi.input": io.BytesIO(body), "REMOTE_ADDR": client}
    answered: dict[str, t.Any] = {}

    def start_response(status: str, response_headers: list[tuple[str, str]], exc_info: t.Any = None) -> None:
        answered.update(status=status, headers=dict(response_headers))

    chunks = app(environ, start_response)
    data = b"".join(chunks)
    getattr(chunks, "close", lambda: None)()
    return answered["status"], answered["headers"], data


def open_session(app: Flask, client: str = "127.0.0.1", headers: dict[str, str] | None = None) -> str:
    """``initialize`` and ``notifications/initialized`` from address *client* (with *headers*); the session id."""
    accept = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **(headers or {})}
    status, answer_headers, data = post(app, INITIALIZE, accept, client)
    if "Mcp-Session-Id" not in answer_headers:
        raise SystemExit(f"initialize failed: {status} {data!r}")
    session = answer_headers["Mcp-Session-Id"]
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    post(app, initialized, {**call_headers(session), **(headers or {})}, client)
    return session


def caller(app: Flask, era: Era) -> t.Callable[[], None]:
    """A function sending one ``tools/call add(40, 2)`` in *era*, checked once here."""
    session = open_session(app) if era == "handshake" else ""
    body = json.dumps(call_body(7, 40, 2, era)).encode()
    environ = environ_for(body, call_headers(session, era))
    status, _, data = post(app, call_body(7, 40, 2, era), call_headers(session, era))
    if not status.startswith("200") or json.loads(data)["result"]["structuredContent"] != {"result": 42}:
        raise SystemExit(f"the {era} call failed: {status} {data!r}")

    def ignore(status: str, headers: list[tuple[str, str]], exc_info: t.Any = None) -> None:
        pass

    def call() -> None:
        chunks = app({**environ, "wsgi.input": io.BytesIO(body)}, ignore)
        for _ in chunks:
            pass
        getattr(chunks, "close", lambda: None)()

    return call


def with_resources(count: int) -> Flask:
    app = create_app("stateful")
    mcp = app.extensions["mcp"].mcp
    for index in range(count):
        mcp.resource(f"data://item/{index}", name=f"item_{index}")(lambda index=index: f"item {index}")
    return app


def with_sessions(count: int) -> Flask:
    app = create_app("stateful")
    for index in range(count):
        # From as many clients: one address may only open so many sessions an hour (MCP_SESSION_RATE_LIMIT).
        open_session(app, f"10.0.{index // 250}.{index % 250 + 1}")
    return app


def with_unused_signals() -> Flask:
    from flask_mcp.core.hooks import prompt_got, resource_read, session_ended, session_started

    app = create_app("stateful")
    for signal in (resource_read, prompt_got, session_started, session_ended):
        signal.connect(_receiver, weak=False)
    return app


def _receiver(sender: t.Any, **extra: t.Any) -> None:
    pass


VARIANTS: dict[str, t.Callable[[], Flask]] = {
    "plain": lambda: create_app("stateful"),
    "1000 tools": lambda: create_app("stateful", extra_tools=1000 - BASE_TOOLS),
    "100 resources": lambda: with_resources(100),
    "1000 sessions": lambda: with_sessions(1000),
    "unused signals": with_unused_signals,
}


def measure(batch: int, rounds: int) -> dict[str, dict[str, float]]:
    """Microseconds of CPU per call, per variant and era: the fastest of *rounds* interleaved batches."""
    calls = {(name, era): caller(build(), era) for name, build in VARIANTS.items() for era in ("handshake", "modern")}
    for call in calls.values():  # warm up every path before anything is timed
        for _ in range(batch):
            call()
    best = dict.fromkeys(calls, float("inf"))
    clock = time.thread_time
    for _ in range(rounds):
        for key, call in calls.items():
            started = clock()
            for _ in range(batch):
                call()
            best[key] = min(best[key], (clock() - started) / batch * 1e6)
    return {name: {era: round(best[name, era], 1) for era in ("handshake", "modern")} for name in VARIANTS}


def main(argv: list[str] | None = None) -> dict[str, t.Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch", type=int, default=200, help="calls per batch (default 200)")
    parser.add_argument("--rounds", type=int, default=30, help="batches per variant and era (default 30)")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help=f"output file (default {DEFAULT_JSON})")
    args = parser.parse_args(argv)
    times = measure(args.batch, args.rounds)
    plain = times["plain"]
    report = {
        "batch": args.batch,
        "rounds": args.rounds,
        "us_per_call": times,
        "ratio_to_plain": {
            name: {era: round(value / plain[era], 3) for era, value in eras.items()} for name, eras in times.items()
        },
    }
    print(f"{'variant':<16}{'handshake us':>14}{'ratio':>8}{'modern us':>12}{'ratio':>8}")
    for name, eras in times.items():
        ratios = report["ratio_to_plain"][name]
        print(
            f"{name:<16}{eras['handshake']:>14.1f}{ratios['handshake']:>8.2f}{eras['modern']:>12.1f}{ratios['modern']:>8.2f}"
        )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    return report


if __name__ == "__main__":
    main()
