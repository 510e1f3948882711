"""Real Redis Clusters and Sentinel groups on loopback, started by the tests in temporary directories.

Each process is a ``redis-server`` on free loopback ports, its files in a
directory of its own; every wait is on a condition the servers report
(``cluster_state:ok``, a replica's link, a quorum of sentinels), bounded
by a deadline. Leaving the ``with`` block stops every process started.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
import time
import typing as t
from pathlib import Path

import pytest

from .conftest import free_port
from .processes import OutputLines

#: Seconds a topology may take to come up, or to fail over.
DEADLINE = 60.0


def binary(name: str) -> str:
    """The path of *name*, or a skip saying which package brings it."""
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (Debian packages redis-server and redis-tools bring it)")
    return found


def wait_until(condition: t.Callable[[], bool], what: str, timeout: float = DEADLINE) -> None:
    """Poll *condition* until it holds; fail the test after *timeout* seconds, naming *what* was awaited."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if condition():
                return
        except Exception:  # not up yet: a refused connection is part of the wait
            pass
        if time.monotonic() >= deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


class Server:
    """One ``redis-server`` (or sentinel) process on a free loopback port, started with *options*.

    :param start: start it now; else its port is only chosen, and :meth:`start` starts it later
        (until then, connections to the port are refused).
    """

    def __init__(
        self, started: list[Server], folder: Path, *options: str, sentinel: str | None = None, start: bool = True
    ) -> None:
        self.port = free_port()
        self.folder = folder / str(self.port)
        self.folder.mkdir()
        self.command = [binary("redis-server")]
        if sentinel is not None:
            config = self.folder / "sentinel.conf"
            config.write_text(sentinel)
            self.command += [str(config), "--sentinel"]
        self.command += ["--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder)]
        self.command += ["--save", "", "--appendonly", "no", *options]
        self.process: subprocess.Popen[bytes] | None = None
        started.append(self)  # stopped at the end of the ``with`` block, whether it was started or not
        if start:
            self.start()

    def start(self) -> None:
        """Start the process (its readiness is :meth:`wait_ready`'s to wait for)."""
        self.process = subprocess.Popen(self.command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.lines = OutputLines(self.process, f"redis-server on port {self.port}")

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def wait_ready(self) -> None:
        self.lines.wait_for("Ready to accept connections", timeout=DEADLINE)

    def client(self, **options: t.Any) -> t.Any:
        import redis

        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=5, **options)

    def kill(self) -> None:
        """Stop the process at once (as a crashed host would), and wait for it."""
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=10)
            self.process = None

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
            self.process = None


class Cluster:
    """Three masters (no replicas) joined by ``redis-cli --cluster create``.

    :param start: start it now; else its ports are only chosen, and :meth:`start` starts it later.
    """

    def __init__(self, started: list[Server], folder: Path, start: bool = True) -> None:
        self.cli = binary("redis-cli")  # a skip now, not once the test has started the nodes
        self.nodes = [
            Server(
                started,
                folder,
                "--cluster-enabled",
                "yes",
                "--cluster-port",
                str(free_port()),
                "--cluster-node-timeout",
                "2000",
                start=False,
            )
            for _ in range(3)
        ]
        if start:
            self.start()

    def start(self) -> None:
        """Start the three nodes, join them, and wait until each says the cluster is up."""
        for node in self.nodes:
            node.start()
        for node in self.nodes:
            node.wait_ready()
        addresses = [node.address for node in self.nodes]
        created = subprocess.run(
            [self.cli, "--cluster", "create", *addresses, "--cluster-replicas", "0", "--cluster-yes"],
            capture_output=True,
            timeout=DEADLINE,
        )
        assert created.returncode == 0, created.stdout.decode() + created.stderr.decode()
        wait_until(self._ready, "the cluster's three masters to agree it is up")

    def _ready(self) -> bool:
        for node in self.nodes:
            with node.client() as client:
                info = client.cluster("info")
                if info.get("cluster_state") != "ok" or int(info.get("cluster_known_nodes", 0)) != 3:
                    return False
        return True

    @property
    def spec(self) -> str:
        """``host:port,...``, as ``CACHE_REDIS_CLUSTER`` takes it."""
        return ",".join(node.address for node in self.nodes)

    def config(self, prefix: str) -> dict[str, t.Any]:
        """The ``MCP_*`` settings of an app whose store is this cluster."""
        return {
            "MCP_CACHE_TYPE": "RedisClusterCache",
            "MCP_CACHE_REDIS_CLUSTER": self.spec,
            "MCP_CACHE_KEY_PREFIX": prefix,
        }


#: The name the sentinels know the master by.
MASTER_NAME = "mymaster"


class SentinelGroup:
    """One master, one replica and three sentinels watching them (quorum 2).

    :param start: start them now; else their ports are only chosen, and :meth:`start` starts them later.
    """

    def __init__(self, started: list[Server], folder: Path, start: bool = True) -> None:
        self.master = Server(started, folder, start=False)
        self.replica = Server(started, folder, "--replicaof", "127.0.0.1", str(self.master.port), start=False)
        watch = (
            f"sentinel monitor {MASTER_NAME} 127.0.0.1 {self.master.port} 2\n"
            f"sentinel down-after-milliseconds {MASTER_NAME} 1000\n"
            f"sentinel failover-timeout {MASTER_NAME} 10000\n"
            f"sentinel parallel-syncs {MASTER_NAME} 1\n"
        )
        self.sentinels = [Server(started, folder, sentinel=watch, start=False) for _ in range(3)]
        if start:
            self.start()

    def start(self) -> None:
        """Start the master, its replica and the sentinels, and wait until the sentinels watch both."""
        self.master.start()
        self.master.wait_ready()
        self.replica.start()
        self.replica.wait_ready()
        for sentinel in self.sentinels:
            sentinel.start()
        for sentinel in self.sentinels:
            sentinel.lines.wait_for("+monitor master", timeout=DEADLINE)
        wait_until(self._watching, "the replica to be in sync, and the sentinels to know it and each other")

    def _watching(self) -> bool:
        with self.replica.client() as replica:
            if replica.info("replication").get("master_link_status") != "up":
                return False
        for sentinel in self.sentinels:
            with sentinel.client() as client:
                if not client.sentinel_slaves(MASTER_NAME) or len(client.sentinel_sentinels(MASTER_NAME)) < 2:
                    return False
        return True

    @property
    def addresses(self) -> list[tuple[str, int]]:
        return [("127.0.0.1", sentinel.port) for sentinel in self.sentinels]

    def master_port(self) -> int:
        """The port of the master, as the first sentinel that answers says."""
        for sentinel in self.sentinels:
            with contextlib.suppress(Exception), sentinel.client() as client:
                return int(client.sentinel_get_master_addr_by_name(MASTER_NAME)[1])
        raise AssertionError("no sentinel answers")

    def config(self, prefix: str) -> dict[str, t.Any]:
        """The ``MCP_*`` settings of an app whose store is this group's master."""
        return {
            "MCP_CACHE_TYPE": "RedisSentinelCache",
            "MCP_CACHE_REDIS_SENTINELS": self.addresses,
            "MCP_CACHE_REDIS_SENTINEL_MASTER": MASTER_NAME,
            "MCP_CACHE_KEY_PREFIX": prefix,
        }


@contextlib.contextmanager
def _servers(what: str) -> t.Iterator[tuple[list[Server], Path]]:
    """A temporary directory, and the list of servers started in it: all stopped at the end, whatever happened."""
    started: list[Server] = []
    with tempfile.TemporaryDirectory(prefix=f"mcp-{what}-") as folder:
        try:
            yield started, Path(folder)
        finally:
            for server in reversed(started):
                server.stop()


@contextlib.contextmanager
def cluster(start: bool = True) -> t.Iterator[Cluster]:
    """A :class:`Cluster` for the ``with`` block (without *start*, its ports chosen but nothing started)."""
    with _servers("cluster") as (started, folder):
        yield Cluster(started, folder, start)


@contextlib.contextmanager
def sentinel_group(start: bool = True) -> t.Iterator[SentinelGroup]:
    """A :class:`SentinelGroup` for the ``with`` block (without *start*, its ports chosen but nothing started)."""
    with _servers("sentinel") as (started, folder):
        yield SentinelGroup(started, folder, start)
