"""The OTLP/HTTP receiver of ``otlp_receiver.py`` as a process a test starts, and what it received."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
import typing as t

import httpx2

from tests.conftest import REPO_ROOT
from tests.processes import OutputLines


class Collector:
    """``python -m tests.telemetry.otlp_receiver`` on a free port of 127.0.0.1."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.telemetry.otlp_receiver"],
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        self.lines = OutputLines(self.process, "the OTLP receiver")
        self.url = ""

    def wait_ready(self) -> None:
        port = int(self.lines.wait_for("listening on").split()[-1])
        self.url = f"http://127.0.0.1:{port}"

    def received(self) -> list[dict[str, t.Any]]:
        """Every span and metric point received so far (see ``otlp_receiver``)."""
        answer = httpx2.get(f"{self.url}/received", timeout=10)
        assert answer.status_code == 200, answer.text
        return [json.loads(line) for line in answer.text.splitlines()]

    def spans(self) -> list[dict[str, t.Any]]:
        return [record for record in self.received() if record["signal"] == "span"]

    def metric_points(self, name: str) -> list[dict[str, t.Any]]:
        return [record for record in self.received() if record["signal"] == "metric" and record["name"] == name]

    def wait_for_spans(
        self, found: t.Callable[[list[dict[str, t.Any]]], bool], timeout: float = 20
    ) -> list[dict[str, t.Any]]:
        """Poll until *found* holds of the spans received (an exporter of another process sends when it will)."""
        deadline = time.monotonic() + timeout
        while True:
            spans = self.spans()
            if found(spans):
                return spans
            assert time.monotonic() < deadline, f"the receiver never got the spans looked for: {spans}"
            time.sleep(0.05)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


@contextlib.contextmanager
def collector() -> t.Iterator[Collector]:
    started = Collector()
    try:
        started.wait_ready()
        yield started
    finally:
        started.stop()
