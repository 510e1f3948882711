"""What the audit trail costs a plain ``tools/call``, in process: ``MCP_AUDIT`` off and on, side by side.

One ``tools/call`` of ``add(a, b)`` at a time, through the WSGI app with
Flask's test client (no HTTP server, no network), in both eras, on two apps
that differ only in ``MCP_AUDIT`` (rows written to SQLite in a temporary
folder, by the writer's thread), next to a bare Flask view doing the same
work (read the JSON body, add, answer JSON): the floor.

Each case is timed for ``--calls`` calls, ``--rounds`` times, interleaved;
the report gives the best round's microseconds per call, each case against
the floor, and ``on`` against ``off`` (the target: within 10 %). The time of
``on`` includes writing every row of its round (the writer's thread shares
the interpreter with the calls), and no row may be lost. Run it with
``python benchmarks/audit.py``; nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import typing as t
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flask import Flask, request

from flask_mcp import MCP
from flask_mcp.audit.installed import audit_log_of
from flask_mcp.testing import MCPTestClient

__all__ = ["main", "measure"]

ERAS = ("handshake", "modern")
CASES = ("floor", "off", "on")


def _app(audit: bool, folder: str) -> Flask:
    Path(folder).mkdir(parents=True, exist_ok=True)
    mcp = MCP(name="bench", version="1")

    @mcp.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    app = Flask("bench", instance_path=folder)
    app.config.update(MCP_OTEL_ENABLED=False, MCP_AUDIT=audit, MCP_AUDIT_DATABASE_URI=f"sqlite:///{folder}/audit.db")
    mcp.init_app(app)
    return app


def _floor() -> Flask:
    app = Flask("floor")

    @app.post("/add")
    def add() -> dict[str, t.Any]:
        arguments = (request.get_json() or {}).get("arguments") or {}
        return {"result": int(arguments["a"]) + int(arguments["b"])}

    return app


def _callers(folder: str, era: str) -> tuple[dict[str, t.Callable[[], t.Any]], list[Flask]]:
    apps = {"off": _app(False, f"{folder}/off-{era}"), "on": _app(True, f"{folder}/on-{era}")}
    callers: dict[str, t.Callable[[], t.Any]] = {}
    floor = _floor().test_client()
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}}
    callers["floor"] = lambda: floor.post("/add", json=body["params"])
    for case, app in apps.items():
        client = MCPTestClient(app, era=era)
        if era == "handshake":
            client.initialize()
        callers[case] = lambda client=client: client.call_tool("add", {"a": 1, "b": 2})
    return callers, list(apps.values())


def measure(calls: int = 2000, rounds: int = 5) -> dict[str, t.Any]:
    """Microseconds per call of each case and era (its best round), and the ratios."""
    report: dict[str, t.Any] = {"calls": calls, "rounds": rounds, "us_per_call": {}, "ratios": {}}
    with tempfile.TemporaryDirectory() as folder:
        for era in ERAS:
            callers, apps = _callers(folder, era)
            for call in callers.values():
                call()  # warm
            best = dict.fromkeys(CASES, float("inf"))
            log = audit_log_of(apps[1])
            assert log is not None
            for _ in range(rounds):
                for case in CASES:
                    call = callers[case]
                    start = time.perf_counter()
                    for _ in range(calls):
                        call()
                    if case == "on":
                        # Every row of the round written before the clock stops: the writer's time is the
                        # round's, not spilled into the next case's.
                        assert log.writer.flush(60)
                    best[case] = min(best[case], (time.perf_counter() - start) / calls * 1e6)
            assert log.writer.flush(60)
            written, lost = log.writer.written, log.writer.dropped + log.writer.failed
            for app in apps:
                app.extensions["mcp"].shutdown()
            report["us_per_call"][era] = {case: round(value, 1) for case, value in best.items()}
            report["ratios"][era] = {
                "off_vs_floor": round(best["off"] / best["floor"], 2),
                "on_vs_floor": round(best["on"] / best["floor"], 2),
                "on_vs_off": round(best["on"] / best["off"], 3),
            }
            report.setdefault("rows", {})[era] = {"written": written, "lost": lost}
    return report


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
