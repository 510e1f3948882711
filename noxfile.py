"""Development sessions: ``nox -s tests``, ``lint``, ``typing``, ``docs``.

Sessions run on whichever Python runs nox (``python=False`` would share its
environment; a venv per session keeps them apart without needing several
interpreters installed).
"""

from __future__ import annotations

import os

import nox

nox.options.sessions = ["tests", "lint", "typing", "docs"]
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
def bench(session: nox.Session) -> None:
    """Benchmark against fastmcp, the SDK server and the bare-Flask floor (not run by default).

    ``nox -s bench -- --duration 20`` passes options to ``benchmarks/run.py``.
    Uses wrk when installed (Debian package ``wrk``), else a Python load generator.
    """
    session.install("-e", ".[bench]")
    session.run("python", "benchmarks/run.py", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """Check style with ruff."""
    session.install("ruff")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def typing(session: nox.Session) -> None:
    """Type-check the package with mypy."""
    session.install("-e", ".", "mypy")
    session.run("mypy", "flask_mcp", "examples/quickstart/app.py")


@nox.session
def docs(session: nox.Session) -> None:
    """Build the HTML docs, offline, with warnings as errors."""
    session.install("-e", ".[docs]")
    session.run("sphinx-build", "-W", "--keep-going", "-b", "html", "docs", "docs/_build/html")
