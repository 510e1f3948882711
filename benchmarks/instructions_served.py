"""Instructions per ``tools/call`` inside a real server, counted by callgrind: flask_mcp against its floor.

    python benchmarks/instructions_served.py [--calls N] [--only NAMES] [--json PATH]

``benchmarks/instructions.py`` counts a call in process, through the WSGI app
alone. Under a server the request also passes the server's own code (the
HTTP parser, its thread pool, the WSGI environ it builds), which is part of
what the floor costs too, and which rates under load show but cannot tell
from the machine's noise. Here each server of ``benchmarks/run.py`` runs
under ``valgrind --tool=callgrind`` with its instrumentation off; one
keep-alive connection sends it warm-up calls, then the instrumentation of
the server's processes is turned on for ``--calls`` more calls
(``callgrind_control -i on``) and off again. What they executed, divided by
the calls, is the cost of one request to the server process: its parser,
the app and the answer, whatever the machine runs besides. The Redis
scenario counts the server process only, not redis-server.
"""

from __future__ import annotations

import argparse
import glob
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import typing as t
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.load import call_body, call_headers
from benchmarks.servers_under_test import (
    IGNORED_SESSION,
    ROOT,
    SPECS,
    CheckFailed,
    Redis,
    ServerSpec,
    command_line,
    free_port,
    missing,
    wait_for_port,
)

DEFAULT_JSON = Path(__file__).with_name("results") / "instructions_served.json"
WARMUP = 300
#: Each flask_mcp scenario and its floor, on gunicorn gthread and granian's WSGI interface.
PAIRS = {
    f"{scenario}{server}": f"{floor}{server}"
    for server in ("", "@granian")
    for scenario, floor in (
        ("flask_mcp-stateful", "floor"),
        ("flask_mcp-modern", "floor-modern"),
        ("flask_mcp-redis", "floor"),
    )
}


class Served:
    """One server under callgrind, its instrumentation off, and a keep-alive connection to it."""

    def __init__(self, spec: ServerSpec, scratch: str, redis_url: str | None) -> None:
        self.spec = spec
        port = free_port()
        command, _ = command_line(spec, port)
        if spec.runner == "gunicorn":
            # The worker is slow under valgrind: its arbiter must not take it for hung.
            command[-1:-1] = ["--timeout", "600"]
        env = {**os.environ, **dict(spec.env), "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "0"}
        if redis_url:
            env["BENCH_REDIS_URL"] = redis_url
        self.out = f"{scratch}/{spec.name}"
        grind = ["valgrind", "--tool=callgrind", "--trace-children=yes", "--instr-atstart=no"]
        self.process = subprocess.Popen(
            [*grind, f"--callgrind-out-file={self.out}.%p", *command],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            wait_for_port(port, self.process, timeout=300)
            self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
            self.session = self._session()
        except BaseException:
            self.stop()
            raise
        self.sent = 0

    def _post(self, payload: dict[str, t.Any], headers: dict[str, str]) -> tuple[int, str, bytes]:
        self.connection.request("POST", "/mcp", json.dumps(payload), headers)
        response = self.connection.getresponse()
        return response.status, response.getheader("Mcp-Session-Id") or "", response.read()

    def _session(self) -> str:
        if self.spec.era != "handshake":
            return ""
        if not self.spec.stateful:
            return IGNORED_SESSION if self.spec.ignored_session else ""
        params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}
        initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
        status, session, _ = self._post(initialize, call_headers(""))
        if status != 200 or not session:
            raise CheckFailed(self.spec.name, f"initialize answered {status}")
        self._post({"jsonrpc": "2.0", "method": "notifications/initialized"}, call_headers(session))
        return session

    def calls(self, count: int) -> None:
        """Send *count* ``tools/call add``, each checked."""
        headers = call_headers(self.session, self.spec.era)
        for _ in range(count):
            self.sent += 1
            status, _, body = self._post(call_body(self.sent, self.sent % 1000, 2, self.spec.era), headers)
            if status != 200 or json.loads(body)["result"]["structuredContent"] != {"result": self.sent % 1000 + 2}:
                raise CheckFailed(self.spec.name, f"the call answered {status} {body!r}")

    def instrument(self, on: bool) -> None:
        """Turn the instrumentation of every process of the server on or off."""
        group = subprocess.run(["pgrep", "-g", str(self.process.pid)], capture_output=True, text=True).stdout.split()
        for pid in group:
            subprocess.run(["callgrind_control", "-i", "on" if on else "off", pid], capture_output=True, check=False)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=120)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()

    def counted(self) -> int:
        """Instructions the instrumented part executed, from the dumps written as the processes ended."""
        total = 0
        for path in glob.glob(self.out + ".*"):
            found = re.search(r"^totals:\s*(\d+)", Path(path).read_text(errors="replace"), re.MULTILINE)
            total += int(found.group(1)) if found else 0
        return total


def measure(name: str, calls: int, redis_url: str | None) -> float:
    """Instructions per call to the server *name* (a server of ``benchmarks/run.py``)."""
    spec = next(spec for spec in SPECS if spec.name == name)
    with tempfile.TemporaryDirectory() as scratch:
        served = Served(spec, scratch, redis_url)
        try:
            served.calls(WARMUP)
            served.instrument(True)
            served.calls(calls)
            served.instrument(False)
        finally:
            served.stop()
        return served.counted() / calls


def main(argv: list[str] | None = None) -> dict[str, t.Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=1000, help="counted calls per server (default 1000)")
    parser.add_argument("--only", default="", help="comma-separated flask_mcp scenarios (default: all of PAIRS)")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help=f"output file (default {DEFAULT_JSON})")
    args = parser.parse_args(argv)
    scenarios = [name.strip() for name in args.only.split(",") if name.strip()] or list(PAIRS)
    unknown = set(scenarios) - set(PAIRS)
    if unknown:
        raise SystemExit(f"unknown scenario(s): {', '.join(sorted(unknown))}; known: {', '.join(PAIRS)}")
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        raise SystemExit("valgrind is not installed (Debian package valgrind)")
    names = list(dict.fromkeys(name for scenario in scenarios for name in (PAIRS[scenario], scenario)))
    skipped = {name: reason for name in names if (reason := missing(next(s for s in SPECS if s.name == name)))}
    redis = Redis() if any("redis" in name for name in names if name not in skipped) else None
    counts: dict[str, float] = {}
    try:
        for name in names:
            if name in skipped:
                print(f"skipping {name}: {skipped[name]}")
                continue
            counts[name] = round(measure(name, args.calls, redis.url if redis else None))
            print(f"  {name}: {counts[name]:,.0f} instructions per call", flush=True)
    finally:
        if redis:
            redis.stop()
    ratios = {
        scenario: round(counts[PAIRS[scenario]] / counts[scenario], 3)
        for scenario in scenarios
        if scenario in counts and PAIRS[scenario] in counts
    }
    print(f"\n{'scenario':<30}{'its floor':<22}{'instructions':>14}{'floor':>12}{'ratio':>8}")
    for scenario, ratio in ratios.items():
        floor = PAIRS[scenario]
        print(f"{scenario:<30}{floor:<22}{counts[scenario]:>14,.0f}{counts[floor]:>12,.0f}{ratio:>8.3f}")
    report = {"calls": args.calls, "instructions_per_call": counts, "ratio_to_floor": ratios, "skipped": skipped}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    return report


if __name__ == "__main__":
    main()
