"""What the telemetry costs a ``tools/call``, in process: off, the API without an SDK, and the SDK.

One modern ``tools/call`` of ``add(a, b)`` at a time, through the WSGI app
with Flask's test client (no HTTP server, no network), on three apps that
differ only in their telemetry:

- ``off``: ``MCP_OTEL_ENABLED = False``, the core has no tracer (as without the API installed);
- ``api``: the OpenTelemetry API installed, no SDK set up (its global providers are stand-ins);
- ``sdk``: the SDK's providers, spans to an in-memory exporter through a
  simple (synchronous) processor and measurements to an in-memory reader.

Each is timed for ``--calls`` calls, ``--rounds`` times, interleaved; the
report gives the best round's microseconds per call and the difference to
``off``. Run it with ``python benchmarks/telemetry.py``; nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import json
import time
import typing as t

from flask import Flask

from flask_mcp import MCP
from flask_mcp.protocol.versions import MODERN_PROTOCOL_VERSIONS
from flask_mcp.testing import MCPTestClient

__all__ = ["main", "measure"]

CASES = ("off", "api", "sdk")


def _app(case: str) -> tuple[Flask, t.Callable[[], None]]:
    mcp = MCP(name="bench", version="1")

    @mcp.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    app = Flask("bench")
    app.config.update(MCP_OTEL_ENABLED=case != "off")
    mcp.init_app(app)
    if case != "sdk":
        return app, lambda: None
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from flask_mcp.telemetry import instrument

    exporter = InMemorySpanExporter()
    traces = TracerProvider()
    traces.add_span_processor(SimpleSpanProcessor(exporter))
    meters = MeterProvider(metric_readers=[InMemoryMetricReader()])
    instrument(app, tracer_provider=traces, meter_provider=meters)

    def close() -> None:
        exporter.clear()
        traces.shutdown()
        meters.shutdown()

    return app, close


def measure(calls: int = 2000, rounds: int = 5) -> dict[str, t.Any]:
    """Microseconds per ``tools/call`` of each case (its best round), and each one's extra over ``off``."""
    clients: dict[str, MCPTestClient] = {}
    closers = []
    for case in CASES:
        app, close = _app(case)
        closers.append(close)
        clients[case] = MCPTestClient(app, era="modern")
        clients[case].modern_version = MODERN_PROTOCOL_VERSIONS[0]
        clients[case].call_tool("add", {"a": 1, "b": 2})  # warm
    best = dict.fromkeys(CASES, float("inf"))
    try:
        for _ in range(rounds):
            for case, client in clients.items():
                start = time.perf_counter()
                for _ in range(calls):
                    client.call_tool("add", {"a": 1, "b": 2})
                best[case] = min(best[case], (time.perf_counter() - start) / calls * 1e6)
    finally:
        for close in closers:
            close()
    return {
        "calls": calls,
        "rounds": rounds,
        "us_per_call": {case: round(value, 1) for case, value in best.items()},
        "extra_us_over_off": {case: round(best[case] - best["off"], 1) for case in CASES},
    }


def main(argv: list[str] | None = None) -> dict[str, t.Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args(argv)
    report = measure(options.calls, options.rounds)
    print(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
