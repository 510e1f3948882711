"""Each flask_mcp scenario and its floor loaded at the same time, on the same CPU.

The rounds of ``benchmarks/run.py`` load one server after the other. On a
shared virtual machine the speed a CPU gives moves by tens of percent from
one second to the next (a pure Python loop here ran anywhere between 8,400
and 16,000 iterations per half second), so two rates measured a few seconds
apart differ by more than the 5% a ratio to the floor must tell.

Here a flask_mcp scenario and its floor on the same server kind run side by
side: both pinned to one CPU (``--pin``'s server CPU) and loaded at once by
two load generators on the other CPUs, for the same seconds. The scheduler
shares the CPU between the two servers' processes, so whatever the host
does to that CPU meanwhile, it does to both: the ratio of their rates is
the ratio of what a request costs each, and it moves by a few percent from
round to round where the rates themselves move by tens. Every other round
starts the floor's load first.

What it is not: either server's rate on a CPU of its own (that is what the
rounds of ``run.py`` measure). The latency percentiles include the time each
server waited for the other to leave the CPU; their ratio is reported as
measured.
"""

from __future__ import annotations

import statistics
import threading
import typing as t

from benchmarks import load

if t.TYPE_CHECKING:
    from benchmarks.servers_under_test import RunningServer

__all__ = ["floor_of", "pairs", "run_side_by_side"]

#: The flask_mcp scenarios measured beside a floor (on every server kind they run on).
SCENARIOS = (
    "flask_mcp-stateful", "flask_mcp-redis", "flask_mcp-modern",
    "flask_mcp-jwt", "flask_mcp-static", "flask_mcp-oauth", "flask_mcp-progress",
    "flask_mcp-jwt-modern", "flask_mcp-static-modern", "flask_mcp-oauth-modern", "flask_mcp-progress-modern",
    "flask_mcp-audit", "flask_mcp-modern-audit", "flask_mcp-jwt-audit", "flask_mcp-jwt-modern-audit",
)  # fmt: skip
#: The floor of each scenario whose floor is not the handshake era's plain one: the bare view doing
#: the same work, for the same request (a modern one answers as the 2026-07-28 era does).
OWN_FLOORS = {
    "flask_mcp-modern": "floor-modern",
    "flask_mcp-jwt": "floor-jwt",
    "flask_mcp-static": "floor-static",
    "flask_mcp-oauth": "floor-oauth",
    "flask_mcp-progress": "floor-stream",
    "flask_mcp-jwt-modern": "floor-jwt-modern",
    "flask_mcp-static-modern": "floor-static-modern",
    "flask_mcp-oauth-modern": "floor-oauth-modern",
    "flask_mcp-progress-modern": "floor-stream-modern",
}
#: The audited scenarios, each beside the same call with the trail off (its cost: within 10 %).
UNAUDITED = {
    "flask_mcp-audit": "flask_mcp-stateful",
    "flask_mcp-modern-audit": "flask_mcp-modern",
    "flask_mcp-jwt-audit": "flask_mcp-jwt",
    "flask_mcp-jwt-modern-audit": "flask_mcp-jwt-modern",
}


def floor_of(name: str) -> str:
    """The floor a flask_mcp scenario is compared with: the same work in the same era, on the same server kind
    (for an audited one, the same call with the trail off)."""
    base, at, server = name.partition("@")
    return (UNAUDITED.get(base) or OWN_FLOORS.get(base, "floor")) + at + server


def pairs(servers: t.Iterable[RunningServer]) -> list[tuple[RunningServer, RunningServer]]:
    """Each flask_mcp scenario among *servers* with its floor, when that runs too."""
    by_name = {server.spec.name: server for server in servers}
    return [
        (server, by_name[floor_of(name)])
        for name, server in by_name.items()
        if name.partition("@")[0] in SCENARIOS and floor_of(name) in by_name
    ]


def _at_once(
    first: RunningServer, second: RunningServer, tool: str, concurrency: int, seconds: float, cpus: str | None
) -> tuple[load.Measurement, load.Measurement]:
    """Load *first* and *second* for the same *seconds*, at the same time."""
    measured: dict[int, load.Measurement] = {}
    failed: list[BaseException] = []

    def drive(index: int, server: RunningServer) -> None:
        try:
            spec = server.spec
            measured[index] = load.measure(
                tool, server.port, server.session_id, concurrency, seconds, spec.era, cpus, spec.variant
            )
        except BaseException as exc:  # re-raised in the calling thread
            failed.append(exc)

    threads = [threading.Thread(target=drive, args=(index, server)) for index, server in enumerate((first, second))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failed:
        raise failed[0]
    return measured[0], measured[1]


def run_side_by_side(
    servers: list[RunningServer],
    *,
    rounds: int,
    duration: float,
    warmup: float,
    concurrencies: list[int],
    tool: str,
    cpus: str | None,
) -> list[dict[str, t.Any]]:
    """Every pair of :func:`pairs` at every concurrency, *rounds* times; one entry per pair and concurrency.

    :param cpus: the CPUs of the load generators (the servers are expected on
        one other CPU, as ``--pin`` places them).
    """
    found: dict[tuple[str, int], dict[str, list[float]]] = {}
    for round_number in range(rounds):
        for ours, floor in pairs(servers):
            # Every other round the floor's load starts first.
            first, second = (ours, floor) if round_number % 2 == 0 else (floor, ours)
            for concurrency in concurrencies:
                if warmup > 0:
                    _at_once(first, second, tool, concurrency, warmup, cpus)
                a, b = _at_once(first, second, tool, concurrency, duration, cpus)
                mine, theirs = (a, b) if first is ours else (b, a)
                entry = found.setdefault((ours.spec.name, concurrency), {"rps": [], "floor_rps": [], "p99": []})
                entry["rps"].append(mine.rps)
                entry["floor_rps"].append(theirs.rps)
                entry["p99"].append(mine.p99_ms / theirs.p99_ms if theirs.p99_ms else float("nan"))
                print(
                    f"  side by side, round {round_number + 1} {ours.spec.name:<26} c={concurrency:<3} "
                    f"{mine.rps:7.0f} against {theirs.rps:7.0f} req/s: {mine.rps / theirs.rps:.3f}",
                    flush=True,
                )
    return [_summary(name, concurrency, entry) for (name, concurrency), entry in found.items()]


def _summary(name: str, concurrency: int, entry: dict[str, list[float]]) -> dict[str, t.Any]:
    ratios = [round(ours / floor, 3) for ours, floor in zip(entry["rps"], entry["floor_rps"], strict=True)]
    return {
        "scenario": name,
        "floor": floor_of(name),
        "concurrency": concurrency,
        "rps_ratio_rounds": ratios,
        "rps_ratio_median": round(statistics.median(ratios), 3),
        "rps_ratio_min": min(ratios),
        "rps_ratio_max": max(ratios),
        "p99_ratio_median": round(statistics.median(entry["p99"]), 3),
        "rps_rounds": [round(value, 1) for value in entry["rps"]],
        "floor_rps_rounds": [round(value, 1) for value in entry["floor_rps"]],
    }
