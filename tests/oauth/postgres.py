"""A throwaway PostgreSQL cluster for the storage tests: Debian's server binaries, a temp dir, a free port.

The cluster is made with ``initdb`` and started with ``pg_ctl`` from
``/usr/lib/postgresql/<version>/bin`` (Debian's ``postgresql`` package),
listening on 127.0.0.1 only, with trust authentication for its own
superuser. PostgreSQL refuses to run as root: as root the commands run as
the ``postgres`` system user (``runuser``), and the temp dir is handed to it.
Each test gets a database of its own, dropped when it ends.
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
import typing as t
from pathlib import Path

__all__ = ["PostgresCluster", "server_binaries", "unavailable_reason"]


def server_binaries() -> str | None:
    """The ``bin`` folder of the newest PostgreSQL server installed, or ``None``."""
    found = glob.glob("/usr/lib/postgresql/*/bin/initdb")

    def version(path: str) -> tuple[int, ...]:
        name = path.split("/")[4]
        return tuple(int(part) for part in name.split(".") if part.isdigit())

    return os.path.dirname(max(found, key=version)) if found else None


def unavailable_reason() -> str | None:
    """Why no cluster can be started here (``None``: it can)."""
    if server_binaries() is None:
        return "PostgreSQL server binaries not found (Debian's postgresql package: apt-get install postgresql)"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "the psycopg driver is not installed (pip install 'psycopg[binary]', in the test extra)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no postgres user to run the server as"
        if shutil.which("runuser") is None:
            return "running as root and runuser is missing"
    return None


class PostgresCluster:
    """A cluster of its own in a temp dir, started on *port* (127.0.0.1) until :meth:`stop`."""

    def __init__(self, port: int) -> None:
        binaries = server_binaries()
        assert binaries is not None
        self.binaries = binaries
        self.port = port
        self.root = tempfile.mkdtemp(prefix="flask-mcp-pg-")
        self.data = os.path.join(self.root, "data")
        self._as_root = os.geteuid() == 0
        if self._as_root:
            account = pwd.getpwnam("postgres")
            os.chown(self.root, account.pw_uid, account.pw_gid)
        self._run(
            "initdb", "-D", self.data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"
        )
        options = f"-p {port} -c listen_addresses=127.0.0.1 -k {self.root} -F"
        self._run("pg_ctl", "-D", self.data, "-o", options, "-l", os.path.join(self.root, "log"), "-w", "start")

    def _run(self, program: str, *args: str) -> None:
        command = [os.path.join(self.binaries, program), *args]
        if self._as_root:
            command = ["runuser", "-u", "postgres", "--", *command]
        result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        if result.returncode != 0:
            log = os.path.join(self.root, "log")
            tail = Path(log).read_text(errors="replace")[-2000:] if os.path.exists(log) else ""
            raise RuntimeError(f"{program} failed: {result.stdout}{result.stderr}{tail}")

    def url(self, database: str = "postgres") -> str:
        """The SQLAlchemy URL of *database* (psycopg 3 driver)."""
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def _execute(self, statement: str) -> None:
        import psycopg

        with psycopg.connect(f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres", autocommit=True) as db:
            db.execute(statement)  # type: ignore[arg-type]

    def create_database(self) -> str:
        """A new empty database; its name."""
        name = "t_" + secrets.token_hex(8)
        self._execute(f"CREATE DATABASE {name}")
        return name

    def drop_database(self, name: str) -> None:
        """Drop *name*, ending the connections a test's engine still holds."""
        self._execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def stop(self) -> None:
        """Stop the server and remove its files."""
        try:
            self._run("pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def databases(cluster: PostgresCluster) -> t.Iterator[str]:
    """A fresh database's URL for one test (a generator fixture body)."""
    name = cluster.create_database()
    try:
        yield cluster.url(name)
    finally:
        cluster.drop_database(name)
