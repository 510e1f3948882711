"""What a task costs: creating one and reading its finished result, against a plain ``tools/call``.

The same tool, ``add(a, b)``, is registered twice on one app: plain, and as
a task (``task="required"``, the embedded executor). The load is sequential
and in process, through the WSGI app (as ``tools/list`` is measured in
``run.py``), so the numbers are the framework's own cost, with no HTTP
server and no network:

- a plain call: one ``tools/call`` request;
- a task: the ``tools/call`` that creates it, the run of the tool on the
  embedded executor's thread, and ``tasks/get`` until the task has
  completed, the client waiting ``--poll`` seconds between polls (a real
  client waits ``pollIntervalMs``).

Both are paced alike: the client waits ``--poll`` seconds before each plain
call too. A request that follows an idle pause costs more CPU than one
that follows another at once (caches gone cold, the core slowed down:
about 70 µs more here, a third of a plain call in process), and a task
cannot be read without such a pause; pacing both compares the framework's
work, not the machine's idling. ``--unpaced`` runs plain calls back to
back, as the first version of this benchmark did.

The cost is CPU time of the whole process (every thread: the requests and
the executor's run), per plain call and per completed task, in the same
run; the ratio compares the two. The wall time of a task is reported too,
for what it is: mostly the wait between polls.

``--http`` measures the same over HTTP instead: the app under gunicorn
(one worker, gthread, as ``run.py`` runs flask_mcp), the cost being the CPU
time the worker process spent (from ``/proc``), per plain call and per
completed task. Run it with ``python benchmarks/tasks.py [--http]`` (or
``nox -s bench_tasks``); nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import http.client
import json as jsonlib  # the client's post() takes a json= keyword, as the test client's
import os
import statistics
import subprocess
import sys
import time
import typing as t
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flask import Flask

from benchmarks.servers_under_test import ROOT, free_port, stop_group, wait_for_output
from flask_mcp import MCP
from flask_mcp.core.tasks import EXTENSION

MODERN_VERSION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXTENSION: {}}},
}


def create_app() -> Flask:
    """The app: ``add`` plain and ``add_task`` as a task, sessions and records in SimpleCache."""
    mcp = MCP(name="bench-tasks")

    @mcp.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @mcp.tool(name="add_task", task="required")
    def add_task(a: int, b: int) -> int:
        return a + b

    app = Flask(__name__)
    app.config.update(MCP_ALLOWED_HOSTS=["*"])
    mcp.init_app(app)
    return app


def _post(client: t.Any, method: str, params: dict[str, t.Any], name: str) -> dict[str, t.Any]:
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": MODERN_VERSION,
               "Mcp-Method": method, "Mcp-Name": name}  # fmt: skip
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": META}}
    answer = client.post("/mcp", json=body, headers=headers)
    return t.cast(dict[str, t.Any], answer.get_json()["result"])


def plain_call(client: t.Any, pause: float = 0.0) -> None:
    if pause:
        time.sleep(pause)  # the client's pause before it calls, as before each poll of a task
    result = _post(client, "tools/call", {"name": "add", "arguments": {"a": 40, "b": 2}}, "add")
    assert result["structuredContent"] == {"result": 42}, result


def task_call(client: t.Any, poll: float) -> int:
    """One task created and read until completed; the number of ``tasks/get`` it took."""
    created = _post(client, "tools/call", {"name": "add_task", "arguments": {"a": 40, "b": 2}}, "add_task")
    task_id = created["taskId"]
    polls = 0
    while True:
        time.sleep(poll)  # as a client waits between polls: the executor's thread runs meanwhile
        polls += 1
        task = _post(client, "tasks/get", {"taskId": task_id}, task_id)
        if task["status"] == "completed":
            assert task["result"]["structuredContent"] == {"result": 42}, task
            return polls


def measure(calls: int, rounds: int, poll: float, pause: float) -> dict[str, t.Any]:
    """Per-call CPU microseconds of each kind (best of *rounds*), their ratio, and a task's wall time."""
    client = create_app().test_client()
    for _ in range(100):  # warm up both paths
        plain_call(client)
        task_call(client, poll)
    plain: list[float] = []
    tasks: list[float] = []
    walls: list[float] = []
    polls: list[int] = []
    for _ in range(rounds):
        started = time.process_time()
        for _ in range(calls):
            plain_call(client, pause)
        plain.append((time.process_time() - started) / calls * 1e6)
        started, wall = time.process_time(), time.perf_counter()
        for _ in range(calls):
            polls.append(task_call(client, poll))
        tasks.append((time.process_time() - started) / calls * 1e6)
        walls.append((time.perf_counter() - wall) / calls * 1e3)
    return {
        "plain_call_cpu_us": round(min(plain), 1),
        "task_cpu_us": round(min(tasks), 1),
        "ratio": round(min(tasks) / min(plain), 2),
        "polls_per_task": round(statistics.mean(polls), 2),
        "task_wall_ms": round(min(walls), 2),
    }


class _Answer(t.NamedTuple):
    body: t.Any

    def get_json(self) -> t.Any:
        return self.body


class HTTPClient:
    """Posts to a running server, with the test client's ``post(path, json=, headers=)`` shape."""

    def __init__(self, port: int) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def post(self, path: str, json: t.Any, headers: dict[str, str]) -> t.Any:
        self.connection.request(
            "POST", path, body=jsonlib.dumps(json), headers={**headers, "Content-Type": "application/json"}
        )
        response = self.connection.getresponse()
        return _Answer(jsonlib.loads(response.read()))


def _cpu_seconds(pid: int) -> float:
    """User and system CPU seconds of process *pid*, its threads included."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure_http(calls: int, rounds: int, poll: float, pause: float) -> dict[str, t.Any]:
    """Worker CPU microseconds per plain call and per completed task, under gunicorn; best of *rounds*."""
    port = free_port()
    command = [sys.executable, "-m", "gunicorn", "-w", "1", "-k", "gthread", "--threads", "16",
               "-b", f"127.0.0.1:{port}", "benchmarks.tasks:app"]  # fmt: skip
    server = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              start_new_session=True)  # fmt: skip
    try:
        wait_for_output(server, "Booting worker")
        worker = int(Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split()[0])
        client = HTTPClient(port)
        for _ in range(100):
            plain_call(client)
            task_call(client, poll)
        plain: list[float] = []
        tasks: list[float] = []
        for _ in range(rounds):
            started = _cpu_seconds(worker)
            for _ in range(calls):
                plain_call(client, pause)
            plain.append((_cpu_seconds(worker) - started) / calls * 1e6)
            started = _cpu_seconds(worker)
            for _ in range(calls):
                task_call(client, poll)
            tasks.append((_cpu_seconds(worker) - started) / calls * 1e6)
    finally:
        stop_group(server)
    return {
        "http_plain_call_cpu_us": round(min(plain), 1),
        "http_task_cpu_us": round(min(tasks), 1),
        "http_ratio": round(min(tasks) / min(plain), 2),
    }


def main(argv: list[str] | None = None) -> dict[str, t.Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=1000, help="calls per round and kind (default 1000)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds, the best one kept (default 5)")
    parser.add_argument("--poll", type=float, default=0.002, help="seconds between two polls (default 0.002)")
    parser.add_argument("--http", action="store_true", help="also measure over HTTP, under gunicorn")
    parser.add_argument("--unpaced", action="store_true", help="plain calls back to back, with no pause before each")
    parser.add_argument("--json", type=Path, help="write the numbers to this file")
    args = parser.parse_args(argv)
    pause = 0.0 if args.unpaced else args.poll
    numbers = measure(args.calls, args.rounds, args.poll, pause)
    numbers["plain_calls_paced"] = not args.unpaced
    if args.http:
        numbers.update(measure_http(args.calls, args.rounds, args.poll, pause))
        print(
            f"over HTTP, worker CPU per plain tools/call {numbers['http_plain_call_cpu_us']} us; per task "
            f"{numbers['http_task_cpu_us']} us: {numbers['http_ratio']}x"
        )
    print(
        f"CPU per plain tools/call {numbers['plain_call_cpu_us']} us; per task created, run and read until "
        f"completed {numbers['task_cpu_us']} us ({numbers['polls_per_task']} tasks/get each): {numbers['ratio']}x; "
        f"a task's wall time {numbers['task_wall_ms']} ms"
    )
    if args.json is not None:
        args.json.write_text(jsonlib.dumps(numbers, indent=2))
    return numbers


#: The app gunicorn serves in ``--http`` mode.
app = create_app()

if __name__ == "__main__":
    main()
