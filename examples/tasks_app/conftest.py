"""Fixtures of the tasks example's tests: the ``app`` the flask_mcp pytest plugin asks for, tokens,
and the example served by gunicorn for the multi-process test.

A real redis-server and gunicorn come from the repository's own test helpers
(``tests.conftest.redis_server``, ``benchmarks.servers_under_test``); each
test that needs one skips, saying why, when it is not installed.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import subprocess
import sys
import typing as t
from pathlib import Path

import pytest
from flask import Flask

from benchmarks.servers_under_test import free_port, stop_group, wait_for_output
from examples.tasks_app.app import create_app
from tests.conftest import redis_server

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]

#: Tokens of the tests, set through configuration (not the demo ones).
READER = "test-reader-token"
WRITER = "test-writer-token"
TOKENS = {
    READER: {"subject": "rita", "scopes": ["tasks:read"]},
    WRITER: {"subject": "walt", "scopes": ["tasks:read", "tasks:write"]},
}


@pytest.fixture
def app() -> Flask:
    """The example with its own in-memory database and the tests' tokens."""
    return create_app({"TESTING": True, "MCP_AUTH_TOKENS": TOKENS})


@pytest.fixture
def reader_token() -> str:
    """A token with the ``tasks:read`` scope only."""
    return READER


@pytest.fixture
def writer_token() -> str:
    """A token with ``tasks:read`` and ``tasks:write``."""
    return WRITER


class Gunicorn:
    """The example under gunicorn on a free port, configured by ``TASKS_*`` environment variables."""

    def __init__(self, workers: int, config: t.Mapping[str, str]) -> None:
        if importlib.util.find_spec("gunicorn") is None:
            pytest.skip("gunicorn is not installed (pip install gunicorn)")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        command = [sys.executable, "-m", "gunicorn", "-w", str(workers), "-k", "gthread", "--threads", "4"]
        command += ["--graceful-timeout", "2", "-b", f"127.0.0.1:{self.port}", "examples.tasks_app.app:create_app()"]
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), **{f"TASKS_{key}": value for key, value in config.items()}}
        self.process = subprocess.Popen(
            command, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
        )

    def stop(self) -> None:
        stop_group(self.process)


@contextlib.contextmanager
def gunicorn(workers: int, config: t.Mapping[str, str]) -> t.Iterator[Gunicorn]:
    """Serve the example with *workers* processes; yields once the socket listens.

    A request sent before a worker has loaded the app waits in the socket's
    backlog until one has, so nothing more needs waiting for.
    """
    server = Gunicorn(workers, config)
    try:
        wait_for_output(server.process, "Booting worker", timeout=60)
        yield server
    finally:
        server.stop()


@pytest.fixture
def serve_gunicorn() -> t.Callable[[int, t.Mapping[str, str]], t.ContextManager[Gunicorn]]:
    """``with serve_gunicorn(workers, config) as server: server.url``; *config* keys without ``TASKS_``."""
    return gunicorn


@pytest.fixture
def redis_url() -> t.Iterator[str]:
    """A real redis-server on a free port (the test skips when it is not installed)."""
    with redis_server() as url:
        yield url
