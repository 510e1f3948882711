"""Starting, handshaking with and stopping the benchmarked servers.

Every server listens on 127.0.0.1 on a free port and is stopped by its PID.
The WSGI ones run under gunicorn (gthread, one worker, 16 threads, identical
for flask_mcp and the floor), and, named with ``@gevent`` or ``@granian``,
under gunicorn's gevent worker or granian's WSGI interface (one worker, four
blocking threads); the ASGI ones under uvicorn (one worker), or granian's
ASGI interface (``@granian``). A server that fails the check before the load
raises :class:`CheckFailed`.
"""

from __future__ import annotations

import dataclasses
import http.client
import importlib.util
import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import typing as t
from pathlib import Path

from benchmarks.load import Era, Variant, authorization, call_body, call_headers, mcp_headers

ROOT = Path(__file__).resolve().parents[1]
GUNICORN = ["-m", "gunicorn", "-w", "1", "-k", "gthread", "--threads", "16"]
GUNICORN_GEVENT = ["-m", "gunicorn", "-w", "1", "-k", "gevent", "--worker-connections", "1000"]
UVICORN = ["-m", "uvicorn", "--workers", "1", "--no-access-log", "--log-level", "info"]
GRANIAN = ["-m", "granian", "--workers", "1", "--runtime-threads", "1", "--no-access-log", "--host", "127.0.0.1"]
GRANIAN_WSGI = [*GRANIAN, "--interface", "wsgi", "--blocking-threads", "4"]
GRANIAN_ASGI = [*GRANIAN, "--interface", "asgi"]
#: The session id the load sends a server that ignores it: as long as the ones flask_mcp issues.
IGNORED_SESSION = "f" * 43
#: How each server is run: its command line before the address and target, the Python packages it needs.
Runner = t.Literal["gunicorn", "gunicorn-gevent", "granian-wsgi", "uvicorn", "granian-asgi"]
RUNNER_PACKAGES: dict[str, tuple[str, ...]] = {
    "gunicorn": ("gunicorn",),
    "gunicorn-gevent": ("gunicorn", "gevent"),
    "granian-wsgi": ("granian",),
    "uvicorn": ("uvicorn",),
    "granian-asgi": ("granian",),
}


@dataclasses.dataclass(frozen=True)
class ServerSpec:
    """How to run one benchmarked server."""

    name: str
    runner: Runner
    target: str
    needs: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    #: Whether the server issues a session the load must carry (handshake era only).
    stateful: bool = False
    #: Whether the load carries a session id the server ignores: a floor of the handshake era
    #: then parses the same request a session's call is (``Mcp-Session-Id`` included).
    ignored_session: bool = False
    redis: bool = False
    #: The revision the load speaks: ``modern`` requests need no handshake and carry an envelope.
    era: Era = "handshake"
    #: What each call does: ``plain``, signed in (``jwt``, ``static``, ``oauth``) or reporting ``progress``
    #: (benchmarks/load.py).
    variant: Variant = "plain"


#: Stands for a started server's own scratch directory in the values of its ``env``
#: (:class:`RunningServer` makes the directory, and removes it when the server stops).
SCRATCH = "{scratch}"
#: The settings of the audited scenarios (``BENCHCFG_`` keys, read by the app as JSON). Each audited
#: server writes a table of its own, empty when it starts: one left by an earlier run, or by the
#: other audited server, would make what a row costs depend on what ran before.
AUDIT_ENV = (
    ("BENCHCFG_MCP_AUDIT", "true"),
    ("BENCHCFG_MCP_AUDIT_DATABASE_URI", f'"sqlite:///{SCRATCH}/audit.sqlite3"'),
)

_GTHREAD_SPECS = [
    ServerSpec("flask_mcp-stateful", "gunicorn", "benchmarks.servers.flask_mcp_app:create_app()",
               env=(("BENCH_MODE", "stateful"),), stateful=True),
    ServerSpec("flask_mcp-stateless", "gunicorn", "benchmarks.servers.flask_mcp_app:create_app()",
               env=(("BENCH_MODE", "stateless"),)),
    ServerSpec("flask_mcp-redis", "gunicorn", "benchmarks.servers.flask_mcp_app:create_app()",
               env=(("BENCH_MODE", "redis"),), stateful=True, redis=True, needs=("redis",)),
    # Modern requests never touch sessions, so the default (stateful) config serves them as is.
    ServerSpec("flask_mcp-modern", "gunicorn", "benchmarks.servers.flask_mcp_app:create_app()",
               env=(("BENCH_MODE", "stateful"),), era="modern"),
    # The same two with the audit trail on (rows to SQLite): what recording every call costs over HTTP.
    ServerSpec("flask_mcp-audit", "gunicorn", "benchmarks.servers.flask_mcp_app:create_app()",
               env=(("BENCH_MODE", "stateful"), *AUDIT_ENV), stateful=True),
    ServerSpec("flask_mcp-modern-audit", "gunicorn", "benchmarks.servers.flask_mcp_app:create_app()",
               env=(("BENCH_MODE", "stateful"), *AUDIT_ENV), era="modern"),
    ServerSpec("fastmcp-stateful", "uvicorn", "benchmarks.servers.fastmcp_app:app", needs=("fastmcp", "uvicorn"),
               stateful=True),
    ServerSpec("fastmcp-stateless", "uvicorn", "benchmarks.servers.fastmcp_app:stateless_app",
               needs=("fastmcp", "uvicorn")),
    ServerSpec("fastmcp-modern", "uvicorn", "benchmarks.servers.fastmcp_app:stateless_app",
               needs=("fastmcp", "uvicorn"), era="modern"),
    ServerSpec("sdk", "uvicorn", "benchmarks.servers.sdk_app:app", needs=("mcp", "uvicorn"), stateful=True),
    ServerSpec("floor", "gunicorn", "benchmarks.servers.floor_app:app", ignored_session=True),
    # The same view fed the modern request (its envelope and routing headers, which it ignores) and
    # answering what a modern result carries: the floor of the modern era, whose messages are longer.
    ServerSpec("floor-modern", "gunicorn", "benchmarks.servers.floor_app:modern_app", era="modern"),
    # What no WSGI app can beat under this gunicorn: a constant answer, no framework.
    ServerSpec("ceiling", "gunicorn", "benchmarks.servers.ceiling_app:app"),
    # Signed in: every call carries an RS256 JWT, verified by JWTBackend / by the floor view with PyJWT.
    ServerSpec("flask_mcp-jwt", "gunicorn", "benchmarks.servers.flask_mcp_app:create_app()",
               env=(("BENCH_MODE", "jwt"),), stateful=True, variant="jwt", needs=("jwt",)),
    ServerSpec("floor-jwt", "gunicorn", "benchmarks.servers.floor_app:signed_in()", ignored_session=True,
               variant="jwt", needs=("jwt",)),
    # The signed-in call with the audit trail on: what recording costs on the path deployments take.
    ServerSpec("flask_mcp-jwt-audit", "gunicorn", "benchmarks.servers.flask_mcp_app:create_app()",
               env=(("BENCH_MODE", "jwt"), *AUDIT_ENV), stateful=True, variant="jwt", needs=("jwt",)),
    ServerSpec("flask_mcp-static", "gunicorn", "benchmarks.servers.flask_mcp_app:create_app()",
               env=(("BENCH_MODE", "static"),), stateful=True, variant="static"),
    ServerSpec("floor-static", "gunicorn", "benchmarks.servers.floor_app:static_token_app", ignored_session=True,
               variant="static"),
    # The app's own authorization server issued the token (the harness prepares it: oauth_issued.py).
    ServerSpec("flask_mcp-oauth", "gunicorn", "benchmarks.servers.oauth_issued:served()", stateful=True,
               variant="oauth", needs=("jwt", "authlib", "sqlalchemy")),
    ServerSpec("floor-oauth", "gunicorn", "benchmarks.servers.oauth_issued:floor()", ignored_session=True,
               variant="oauth", needs=("jwt",)),
    # Streamed: the tool reports progress three times / the floor view streams the same four events.
    ServerSpec("flask_mcp-progress", "gunicorn", "benchmarks.servers.flask_mcp_app:create_app()",
               env=(("BENCH_MODE", "stateful"),), stateful=True, variant="progress"),
    ServerSpec("floor-stream", "gunicorn", "benchmarks.servers.floor_app:streaming_app", ignored_session=True,
               variant="progress"),
    # The same four pairs sent 2026-07-28 requests: no session (each call still carries its token),
    # and floors answering as that era does (resultType, the server's info), which the check
    # wants. flask_mcp's modern stream has no priming event and no event ids: the floor's four events.
    ServerSpec("flask_mcp-jwt-modern", "gunicorn", "benchmarks.servers.flask_mcp_app:create_app()",
               env=(("BENCH_MODE", "jwt"),), era="modern", variant="jwt", needs=("jwt",)),
    ServerSpec("floor-jwt-modern", "gunicorn", "benchmarks.servers.floor_app:modern_signed_in()", era="modern",
               variant="jwt", needs=("jwt",)),
    ServerSpec("flask_mcp-jwt-modern-audit", "gunicorn", "benchmarks.servers.flask_mcp_app:create_app()",
               env=(("BENCH_MODE", "jwt"), *AUDIT_ENV), era="modern", variant="jwt", needs=("jwt",)),
    ServerSpec("flask_mcp-static-modern", "gunicorn", "benchmarks.servers.flask_mcp_app:create_app()",
               env=(("BENCH_MODE", "static"),), era="modern", variant="static"),
    ServerSpec("floor-static-modern", "gunicorn", "benchmarks.servers.floor_app:modern_static_token_app",
               era="modern", variant="static"),
    ServerSpec("flask_mcp-oauth-modern", "gunicorn", "benchmarks.servers.oauth_issued:served()", era="modern",
               variant="oauth", needs=("jwt", "authlib", "sqlalchemy")),
    ServerSpec("floor-oauth-modern", "gunicorn", "benchmarks.servers.oauth_issued:modern_floor()", era="modern",
               variant="oauth", needs=("jwt",)),
    ServerSpec("flask_mcp-progress-modern", "gunicorn", "benchmarks.servers.flask_mcp_app:create_app()",
               env=(("BENCH_MODE", "stateful"),), era="modern", variant="progress"),
    ServerSpec("floor-stream-modern", "gunicorn", "benchmarks.servers.floor_app:modern_streaming_app",
               era="modern", variant="progress"),
]  # fmt: skip
SPECS = [
    *_GTHREAD_SPECS,
    # The same apps on the other servers a user may deploy on: each flask_mcp scenario is compared
    # with the floor on the same server.
    *[
        dataclasses.replace(spec, name=f"{spec.name}@{server}", runner=runner)
        for server, runner in (("gevent", "gunicorn-gevent"), ("granian", "granian-wsgi"))
        for spec in _GTHREAD_SPECS
        if spec.name in ("flask_mcp-stateful", "flask_mcp-modern", "flask_mcp-redis", "floor", "floor-modern")
    ],
    ServerSpec("fastmcp-stateful@granian", "granian-asgi", "benchmarks.servers.fastmcp_app:app", needs=("fastmcp",),
               stateful=True),
    ServerSpec("fastmcp-modern@granian", "granian-asgi", "benchmarks.servers.fastmcp_app:stateless_app",
               needs=("fastmcp",), era="modern"),
]  # fmt: skip


def missing(spec: ServerSpec) -> str | None:
    """Why *spec* cannot run here, or ``None``."""
    for module in (*spec.needs, *RUNNER_PACKAGES[spec.runner]):
        if importlib.util.find_spec(module) is None:
            return f"Python package {module!r} is not installed"
    if spec.redis and shutil.which("redis-server") is None:
        return "redis-server is not installed (Debian package redis-server)"
    return None


def stop_group(process: subprocess.Popen[bytes]) -> None:
    """Stop a server started with ``start_new_session=True``, and its workers, by its process group."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 30) -> None:
    """Block until something accepts connections on *port* (or *process* exits, or *timeout* passes)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise CheckFailed(" ".join(map(str, process.args)), f"nothing listens on port {port}") from None
            time.sleep(0.05)  # polling a real condition, with a deadline


def wait_for_output(process: subprocess.Popen[bytes], marker: str, timeout: float = 60) -> None:
    """Block until the process prints *marker*; it announces readiness itself."""
    stdout = process.stdout
    assert stdout is not None
    # A thread reads whole lines (select() on a buffered pipe can miss lines
    # already buffered) and keeps draining the pipe so the server never blocks.
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        for raw in iter(stdout.readline, b""):
            lines.put(raw.decode(errors="replace"))
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while (remaining := deadline - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=remaining)
        except queue.Empty:
            break
        if line is None:
            break
        seen.append(line)
        if marker in line:
            return
    process.kill()
    raise RuntimeError(f"{process.args!r} did not print {marker!r}:\n{''.join(seen)}")


def command_line(spec: ServerSpec, port: int) -> tuple[list[str], str]:
    """The command that serves *spec* on *port*, and what it prints once it serves."""
    if spec.runner in ("gunicorn", "gunicorn-gevent"):
        options = GUNICORN if spec.runner == "gunicorn" else GUNICORN_GEVENT
        return [sys.executable, *options, "-b", f"127.0.0.1:{port}", spec.target], "Booting worker"
    if spec.runner == "uvicorn":
        # Logged once the socket is bound ("Application startup complete" comes before the bind).
        return [sys.executable, *UVICORN, "--port", str(port), spec.target], "Uvicorn running on"
    options = GRANIAN_WSGI if spec.runner == "granian-wsgi" else GRANIAN_ASGI
    # gunicorn calls a target ending in "()"; granian is told the target is a factory.
    factory = ["--factory"] if spec.target.endswith("()") else []
    target = spec.target.removesuffix("()")
    return [sys.executable, *options, *factory, "--port", str(port), target], "Started worker-1"


def pinned(command: list[str], cpus: str | None) -> list[str]:
    """*command* run on *cpus* (``taskset -c``); as it is when *cpus* is ``None``."""
    return ["taskset", "-c", cpus, *command] if cpus else command


class Redis:
    """A private redis-server on a free port (on *cpus* when given)."""

    def __init__(self, cpus: str | None = None) -> None:
        self.port = free_port()
        self.process = subprocess.Popen(
            pinned(
                ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                cpus,
            ),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        wait_for_output(self.process, "Ready to accept connections")
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


class CheckFailed(RuntimeError):
    """The server started but did not answer the pre-load check as it must; ``reason`` says why."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"{name}: {reason}")
        self.reason = reason


class RunningServer:
    """One started server, its endpoint and (if stateful) its session."""

    def __init__(self, spec: ServerSpec, redis_url: str | None = None, cpus: str | None = None) -> None:
        self.spec = spec
        self.port = free_port()
        self.scratch = tempfile.TemporaryDirectory(prefix="flask_mcp_bench_")
        own = {name: value.replace(SCRATCH, self.scratch.name) for name, value in spec.env}
        env = {**os.environ, **own, "PYTHONPATH": str(ROOT)}
        if redis_url:
            env["BENCH_REDIS_URL"] = redis_url
        command, marker = command_line(spec, self.port)
        try:
            self.process = subprocess.Popen(
                pinned(command, cpus),
                cwd=ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except BaseException:
            self.scratch.cleanup()
            raise
        try:
            wait_for_output(self.process, marker)
            # granian announces its worker before the worker has bound the port.
            wait_for_port(self.port, self.process)
            self.session_id = self.handshake() if spec.stateful and spec.era == "handshake" else ""
            if spec.ignored_session and spec.era == "handshake":
                self.session_id = IGNORED_SESSION
            self.check()
        except BaseException:
            self.stop()
            raise

    def post(
        self, payload: dict[str, t.Any], session: str = "", headers: dict[str, str] | None = None
    ) -> tuple[int, dict[str, str], t.Any]:
        """POST one message (handshake-era headers unless given); returns status, headers and the JSON body.

        The body is the decoded JSON, or the last SSE ``data:`` line's, or the raw text when it is not JSON.
        """
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            sent = headers or {**mcp_headers(session), **authorization(self.spec.variant)}
            connection.request("POST", "/mcp", json.dumps(payload), sent)
            response = connection.getresponse()
            raw = response.read().decode()
        except OSError as error:
            raise CheckFailed(self.spec.name, f"POST /mcp on port {self.port} failed: {error!r}") from error
        finally:
            connection.close()
        data_lines = [line[5:].strip() for line in raw.splitlines() if line.startswith("data:")]
        text = data_lines[-1] if data_lines else raw
        try:
            body = json.loads(text) if text.strip() else None
        except ValueError:
            body = text
        return response.status, {k.lower(): v for k, v in response.getheaders()}, body

    def handshake(self) -> str:
        """initialize + notifications/initialized; returns the session id."""
        params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}
        status, headers, _ = self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
        session = headers.get("mcp-session-id", "")
        if status != 200 or not session:
            raise CheckFailed(self.spec.name, f"initialize answered {status} without a session")
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        return session

    def check(self) -> None:
        """One real call, in the spec's era, must return 40 + 2 before any load is sent.

        A modern answer must also say ``"resultType": "complete"``: a server that
        answers without it served the request as the handshake era would.
        """
        era, variant = self.spec.era, self.spec.variant
        headers = call_headers(self.session_id, era, variant)
        status, _, body = self.post(call_body(1, 40, 2, era, variant), headers=headers)
        result = body.get("result", {}) if isinstance(body, dict) else {}
        if status != 200 or result.get("structuredContent") != {"result": 42}:
            hint = " (does it serve the 2026-07-28 revision?)" if era == "modern" else ""
            raise CheckFailed(self.spec.name, f"{era} tools/call answered {status} {body!r}{hint}")
        if era == "modern" and result.get("resultType") != "complete":
            raise CheckFailed(
                self.spec.name,
                f'modern tools/call answered without "resultType": "complete", so it serves only the handshake era: '
                f"{body!r}",
            )

    def stop(self) -> None:
        """Stop the server (and its workers) by its process group, and remove its scratch directory."""
        stop_group(self.process)
        self.scratch.cleanup()
