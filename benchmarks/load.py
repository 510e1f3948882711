"""Load generators: wrk (Debian package) with a Lua script, or a Python fallback.

Both send ``tools/call add(a, b)`` over keep-alive connections on loopback,
every request with a unique JSON-RPC id, for a bounded duration, and return
the same measurement. The era picks the request's shape: ``handshake``
(2025-11-25, with the session when there is one) or ``modern`` (2026-07-28:
no session, an envelope in ``params._meta`` and the routing headers). The
variant picks what the call does: ``plain`` (``add``), ``jwt`` (the same call
signed in with :mod:`benchmarks.servers.signing`'s bearer token), ``static``
(signed in with its static token), ``oauth`` (with a token of the app's own
authorization server: :mod:`benchmarks.servers.oauth_issued`) or
``progress`` (the ``progress`` tool with a progress token: an event stream of
three notifications and the result).
"""

from __future__ import annotations

import dataclasses
import http.client
import itertools
import json
import os
import shutil
import statistics
import subprocess
import threading
import time
import typing as t
from pathlib import Path

LUA_SCRIPT = Path(__file__).with_name("tools_call.lua")
HANDSHAKE_VERSION = "2025-11-25"
MODERN_VERSION = "2026-07-28"
#: ``handshake``: sessions negotiated by ``initialize``; ``modern``: stateless requests with an envelope.
Era = t.Literal["handshake", "modern"]
#: What a call does: ``add`` as it is, signed in, or reporting progress (see the module).
Variant = t.Literal["plain", "jwt", "static", "oauth", "progress"]


def authorization(variant: Variant) -> dict[str, str]:
    """The bearer token of a signed-in variant (no header for the others)."""
    if variant == "oauth":
        from benchmarks.servers.oauth_issued import token

        return {"Authorization": f"Bearer {token()}"}
    if variant not in ("jwt", "static"):
        return {}
    from benchmarks.servers.signing import STATIC_TOKEN, TOKEN

    return {"Authorization": f"Bearer {TOKEN if variant == 'jwt' else STATIC_TOKEN}"}


@dataclasses.dataclass(frozen=True)
class Measurement:
    """Requests per second, latency percentiles and errors of one run."""

    rps: float
    p50_ms: float
    p99_ms: float
    errors: int


def mcp_headers(session: str) -> dict[str, str]:
    """The headers of an MCP POST, with the session when there is one."""
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": HANDSHAKE_VERSION,
    }
    if session:
        headers["Mcp-Session-Id"] = session
    return headers


def call_headers(session: str, era: Era = "handshake", variant: Variant = "plain") -> dict[str, str]:
    """The headers of a ``tools/call add``: modern ones carry the revision and the routing headers."""
    if era == "handshake":
        return {**mcp_headers(session), **authorization(variant)}
    tool = "progress" if variant == "progress" else "add"
    routing = {"MCP-Protocol-Version": MODERN_VERSION, "Mcp-Method": "tools/call", "Mcp-Name": tool}
    return {**mcp_headers(""), **routing, **authorization(variant)}


def call_body(request_id: int, a: int, b: int, era: Era = "handshake", variant: Variant = "plain") -> dict[str, t.Any]:
    """The JSON-RPC ``tools/call add(a, b)``; a modern one carries its envelope in ``params._meta``."""
    params: dict[str, t.Any] = {"name": "progress" if variant == "progress" else "add", "arguments": {"a": a, "b": b}}
    meta: dict[str, t.Any] = {}
    if era == "modern":
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    if variant == "progress":
        meta["progressToken"] = f"p-{request_id}"
    if meta:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def version(era: Era) -> str:
    """The ``MCP-Protocol-Version`` the load of *era* sends."""
    return MODERN_VERSION if era == "modern" else HANDSHAKE_VERSION


def available() -> str:
    """``"wrk"`` when the binary is installed, else ``"python"``."""
    return "wrk" if shutil.which("wrk") else "python"


def run_wrk(
    port: int,
    session: str,
    concurrency: int,
    duration: float,
    era: Era = "handshake",
    cpus: str | None = None,
    variant: Variant = "plain",
) -> Measurement:
    """Run wrk with the Lua script (the era and version passed in its environment); ``done()`` prints a JSON line.

    :param cpus: the CPUs wrk runs on (``taskset -c``); ``None``: any.
    """
    threads = min(concurrency, 2)
    command = [
        *(["taskset", "-c", cpus] if cpus else []),
        "wrk", f"-t{threads}", f"-c{concurrency}", f"-d{max(1, round(duration))}s", "--timeout", "10s",
        "-s", str(LUA_SCRIPT), f"http://127.0.0.1:{port}",
    ]  # fmt: skip
    output = subprocess.run(
        command,
        env={
            **os.environ,
            "MCP_SESSION": session,
            "MCP_ERA": era,
            "MCP_PROTOCOL_VERSION": version(era),
            "MCP_VARIANT": variant,
            "MCP_AUTHORIZATION": authorization(variant).get("Authorization", ""),
        },
        capture_output=True,
        text=True,
        check=True,
        timeout=duration + 60,
    ).stdout
    summary = json.loads(output.strip().splitlines()[-1])
    seconds = summary["duration_us"] / 1e6
    return Measurement(
        rps=summary["requests"] / seconds,
        p50_ms=summary["p50_us"] / 1000,
        p99_ms=summary["p99_us"] / 1000,
        errors=summary["errors"],
    )


def run_python(
    port: int,
    session: str,
    concurrency: int,
    duration: float,
    era: Era = "handshake",
    cpus: str | None = None,
    variant: Variant = "plain",
) -> Measurement:
    """A thread per connection, each looping until the deadline (slower than wrk; documented).

    :param cpus: ignored: this process's threads are not moved.
    """
    ids = itertools.count(1)
    lock = threading.Lock()
    latencies: list[float] = []
    errors = 0
    deadline = time.monotonic() + duration
    headers = call_headers(session, era, variant)

    def worker() -> None:
        nonlocal errors
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        mine: list[float] = []
        failed = 0
        while time.monotonic() < deadline:
            with lock:
                request_id = next(ids)
            body = json.dumps(call_body(request_id, request_id % 1000, 2, era, variant))
            started = time.perf_counter()
            try:
                connection.request("POST", "/mcp", body, headers)
                response = connection.getresponse()
                response.read()
                if response.status != 200:
                    failed += 1
            except OSError:
                failed += 1
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                continue
            mine.append(time.perf_counter() - started)
        connection.close()
        with lock:
            latencies.extend(mine)
            errors += failed

    started = time.monotonic()
    workers = [threading.Thread(target=worker) for _ in range(concurrency)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join()
    elapsed = time.monotonic() - started
    if not latencies:
        return Measurement(0.0, 0.0, 0.0, errors)
    cuts = statistics.quantiles(latencies, n=100, method="inclusive") if len(latencies) > 1 else latencies * 99
    return Measurement(len(latencies) / elapsed, cuts[49] * 1000, cuts[98] * 1000, errors)


def measure(
    tool: str,
    port: int,
    session: str,
    concurrency: int,
    duration: float,
    era: Era = "handshake",
    cpus: str | None = None,
    variant: Variant = "plain",
) -> Measurement:
    """Run the chosen load generator (wrk on *cpus* when given)."""
    runner = run_wrk if tool == "wrk" else run_python
    return runner(port, session, concurrency, duration, era, cpus, variant)
