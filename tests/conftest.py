"""Shared fixtures: app factories, an MCP test client that validates every
envelope against the official schema, a live threaded server and a real
redis-server."""

from __future__ import annotations

import contextlib
import importlib
import shutil
import socket
import subprocess
import threading
import typing as t
import uuid
from pathlib import Path

import pytest
from flask import Flask
from flask.globals import _cv_app, _cv_request
from flask_caching import Cache
from werkzeug.serving import make_server

from benchmarks.servers_under_test import wait_for_output
from flask_mcp import MCP
from flask_mcp.globals import state_for
from flask_mcp.testing import MCPTestClient, SchemaValidator
from flask_mcp.testing.schema_checks import official_schema
from tests.oauth.postgres import PostgresCluster, databases, unavailable_reason

REPO_ROOT = Path(__file__).resolve().parents[1]
SCHEMA_FILE = official_schema("2025-11-25")
MODERN_SCHEMA_FILE = official_schema("2026-07-28")


@pytest.fixture(scope="session")
def schema_checker() -> SchemaValidator:
    """Validates against the official 2025-11-25 schema (shipped with the package)."""
    return SchemaValidator.official("2025-11-25")


@pytest.fixture(scope="session")
def modern_schema_checker() -> SchemaValidator:
    """Validates against the official 2026-07-28 schema (shipped with the package)."""
    return SchemaValidator.official("2026-07-28")


@pytest.fixture
def mcp() -> MCP:
    """A fresh extension with nothing registered."""
    return MCP(name="test-server", version="0.0.1")


@pytest.fixture
def adder() -> MCP:
    """A fresh extension serving one tool, ``add(a, b)``."""
    extension = MCP()

    @extension.tool()
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    return extension


@pytest.fixture
def make_app() -> t.Callable[..., Flask]:
    """App factory: ``make_app(mcp, MCP_STATELESS=True, ...)``."""

    def factory(extension: MCP, **config: t.Any) -> Flask:
        app = Flask("test_app")
        app.config.update(TESTING=True, **config)
        extension.init_app(app)
        return app

    return factory


@pytest.fixture
def make_client(
    schema_checker: SchemaValidator, modern_schema_checker: SchemaValidator
) -> t.Callable[..., MCPTestClient]:
    """``make_client(app)``: an :class:`MCPTestClient` for *app* that validates every response.

    It speaks the handshake era (call ``initialize``, or use a stateless app)
    unless given ``era="modern"``; other keywords go to the client.
    """

    def factory(app: Flask, path: str = "/mcp", *, era: str = "handshake", **options: t.Any) -> MCPTestClient:
        return MCPTestClient(app, path, schema_checker, modern_validator=modern_schema_checker, era=era, **options)

    return factory


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LiveServer:
    """A real threaded werkzeug server on a free loopback port."""

    def __init__(self, app: Flask) -> None:
        self.server = make_server("127.0.0.1", 0, app, threaded=True)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        # serve_forever polls for shutdown; its default 0.5 s would make every test wait that long.
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.thread.join(timeout=10)


@pytest.fixture
def live_server() -> t.Callable[[Flask], LiveServer]:
    """``with live_server(app) as server: server.url``."""
    return LiveServer


def _wait_for_line(process: subprocess.Popen[bytes], marker: str, timeout: float) -> None:
    """Block until the process prints *marker* (it announces readiness itself)."""
    try:
        wait_for_output(process, marker, timeout)
    except RuntimeError as exc:
        pytest.fail(str(exc))


class RedisProcess:
    """A real redis-server on a fixed free loopback port, which a test may stop and start again."""

    def __init__(self, *options: str) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.skip("redis-server is not installed (Debian package redis-server); .ci/run installs it")
        self.port = free_port()
        self.command = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.command += options
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(self.command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        _wait_for_line(self.process, "Ready to accept connections", timeout=90)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None


@contextlib.contextmanager
def redis_server(*options: str) -> t.Iterator[str]:
    """A real redis-server on a free loopback port, with extra command-line *options*; yields its URL."""
    server = RedisProcess(*options)
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture(scope="session")
def redis_url() -> t.Iterator[str]:
    """A real redis-server on a free port, for the duration of the test session."""
    with redis_server() as url:
        yield url


#: When a :class:`Clock` starts (seconds since the epoch).
START = 1_700_000_000.0


class Clock:
    """A controllable stand-in for ``time.time`` (and for the ``time`` module)."""

    def __init__(self, now: float) -> None:
        self.now = now

    def time(self) -> float:
        return self.now

    __call__ = time

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def cache() -> t.Iterator[Cache]:
    app = Flask("sessions")
    cache = Cache(app, config={"CACHE_TYPE": "SimpleCache", "CACHE_THRESHOLD": 10_000})
    with app.app_context():
        yield cache


# -- Redis: several workers sharing one store --------------------------------------


def worker_app(redis_url: str, prefix: str, setup: t.Callable[[MCP], None] | None = None, **config: t.Any) -> Flask:
    """One "worker": its own app and extension, as in a separate process.

    :param setup: registers more on the worker's extension before its app is set up.
    """
    mcp = MCP(name="shared")

    @mcp.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    if setup is not None:
        setup(mcp)
    app = Flask("worker")
    app.config.update(
        TESTING=True, MCP_CACHE_TYPE="RedisCache", MCP_CACHE_REDIS_URL=redis_url, MCP_CACHE_KEY_PREFIX=prefix, **config
    )
    mcp.init_app(app)
    return app


@pytest.fixture
def prefix() -> str:
    """A key prefix of its own per test, so tests never see each other's sessions."""
    return f"flask_mcp_test:{uuid.uuid4().hex}:"


@pytest.fixture
def workers(redis_url: str, prefix: str) -> tuple[Flask, Flask]:
    return worker_app(redis_url, prefix), worker_app(redis_url, prefix)


@pytest.fixture
def cache_clock(cache: Cache, monkeypatch: pytest.MonkeyPatch) -> Clock:
    """A fake clock for the expiry checks of the ``cache`` fixture's backend."""
    clock = Clock(START)
    backend_module = importlib.import_module(type(cache.cache).get.__module__)
    assert callable(getattr(backend_module, "time", None)), "the cache backend no longer reads time()"
    monkeypatch.setattr(backend_module, "time", clock.time)
    return clock


@pytest.fixture
def memory_clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """A fake clock for the expiry checks of the caches in process memory (cachelib's, and flask_mcp's keeping one)."""
    from flask_mcp.policies import keeping_cache

    clock = Clock(START)
    monkeypatch.setattr("cachelib.simple.time", clock.time)
    monkeypatch.setattr(keeping_cache.time, "time", clock.time)
    return clock


# -- tools that wait for the test ----------------------------------------------------------------


class Gates:
    """Events a test opens to let a running tool go on, and the tool's own report of what it saw."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = threading.Event()
        self.saw_cancel = threading.Event()


@pytest.fixture
def gates() -> t.Iterator[Gates]:
    gates = Gates()
    yield gates
    gates.release.set()  # no tool of a test is left waiting when the test ends


# -- every thread a test's apps start ends with the test ----------------------------------------

#: Names of the threads flask_mcp starts (``mcp-waker``, ``mcp-request-…``, ``flask-mcp-task_0``, …).
THREAD_PREFIXES = ("mcp-", "flask-mcp-")
#: Seconds a test's flask_mcp threads get to end once its apps are shut down.
THREADS_END_WITHIN = 10.0


def flask_mcp_threads() -> set[threading.Thread]:
    return {thread for thread in threading.enumerate() if thread.name.startswith(THREAD_PREFIXES)}


@pytest.fixture(autouse=True)
def no_thread_outlives_its_test(monkeypatch: pytest.MonkeyPatch) -> t.Iterator[None]:
    """Shut down every app the test set up, then fail the test if a flask_mcp thread it started still runs.

    A thread left behind goes on working (and logging) during the next tests,
    against stores those tests stopped.
    """
    before = flask_mcp_threads()
    apps: list[tuple[MCP, Flask]] = []
    setup = MCP._setup

    def recording_setup(self: MCP, app: Flask) -> t.Any:
        if state_for(app, self) is None:  # set up by this test (not an app of a wider fixture)
            apps.append((self, app))
        return setup(self, app)

    monkeypatch.setattr(MCP, "_setup", recording_setup)
    yield
    for extension, app in apps:
        extension.shutdown(app)
    ended = threading.Event()
    deadline = THREADS_END_WITHIN / 0.01
    while (left := flask_mcp_threads() - before) and deadline > 0:
        ended.wait(0.01)  # polling a real condition: the threads' own end
        deadline -= 1
    assert not left, f"flask_mcp threads outlived the test: {sorted(thread.name for thread in left)}"


@pytest.fixture(autouse=True)
def no_flask_context_outlives_its_test() -> t.Iterator[None]:
    """Fail a test that leaves a Flask request or app context pushed (a streamed response never closed).

    A context left behind is the ``current_app`` and ``request`` of every later test in the process.
    """
    before = (_cv_request.get(None), _cv_app.get(None))
    yield
    left = (_cv_request.get(None), _cv_app.get(None))
    assert left == before, f"a Flask context outlived the test (close every streamed response): {left}"


# -- databases: SQLite, or a PostgreSQL cluster of the test run's own ----------------------------------


@pytest.fixture(scope="session")
def postgres_cluster() -> t.Iterator[PostgresCluster]:
    """A PostgreSQL cluster of the test run's own (skips, saying why, when the server cannot be had)."""
    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    cluster = PostgresCluster(free_port())
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def database_uri(request: pytest.FixtureRequest, tmp_path: Path) -> t.Iterator[str]:
    """Where the app's tables live: SQLite, or a fresh PostgreSQL database.

    SQLite unless a test parametrizes it (``indirect=True``) with ``"postgresql"``.
    """
    kind = getattr(request, "param", "sqlite")
    if kind == "sqlite":
        yield f"sqlite:///{tmp_path / 'app.sqlite3'}"
        return
    assert kind == "postgresql", kind
    yield from databases(request.getfixturevalue("postgres_cluster"))


#: Run a module's tests on both databases: ``pytestmark = BOTH_DATABASES``.
BOTH_DATABASES = pytest.mark.parametrize("database_uri", ["sqlite", "postgresql"], indirect=True)
