"""Calls a second in process, each scenario in a process of its own, all on one CPU at the same time.

    python benchmarks/in_process.py [--only NAMES] [--seconds S] [--rounds N] [--evict BYTES]
                                    [--against CHECKOUT] [--json PATH]

``benchmarks/instructions.py`` counts what a call executes; this times it.
Each scenario of that module (the floors and flask_mcp's, built the same
way) runs in a child process pinned to the same CPU, sending its
``tools/call`` through the WSGI app in a loop. The children start each
round together and count their calls over the same seconds, so the
scheduler shares the CPU between them and whatever the host does to that
CPU meanwhile, it does to all: the ratio of two counts is the ratio of what
a call costs each, steady to a few percent where the rates themselves move
by tens.

Instructions are not time. A request under a server runs after the
server's own work has taken the caches, and a call that executes more
distinct code finds less of it there. ``--evict BYTES`` rewrites a buffer
of that size between calls, evicting the caches as such work does: what
a call then costs is closer to what it costs under a server.

``--against CHECKOUT`` runs each flask_mcp scenario a second time from
another checkout of the project (an earlier commit, say, from ``git
worktree add``), in the same rounds on the same CPU: a change's effect,
measured side by side with the code before it and with the floor.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import typing as t
from pathlib import Path

# A child that runs another checkout's scenario (--against) imports it from there (ROOT_VARIABLE).
sys.path.insert(0, os.environ.get("FLASK_MCP_BENCH_ROOT") or str(Path(__file__).resolve().parents[1]))

from benchmarks.instructions import FLOOR_OF, SCENARIOS

#: Set in a child that runs another checkout's scenario (``--against``): where to import it from.
ROOT_VARIABLE = "FLASK_MCP_BENCH_ROOT"

DEFAULT_JSON = Path(__file__).with_name("results") / "in_process.json"
#: Calls each child sends before the rounds, unmeasured.
WARMUP = 2000
#: Calls between two looks at the clock.
BATCH = 20


def child(name: str, evict: int, cpu: int) -> None:
    """Run in a child: warm *name* up, then for each start time read from stdin, count calls until it ends."""
    from benchmarks.instructions import caller

    os.sched_setaffinity(0, {cpu})
    call = caller(name)
    if evict:
        buffer = bytearray(evict)

        def evicting() -> None:
            call()
            buffer[:] = buffer  # rewritten whole: the caches hold it, not the call's code and data

        run = evicting
    else:
        run = call
    for _ in range(WARMUP):
        run()
    print("ready", flush=True)
    for line in sys.stdin:
        start, seconds = (float(part) for part in line.split())
        while time.time() < start:  # the children start together (a busy wait: the CPU is theirs anyway)
            pass
        end, calls = start + seconds, 0
        while True:
            for _ in range(BATCH):
                run()
            calls += BATCH
            if time.time() >= end:
                break
        print(calls, flush=True)


#: How a scenario run from the ``--against`` checkout is named in the report.
AGAINST = "{name} (against)"


def measure(
    names: list[str], seconds: float, rounds: int, evict: int, cpu: int, against: Path | None = None
) -> dict[str, list[int]]:
    """Calls each scenario made in each round, all children pinned to *cpu*.

    :param against: another checkout, whose flask_mcp scenarios run too (named after :data:`AGAINST`).
    """
    command = [sys.executable, __file__, "--child"]
    runs = [(name, name, None) for name in names]
    if against is not None:
        runs += [(AGAINST.format(name=name), name, against) for name in names if not name.startswith("floor")]
    children = [
        subprocess.Popen(
            [*command, name, "--evict", str(evict), "--cpu", str(cpu)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, ROOT_VARIABLE: str(root)} if root is not None else None,
        )
        for _, name, root in runs
    ]
    names = [label for label, _, _ in runs]
    counts: dict[str, list[int]] = {name: [] for name in names}
    try:
        for process in children:
            assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        for _ in range(rounds):
            start = time.time() + 0.2
            for process in children:
                assert process.stdin is not None
                process.stdin.write(f"{start} {seconds}\n")
                process.stdin.flush()
            for name, process in zip(names, children, strict=True):
                assert process.stdout is not None
                counts[name].append(int(process.stdout.readline()))
    finally:
        for process in children:
            if process.stdin is not None:
                process.stdin.close()
            process.wait(timeout=60)
    return counts


def main(argv: list[str] | None = None) -> dict[str, t.Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--only",
        default="floor,flask_mcp,floor-modern,flask_mcp-modern",
        help="comma-separated scenarios of benchmarks/instructions.py (default: both eras)",
    )
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per round (default 2)")
    parser.add_argument("--rounds", type=int, default=10, help="rounds (default 10)")
    parser.add_argument(
        "--evict",
        type=int,
        default=0,
        metavar="BYTES",
        help="bytes of a buffer rewritten between calls (default 0: none)",
    )
    parser.add_argument("--cpu", type=int, default=0, help="the CPU every child runs on (default 0)")
    parser.add_argument(
        "--against",
        type=Path,
        metavar="CHECKOUT",
        help="another checkout of flask_mcp whose scenarios run too, side by side (default: none)",
    )
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help=f"output file (default {DEFAULT_JSON})")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)  # fmt: skip
    if args.child:
        child(args.child, args.evict, args.cpu)
        return {}
    names = [name.strip() for name in args.only.split(",") if name.strip()]
    known = [name for name, (kind, _) in SCENARIOS.items() if kind != "redis"]  # no redis-server started here
    unknown = set(names) - set(known)
    if unknown:
        raise SystemExit(f"unknown scenario(s): {', '.join(sorted(unknown))}; known: {', '.join(known)}")
    if args.against is not None and not (args.against / "benchmarks" / "instructions.py").is_file():
        raise SystemExit(f"--against {args.against}: not a checkout of flask_mcp (no benchmarks/instructions.py)")
    counts = measure(names, args.seconds, args.rounds, args.evict, args.cpu, args.against)
    ratios: dict[str, dict[str, t.Any]] = {}
    for label in counts:
        name = label.removesuffix(AGAINST.format(name=""))
        floor = FLOOR_OF[name]
        if name == floor or floor not in counts:
            continue
        ratios[label] = _ratio(label, counts[label], floor, counts[floor])
    report = {
        "seconds": args.seconds,
        "evict_bytes": args.evict,
        "against": None if args.against is None else str(args.against),
        "calls_per_second": {name: [round(count / args.seconds) for count in found] for name, found in counts.items()},
        "ratio_to_floor": ratios,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    return report


def _ratio(name: str, ours: list[int], floor: str, theirs: list[int]) -> dict[str, t.Any]:
    """*name*'s calls against its *floor*'s, round by round, with their median (printed too)."""
    rounds = [round(a / b, 3) for a, b in zip(ours, theirs, strict=True)]
    median = round(statistics.median(rounds), 3)
    print(f"{name:<30} / {floor:<14} median {median:.3f} ({min(rounds):.3f}-{max(rounds):.3f})")
    return {"floor": floor, "rounds": rounds, "median": median}


if __name__ == "__main__":
    main()
