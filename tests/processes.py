"""The output of a server process the tests started, read line by line in a thread of its own."""

from __future__ import annotations

import queue
import subprocess
import threading
import time

import pytest


class OutputLines:
    """Reads *process*'s stdout in a thread (so a full pipe never blocks it) and waits for lines.

    :param what: names the process in a failure's message.
    """

    def __init__(self, process: subprocess.Popen[bytes], what: str) -> None:
        self.process = process
        self.what = what
        self.output: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            self._lines.put(raw.decode(errors="replace"))
        self._lines.put(None)

    def wait_for(self, text: str, timeout: float = 30) -> str:
        """Block until the process prints a line holding *text*; that line."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                line = None
            if line is None:
                pytest.fail(f"{self.what} never printed {text!r}: {''.join(self.output)}")
            self.output.append(line)
            if text in line:
                return line
