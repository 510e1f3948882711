"""Load test: idle event streams against ``tools/call``, under gunicorn gthread and gevent.

For each worker class it starts the benchmark app under gunicorn (one
worker, sessions in a real redis-server so the store's load can be counted),
then:

1. measures ``tools/call`` latency with no stream open;
2. opens ``--streams`` idle ``GET`` streams, each for its own session, and
   counts how many the server refused with 503 (past ``MCP_MAX_STREAMS``);
3. measures ``tools/call`` latency again while those streams stay open;
4. counts the commands Redis processes per second while they idle.

Run it with ``python benchmarks/streams.py`` (or ``nox -s bench_streams``);
``--json`` writes the numbers. It needs gunicorn, gevent for the gevent
run, and Debian's ``redis-server``. Nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import http.client
import importlib.util
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time
import typing as t
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.load import mcp_headers
from benchmarks.servers_under_test import free_port, stop_group, wait_for_output

ROOT = Path(__file__).resolve().parents[1]

#: Worker class -> gunicorn options and the stream cap the app is given.
DEPLOYMENTS: dict[str, tuple[list[str], int]] = {
    "gthread": (["-k", "gthread", "--threads", "48"], 32),
    "gevent": (["-k", "gevent", "--worker-connections", "4000"], 2000),
}


class Server:
    """The benchmark app under gunicorn with one worker."""

    def __init__(self, worker_options: list[str], max_streams: int, redis_url: str) -> None:
        self.port = free_port()
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "BENCH_MODE": "redis",
            "BENCH_REDIS_URL": redis_url,
            "BENCHCFG_MCP_MAX_STREAMS": str(max_streams),
            "BENCHCFG_MCP_SSE_IDLE_TIMEOUT": "600",
            "BENCHCFG_MCP_SESSION_RATE_LIMIT": "null",
        }
        command = [sys.executable, "-m", "gunicorn", "-w", "1", *worker_options, "-b", f"127.0.0.1:{self.port}"]
        command.append("benchmarks.servers.flask_mcp_app:create_app()")
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
        )
        wait_for_output(self.process, "Booting worker")

    def post(self, payload: dict[str, t.Any], session: str = "") -> tuple[int, dict[str, str], bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        connection.request("POST", "/mcp", json.dumps(payload), mcp_headers(session))
        response = connection.getresponse()
        body = response.read()
        connection.close()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, body

    def session(self) -> str:
        params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "load", "version": "1"}}
        status, headers, body = self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
        if status != 200:
            raise RuntimeError(f"initialize answered {status}: {body[:200]!r}")
        session = headers["mcp-session-id"]
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        return session

    def open_stream(self, session: str) -> socket.socket | int:
        """A GET stream read up to its priming event, or the status it was refused with."""
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=60)
        request = (
            f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nAccept: text/event-stream\r\n"
            f"Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n"
        )
        sock.sendall(request.encode())
        received = b""
        while b"\r\n\r\n" not in received:
            received += sock.recv(4096)
        status = int(received.split(b" ", 2)[1])
        if status != 200:
            sock.close()
            return status
        while b"id: " not in received.partition(b"\r\n\r\n")[2]:
            received += sock.recv(4096)
        return sock

    def calls(self, session: str, count: int) -> list[float]:
        """Latencies (ms) of *count* sequential ``tools/call`` requests."""
        params = {"name": "add", "arguments": {"a": 1, "b": 2}}
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        latencies = []
        for _ in range(count):
            started = time.perf_counter()
            status, _, _ = self.post(call, session)
            latencies.append((time.perf_counter() - started) * 1000)
            if status != 200:
                raise RuntimeError(f"tools/call answered {status} while streams were open")
        return latencies

    def stop(self) -> None:
        stop_group(self.process)


def redis_commands(port: int) -> int:
    """Commands the redis-server has processed so far."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"INFO stats\r\n")
        data = b""
        while b"total_commands_processed" not in data or not data.endswith(b"\r\n"):
            data += sock.recv(65536)
    line = next(line for line in data.decode().splitlines() if line.startswith("total_commands_processed:"))
    return int(line.split(":")[1])


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def run(worker: str, streams: int, calls: int, window: float, redis_port: int) -> dict[str, t.Any]:
    options, cap = DEPLOYMENTS[worker]
    server = Server(options, cap, f"redis://127.0.0.1:{redis_port}/0")
    opened: list[socket.socket] = []
    try:
        caller = server.session()
        server.calls(caller, 20)  # warm-up
        idle = server.calls(caller, calls)
        refused = 0
        for _ in range(streams):
            stream = server.open_stream(server.session())
            if isinstance(stream, int):
                refused += 1
            else:
                opened.append(stream)
        loaded = server.calls(caller, calls)
        before, started = redis_commands(redis_port), time.monotonic()
        time.sleep(window)  # the streams idle; the store's load is what is measured
        ops = (redis_commands(redis_port) - before - 1) / (time.monotonic() - started)
        return {
            "worker": worker,
            "max_streams": cap,
            "streams_requested": streams,
            "streams_open": len(opened),
            "streams_refused_503": refused,
            "idle_p50_ms": round(statistics.median(idle), 2),
            "idle_p99_ms": round(percentile(idle, 0.99), 2),
            "open_p50_ms": round(statistics.median(loaded), 2),
            "open_p99_ms": round(percentile(loaded, 0.99), 2),
            "p50_ratio": round(statistics.median(loaded) / statistics.median(idle), 2),
            "store_ops_per_s_idle_streams": round(ops, 1),
        }
    finally:
        for stream in opened:
            stream.close()
        server.stop()


def main(argv: list[str] | None = None) -> dict[str, t.Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--streams", type=int, default=1000, help="idle GET streams to open")
    parser.add_argument("--calls", type=int, default=300, help="tools/call requests per measurement")
    parser.add_argument("--window", type=float, default=5.0, help="seconds the store's load is counted over")
    parser.add_argument("--workers", default="gthread,gevent", help="worker classes to run")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args(argv)
    redis_binary = shutil.which("redis-server")
    if redis_binary is None:
        raise SystemExit("redis-server is needed (Debian package redis-server)")
    port = free_port()
    redis = subprocess.Popen(
        [redis_binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    results = []
    try:
        wait_for_output(redis, "Ready to accept connections")
        for worker in args.workers.split(","):
            if worker == "gevent" and importlib.util.find_spec("gevent") is None:
                print("gevent is not installed: skipping the gevent run (pip install gevent)")
                continue
            results.append(run(worker, args.streams, args.calls, args.window, port))
            print(json.dumps(results[-1]))
    finally:
        redis.terminate()
        redis.wait(timeout=10)
    report = {"results": results}
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
