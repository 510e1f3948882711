"""Benchmark flask_mcp against fastmcp, the official SDK server and a bare-Flask floor.

    python benchmarks/run.py [--duration SECONDS] [--json PATH] [--only NAMES]

All servers run at once on loopback; the load goes to one after the other
in rounds, each flask_mcp scenario next to its floor on the same server,
and every other round in the opposite order, so that drift of the machine
hits all alike. Ratios are computed within the same run only, each
flask_mcp scenario against the peers of its era (handshake or modern) and
the floor: of the rates averaged over the rounds, and round by round (their
median is the steadier figure on a noisy machine).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pickle
import platform
import shutil
import statistics
import sys
import time
import typing as t
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import load
from benchmarks.servers_under_test import SPECS, CheckFailed, Redis, RunningServer, ServerSpec, missing
from benchmarks.side_by_side import run_side_by_side

PEERS = ("fastmcp-stateful", "fastmcp-stateful@granian", "fastmcp-stateless", "sdk", "floor", "ceiling")
MODERN_PEERS = ("fastmcp-modern", "fastmcp-modern@granian", "floor", "floor-modern", "ceiling")
#: The servers other than gunicorn gthread that flask_mcp and the floor run on (``name@server``).
OTHER_SERVERS = ("gevent", "granian")
#: Each flask_mcp scenario and the peers it is compared with: the same era, and the floor.
COMPARED: dict[str, tuple[str, ...]] = {
    "flask_mcp-stateful": PEERS,
    "flask_mcp-stateless": PEERS,
    "flask_mcp-redis": PEERS,
    "flask_mcp-modern": MODERN_PEERS,
    # Signed in and streamed: against the bare view doing the same work first.
    "flask_mcp-jwt": ("floor-jwt", "flask_mcp-stateful"),
    "flask_mcp-jwt-audit": ("flask_mcp-jwt", "floor-jwt"),
    "flask_mcp-static": ("floor-static", "flask_mcp-stateful"),
    "flask_mcp-oauth": ("floor-oauth", "flask_mcp-jwt"),
    "flask_mcp-progress": ("floor-stream", "flask_mcp-stateful"),
    # The same in the 2026-07-28 era: against its floor first, then the era's plain call, then the
    # same work in the handshake era (what the era changes) and that era's floor.
    "flask_mcp-jwt-modern": ("floor-jwt-modern", "flask_mcp-modern", "flask_mcp-jwt", "floor-jwt"),
    "flask_mcp-static-modern": ("floor-static-modern", "flask_mcp-modern", "flask_mcp-static", "floor-static"),
    "flask_mcp-oauth-modern": ("floor-oauth-modern", "flask_mcp-jwt-modern", "flask_mcp-oauth", "floor-oauth"),
    "flask_mcp-progress-modern": ("floor-stream-modern", "flask_mcp-modern", "flask_mcp-progress", "floor-stream"),
    # The audit trail on, against the same scenario with it off first.
    "flask_mcp-audit": ("flask_mcp-stateful", "floor"),
    "flask_mcp-modern-audit": ("flask_mcp-modern", "floor-modern"),
    "flask_mcp-jwt-modern-audit": ("flask_mcp-jwt-modern", "floor-jwt-modern"),
    # The ceiling against the peers: the most any WSGI app can reach against them here.
    "ceiling": ("fastmcp-modern", "fastmcp-stateful", "floor"),
    # On another server: against the floor on the same server first, then the gthread floor and the peers.
    **{
        f"{scenario}@{server}": (f"{floor}@{server}", *peers)
        for server in OTHER_SERVERS
        for scenario, floor, peers in (
            ("flask_mcp-stateful", "floor", PEERS),
            ("flask_mcp-redis", "floor", PEERS),
            ("flask_mcp-modern", "floor-modern", MODERN_PEERS),
        )
    },
    **{f"floor@{server}": ("floor",) for server in OTHER_SERVERS},
    **{f"floor-modern@{server}": ("floor-modern",) for server in OTHER_SERVERS},
}
FLASK_MCP = tuple(name for name in COMPARED if name.startswith("flask_mcp"))
DEFAULT_JSON = Path(__file__).with_name("results") / "latest.json"
TYPICAL_CLIENT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"sampling": {}, "elicitation": {"form": {}}, "roots": {"listChanged": True}},
    "clientInfo": {"name": "mcp", "version": "2.3.0"},
}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=10.0, help="measured seconds per run (default 10)")
    parser.add_argument("--warmup", type=float, default=2.0, help="unmeasured seconds before each run (default 2)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds over all servers (default 3)")
    parser.add_argument("--concurrency", default="1,16", help="comma-separated connection counts (default 1,16)")
    parser.add_argument("--only", default="", help="comma-separated server names (default: all)")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help=f"output file (default {DEFAULT_JSON})")
    parser.add_argument("--load", choices=("wrk", "python"), default=load.available(), help="load generator")
    parser.add_argument(
        "--pin",
        action="store_true",
        help="servers on the first CPU, wrk and redis-server on the others (taskset; two CPUs at least)",
    )
    parser.add_argument(
        "--side-by-side",
        type=int,
        default=0,
        metavar="ROUNDS",
        help="after the rounds, ROUNDS more with each flask_mcp scenario and its floor loaded at once "
        "on one CPU (benchmarks/side_by_side.py; implies --pin)",
    )
    args = parser.parse_args(argv)
    args.pin = args.pin or args.side_by_side > 0
    return args


def placement(pin: bool) -> dict[str, str] | None:
    """The CPUs of the servers and of the load (wrk, redis-server) with ``--pin``; ``None``: the scheduler's.

    On a small machine the load generator, Redis and the server take turns on
    the same CPUs, and the server is moved between them: apart, each server
    runs alone on its CPU, as it would on a host of its own.
    """
    cpus = os.cpu_count() or 1
    if not pin:
        return None
    if cpus < 2 or shutil.which("taskset") is None:
        raise SystemExit("--pin needs two CPUs and taskset (Debian package util-linux)")
    return {"servers": "0", "load": f"1-{cpus - 1}" if cpus > 2 else "1"}


def select(only: str) -> list[ServerSpec]:
    names = [name.strip() for name in only.split(",") if name.strip()]
    unknown = set(names) - {spec.name for spec in SPECS}
    if unknown:
        raise SystemExit(f"unknown server(s): {', '.join(sorted(unknown))}; known: {', '.join(s.name for s in SPECS)}")
    return [spec for spec in SPECS if not names or spec.name in names]


#: Where each server goes in a round: each flask_mcp scenario next to its floor on the same server.
PAIRED_ORDER = (
    "flask_mcp-stateful", "floor", "flask_mcp-redis", "flask_mcp-modern", "floor-modern",
    "flask_mcp-jwt", "floor-jwt", "flask_mcp-jwt-audit", "flask_mcp-static", "floor-static",
    "flask_mcp-oauth", "floor-oauth",
    "flask_mcp-progress", "floor-stream",
    "flask_mcp-jwt-modern", "floor-jwt-modern", "flask_mcp-jwt-modern-audit", "flask_mcp-static-modern",
    "floor-static-modern",
    "flask_mcp-oauth-modern", "floor-oauth-modern",
    "flask_mcp-progress-modern", "floor-stream-modern",
)  # fmt: skip


def paired(servers: list[RunningServer]) -> list[RunningServer]:
    """*servers* in the order of a round: on each server kind, the flask_mcp scenarios beside their floors.

    A round is long (every server at every concurrency), and the machine
    drifts meanwhile: a ratio of two rates measured minutes apart carries
    that drift, two measured one after the other hardly any.
    """

    def place(server: RunningServer) -> tuple[str, int, str]:
        base, _, kind = server.spec.name.partition("@")
        rank = PAIRED_ORDER.index(base) if base in PAIRED_ORDER else len(PAIRED_ORDER)
        return (kind, rank, base)

    return sorted(servers, key=place)


def run_rounds(
    servers: list[RunningServer], args: argparse.Namespace, concurrencies: list[int], cpus: str | None = None
) -> dict[tuple[str, int], list[load.Measurement]]:
    samples: dict[tuple[str, int], list[load.Measurement]] = {}
    order = paired(servers)
    for round_number in range(args.rounds):
        # Every other round backwards: what came first comes last, so a steady drift cancels out.
        for server in order if round_number % 2 == 0 else order[::-1]:
            era, variant = server.spec.era, server.spec.variant
            for concurrency in concurrencies:
                if args.warmup > 0:
                    load.measure(
                        args.load, server.port, server.session_id, concurrency, args.warmup, era, cpus, variant
                    )
                sample = load.measure(
                    args.load, server.port, server.session_id, concurrency, args.duration, era, cpus, variant
                )
                samples.setdefault((server.spec.name, concurrency), []).append(sample)
                print(
                    f"  round {round_number + 1} {server.spec.name:<26} c={concurrency:<3} "
                    f"{sample.rps:8.0f} req/s  p99 {sample.p99_ms:6.2f} ms",
                    flush=True,
                )
    return samples


def summarize(samples: dict[tuple[str, int], list[load.Measurement]]) -> list[dict[str, t.Any]]:
    results = []
    for (name, concurrency), runs in samples.items():
        results.append(
            {
                "server": name,
                "concurrency": concurrency,
                "rps": round(statistics.fmean(run.rps for run in runs), 1),
                # The spread over the rounds: the slowest and the fastest round.
                "rps_min": round(min(run.rps for run in runs), 1),
                "rps_max": round(max(run.rps for run in runs), 1),
                "rps_rounds": [round(run.rps, 1) for run in runs],
                "p50_ms": round(statistics.median(run.p50_ms for run in runs), 3),
                "p99_ms": round(statistics.median(run.p99_ms for run in runs), 3),
                "errors": sum(run.errors for run in runs),
            }
        )
    return results


def ratios(results: list[dict[str, t.Any]]) -> list[dict[str, t.Any]]:
    """flask_mcp / each peer of its era (and / floor), per concurrency, from this run's results."""
    by_key = {(r["server"], r["concurrency"]): r for r in results}
    found = []
    for (name, concurrency), ours in sorted(by_key.items()):
        for peer in COMPARED.get(name, ()):
            theirs = by_key.get((peer, concurrency))
            if theirs is None or not theirs["rps"] or not theirs["p99_ms"]:
                continue
            rounds = [
                round(a / b, 3)
                for a, b in zip(ours.get("rps_rounds", ()), theirs.get("rps_rounds", ()), strict=True)
                if b
            ]
            found.append(
                {
                    "scenario": name,
                    "peer": peer,
                    "concurrency": concurrency,
                    "rps_ratio": round(ours["rps"] / theirs["rps"], 3),
                    # Round by round: the machine's drift within a run shows in their spread.
                    "rps_ratio_rounds": rounds,
                    "rps_ratio_median": round(statistics.median(rounds), 3) if rounds else None,
                    "p99_ratio": round(ours["p99_ms"] / theirs["p99_ms"], 3),
                }
            )
    return found


def tools_list_ms(tool_count: int = 1000, calls: int = 200) -> float:
    """Milliseconds per ``tools/list`` (all tools on one page), in process through the WSGI app."""
    from benchmarks.servers.flask_mcp_app import BASE_TOOLS, create_app

    client = create_app("stateless", extra_tools=tool_count - BASE_TOOLS).test_client()
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    response = client.post("/mcp", json=body)
    assert len(response.get_json()["result"]["tools"]) == tool_count
    started = time.perf_counter()
    for _ in range(calls):
        client.post("/mcp", json=body)
    return (time.perf_counter() - started) / calls * 1000


def idle_session_bytes(redis_url: str | None) -> dict[str, int]:
    """Bytes one idle session of a typical client occupies in the cache."""
    from benchmarks.servers.flask_mcp_app import create_app
    from flask_mcp.policies.store_keys import key as store_key

    sizes = {}
    modes = [("simplecache", "stateful")] + ([("redis", "redis")] if redis_url else [])
    for label, mode in modes:
        if redis_url:
            os.environ["BENCH_REDIS_URL"] = redis_url
        app = create_app(mode)
        response = app.test_client().post(
            "/mcp", json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": TYPICAL_CLIENT}
        )
        session_id = response.headers["Mcp-Session-Id"]
        key = store_key("session", session_id)
        if label == "redis":
            import redis

            prefix = app.config["MCP_CACHE_KEY_PREFIX"]
            sizes[label] = int(redis.Redis.from_url(t.cast(str, redis_url)).strlen(prefix + key))
        else:
            with app.app_context():
                record = app.extensions["mcp"].sessions.cache.get(key)
            # SimpleCache stores values pickled with the highest protocol.
            sizes[label] = len(pickle.dumps(record, pickle.HIGHEST_PROTOCOL))
    return sizes


def store_commands_per_call(redis_url: str, calls: int = 500, tracked: bool = True) -> dict[str, float]:
    """Redis commands per handshake-era ``tools/call`` in a session (``INFO commandstats`` before and after).

    :param tracked: keep the session's record in the process while Redis reports it unchanged
        (``MCP_TRACK_SESSION_READS``, the default); ``False``: read it on every call.
    """
    import redis

    from benchmarks.servers.flask_mcp_app import create_app

    os.environ["BENCH_REDIS_URL"] = redis_url
    client = create_app("redis", config={"MCP_TRACK_SESSION_READS": tracked}).test_client()
    response = client.post("/mcp", json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": TYPICAL_CLIENT})
    headers = {"Mcp-Session-Id": response.headers["Mcp-Session-Id"], "MCP-Protocol-Version": "2025-11-25"}
    client.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    store = redis.Redis.from_url(redis_url)

    def counts() -> dict[str, int]:
        return {name: stats["calls"] for name, stats in store.info("commandstats").items()}

    def call(number: int) -> None:
        body = {
            "jsonrpc": "2.0",
            "id": number + 1,
            "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": 1, "b": 2}},
        }
        assert client.post("/mcp", json=body, headers=headers).status_code == 200

    call(0)  # the first call opens the connections: the steady state is counted
    before = counts()
    for number in range(calls):
        call(number + 1)
    after = counts()
    spent = {name.removeprefix("cmdstat_"): (after[name] - before.get(name, 0)) / calls for name in after}
    # The INFO commands of this count are not the calls'.
    return {name: round(per_call, 3) for name, per_call in spent.items() if per_call and name != "info"}


def print_table(results: list[dict[str, t.Any]], found: list[dict[str, t.Any]]) -> None:
    print(f"\n{'server':<26}{'conc':>5}{'req/s':>10}{'rounds':>14}{'p50 ms':>9}{'p99 ms':>9}{'errors':>8}")
    for r in sorted(results, key=lambda r: (r["concurrency"], r["server"])):
        spread = f"{r['rps_min']:.0f}-{r['rps_max']:.0f}"
        print(
            f"{r['server']:<26}{r['concurrency']:>5}{r['rps']:>10.0f}{spread:>14}"
            f"{r['p50_ms']:>9.2f}{r['p99_ms']:>9.2f}{r['errors']:>8}"
        )
    if found:
        print(f"\n{'scenario':<28}{'peer':<26}{'conc':>5}{'req/s ratio':>13}{'median':>8}{'p99 ratio':>11}")
        for f in found:
            median = f["rps_ratio_median"]
            print(
                f"{f['scenario']:<28}{f['peer']:<26}{f['concurrency']:>5}{f['rps_ratio']:>13.2f}"
                f"{median if median is not None else float('nan'):>8.2f}{f['p99_ratio']:>11.2f}"
            )


def start(spec: ServerSpec, redis_url: str | None, cpus: str | None = None) -> RunningServer | str:
    """Start *spec* and check it; a peer failing its check is not run, and the reason is returned.

    A flask_mcp scenario failing its check is a bug, not a condition of this
    machine, so :class:`CheckFailed` propagates for those.
    """
    try:
        return RunningServer(spec, redis_url, cpus)
    except CheckFailed as error:
        if spec.name in FLASK_MCP:
            raise
        return f"failed the check before the load: {error.reason}"


def main(argv: list[str] | None = None) -> dict[str, t.Any]:
    args = parse_args(argv)
    concurrencies = [int(c) for c in args.concurrency.split(",") if c.strip()]
    specs = select(args.only)
    skipped = {spec.name: reason for spec in specs if (reason := missing(spec))}
    for name, reason in skipped.items():
        print(f"skipping {name}: {reason}")
    runnable = [spec for spec in specs if spec.name not in skipped]
    cpus = placement(args.pin)
    redis = Redis(cpus["load"] if cpus else None) if any(spec.redis for spec in runnable) else None
    if any(spec.variant == "oauth" for spec in runnable):
        from benchmarks.servers.oauth_issued import prepared

        prepared()  # the authorization server's tables and a token, in the environment the servers inherit
    servers: list[RunningServer] = []
    try:
        for spec in runnable:
            server = start(spec, redis.url if redis else None, cpus["servers"] if cpus else None)
            if isinstance(server, str):
                skipped[spec.name] = server
                print(f"skipping {spec.name}: {server}", flush=True)
                continue
            servers.append(server)
            print(f"started {spec.name} on port {server.port}", flush=True)
        samples = run_rounds(servers, args, concurrencies, cpus["load"] if cpus else None) if servers else {}
        side = run_side_by_side(
            servers,
            rounds=args.side_by_side,
            duration=args.duration,
            warmup=args.warmup,
            concurrencies=concurrencies,
            tool=args.load,
            cpus=cpus["load"] if cpus else None,
        )
        extras = {
            "tools_list_1000_ms": round(tools_list_ms(), 3),
            "idle_session_bytes": idle_session_bytes(redis.url if redis else None),
            "redis_commands_per_call": store_commands_per_call(redis.url) if redis else None,
            "redis_commands_per_call_untracked": store_commands_per_call(redis.url, tracked=False) if redis else None,
        }
    finally:
        for server in servers:
            server.stop()
        if redis:
            redis.stop()
    results = summarize(samples)
    found = ratios(results)
    report = {
        "generated": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "load_generator": args.load,
        "duration_s": args.duration,
        "warmup_s": args.warmup,
        "rounds": args.rounds,
        "cpus": cpus,
        "results": results,
        "ratios": found,
        "side_by_side_rounds": args.side_by_side,
        "side_by_side": side,
        "skipped": skipped,
        **extras,
    }
    print_table(results, found)
    for entry in side:
        print(
            f"side by side: {entry['scenario']:<26} / {entry['floor']:<20} c={entry['concurrency']:<3} "
            f"median {entry['rps_ratio_median']:.3f} ({entry['rps_ratio_min']:.3f}-{entry['rps_ratio_max']:.3f}), "
            f"p99 {entry['p99_ratio_median']:.2f}"
        )
    print(f"\ntools/list with 1000 tools: {extras['tools_list_1000_ms']:.3f} ms per call")
    print(f"idle session in the cache: {extras['idle_session_bytes']} bytes")
    print(f"Redis commands per tools/call in a session: {extras['redis_commands_per_call']}")
    print(f"... with MCP_TRACK_SESSION_READS = False: {extras['redis_commands_per_call_untracked']}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(f"written to {args.json}")
    return report


if __name__ == "__main__":
    main()
