"""Tasks on a real Celery worker: created through one gunicorn process, followed through another.

A redis-server (the broker and the store), two gunicorn processes of
``tests/celery_app.py`` and a Celery worker of the same module, each a real
process; skipped, saying why, when redis-server or Celery is not installed.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
import typing as t
import uuid

import httpx2
import pytest

from ...conftest import REPO_ROOT
from ...processes import OutputLines
from ...transport.test_streaming import gunicorn

pytest.importorskip("celery", reason="Celery is not installed (the test extra has it)")

TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}


class Worker:
    """``celery -A tests.celery_app:celery_app worker``, one process, its log read in a thread."""

    def __init__(self, env: dict[str, str]) -> None:
        name = f"mcp-{uuid.uuid4().hex[:8]}@%h"
        command = [sys.executable, "-m", "celery", "-A", "tests.celery_app:celery_app", "worker", "--pool=solo",
                   "--without-mingle", "--without-gossip", "-l", "info", "-n", name]  # fmt: skip
        self.process = subprocess.Popen(
            command, cwd=REPO_ROOT, env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        self.lines = OutputLines(self.process, "the Celery worker")

    def wait_for(self, text: str, timeout: float = 60) -> None:
        self.lines.wait_for(text, timeout)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)


@contextlib.contextmanager
def worker(env: dict[str, str]) -> t.Iterator[Worker]:
    started = Worker(env)
    try:
        started.wait_for("ready.")
        yield started
    finally:
        started.kill()


def post(
    url: str, method: str, params: dict[str, t.Any], name: str, meta: dict[str, t.Any] | None = None
) -> dict[str, t.Any]:
    """A stateless 2026-07-28 request that declares the tasks extension (and sends *meta*); its result."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "celery-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": TASKS,
        **(meta or {}),
    }
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28",
               "Mcp-Method": method, "Mcp-Name": name}  # fmt: skip
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
    answer = httpx2.post(url, json=body, headers=headers, timeout=30)
    assert answer.status_code == 200, answer.text
    return t.cast(dict[str, t.Any], answer.json()["result"])


def poll(url: str, task_id: str, statuses: set[str], timeout: float = 20) -> dict[str, t.Any]:
    """``tasks/get`` at *url* every 50 ms until the status is one of *statuses*."""
    deadline = time.monotonic() + timeout
    while True:
        task = post(url, "tasks/get", {"taskId": task_id}, task_id)
        if task["status"] in statuses:
            return task
        assert time.monotonic() < deadline, f"task {task_id} still {task['status']}"
        time.sleep(0.05)


@pytest.fixture
def env(redis_url: str) -> dict[str, str]:
    return {"TEST_REDIS_URL": redis_url, "TEST_PREFIX": f"flask_mcp_celery:{uuid.uuid4().hex}:"}


def test_a_worker_runs_a_task_made_on_one_process_and_read_on_another(env: dict[str, str]) -> None:
    app = "tests.celery_app:app"
    with gunicorn(app=app, **env) as first, gunicorn(app=app, **env) as second, worker(env) as celery:
        created = post(first.url, "tools/call", {"name": "slow_sum", "arguments": {"a": 2, "b": 3, "seconds": 0.5}},
                       "slow_sum")  # fmt: skip
        assert created["resultType"] == "task"
        working = poll(second.url, created["taskId"], {"working", "completed"})
        done = poll(second.url, created["taskId"], {"completed", "failed"})
        assert done["status"] == "completed", done
        result = done["result"]["structuredContent"]
        assert result["sum"] == 5
        # The worker ran it: not a process of either web server.
        assert result["pid"] == celery.process.pid
        assert working["status"] in ("working", "completed")


def test_a_worker_killed_mid_task_fails_it_within_the_loss_timeout(env: dict[str, str]) -> None:
    app = "tests.celery_app:app"
    with gunicorn(app=app, **env) as first, worker(env) as celery:
        arguments = {"a": 1, "b": 1, "seconds": 60}
        created = post(first.url, "tools/call", {"name": "slow_sum", "arguments": arguments}, "slow_sum")
        task_id = created["taskId"]
        # Its progress message says the worker took it.
        deadline = time.monotonic() + 20
        while "adding in process" not in (post(first.url, "tasks/get", {"taskId": task_id}, task_id).get(
                "statusMessage") or ""):  # fmt: skip
            assert time.monotonic() < deadline, "the worker never started the task"
            time.sleep(0.05)
        celery.kill()
        # MCP_TASK_LOST_AFTER is 2 s in this app: the task is failed as lost once that passed, never left working.
        failed = poll(first.url, task_id, {"failed", "completed"}, timeout=15)
        assert failed["status"] == "failed"
        assert "stopped answering for 2 s" in failed["error"]["message"]


def test_a_task_s_run_on_a_worker_continues_the_trace_of_the_call_that_created_it(env: dict[str, str]) -> None:
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="the OTLP exporter is not installed")
    from ...telemetry.collector import collector

    app = "tests.celery_app:app"
    client_trace, client_span = uuid.uuid4().hex, uuid.uuid4().hex[:16]
    with collector() as receiver:
        traced = {**env, "TEST_OTLP_ENDPOINT": receiver.url}
        with gunicorn(app=app, **traced) as web, worker(traced) as celery:
            arguments = {"a": 2, "b": 3, "seconds": 0}
            created = post(web.url, "tools/call", {"name": "slow_sum", "arguments": arguments}, "slow_sum",
                           meta={"traceparent": f"00-{client_trace}-{client_span}-01"})  # fmt: skip
            assert created["resultType"] == "task"
            assert poll(web.url, created["taskId"], {"completed", "failed"})["status"] == "completed"

            def calls(spans: list[dict[str, t.Any]]) -> list[dict[str, t.Any]]:
                return [span for span in spans if span["name"] == "tools/call slow_sum"]

            spans = calls(receiver.wait_for_spans(lambda spans: len(calls(spans)) >= 2))
    by_process = {span["resource"]["process.pid"]: span for span in spans}
    assert len(spans) == 2 and celery.process.pid in by_process, spans
    run = by_process.pop(celery.process.pid)
    (creating,) = by_process.values()
    # The call continues the client's trace; the run on the worker continues the call's.
    assert (creating["trace_id"], creating["parent_span_id"]) == (client_trace, client_span)
    assert (run["trace_id"], run["parent_span_id"]) == (client_trace, creating["span_id"])
    assert creating["kind"] == run["kind"] == "SPAN_KIND_SERVER"
    assert run["attributes"]["gen_ai.tool.name"] == "slow_sum"
