"""Instructions per ``tools/call``, counted by callgrind: flask_mcp against the floor, whatever else the machine runs.

    python benchmarks/instructions.py [--calls N] [--jobs N] [--only NAMES] [--json PATH]

Wall-clock timings on a shared machine move by tens of percent from one run
to the next; the number of instructions a process executes does not. Each
scenario is run twice under ``valgrind --tool=callgrind`` in process through
the WSGI app (no server, no sockets): once warmed up and stopped, once
warmed up and then sending ``--calls`` more ``tools/call add(40, 2)``. The
difference, divided by the calls, is what one call costs, free of the
interpreter's start-up and the imports. The garbage collector is stopped
for the counted calls: a collection of the older generations costs millions
of instructions at a moment that depends on everything allocated before,
so it would land in one run of a pair and not the other. ``--collect``
leaves it on, to count its share too (give enough ``--calls`` for its
collections to average out).

Scenarios: ``floor`` and ``floor-modern`` (the bare Flask views of
``servers/floor_app.py``), ``flask_mcp`` (handshake era, a session in
SimpleCache), ``flask_mcp-modern`` (2026-07-28), and ``flask_mcp-redis``
(handshake, the session in RedisCache on a private redis-server; skipped
when ``redis-server`` is not installed). Signed in, in both eras:
``flask_mcp-jwt`` (a bearer JWT, ``JWTBackend``), ``flask_mcp-static`` (a
static token, ``StaticTokenBackend``) and ``flask_mcp-oauth`` (a token of
the app's own ``OAuthServer``), against ``floor-jwt``, ``floor-static`` and
``floor-oauth`` (views verifying the same token); streamed, in both eras:
``flask_mcp-progress`` (a tool reporting progress three times) against
``floor-stream`` (a view streaming the same four events). The 2026-07-28
ones end in ``-modern``, each against the ``-modern`` floor: the same view
answering as that era does. Each flask_mcp scenario's ratio is to its
floor (:data:`FLOOR_OF`): instructions of the floor over its own, so 1.00
is the floor's cost and 0.5 twice it. The Redis scenario counts the Python
process's instructions only; the round trip's wait and the server's work
are not in them.

``--scenario NAME --count N`` runs one scenario's calls in this process (no
valgrind): what the two counted runs execute.
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import typing as t
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.load import Era, Variant, authorization, call_body, call_headers
from benchmarks.scale import environ_for, open_session, post
from benchmarks.servers_under_test import IGNORED_SESSION
from benchmarks.side_by_side import OWN_FLOORS

if t.TYPE_CHECKING:
    from flask import Flask

DEFAULT_JSON = Path(__file__).with_name("results") / "instructions.json"
WARMUP = 300
SCENARIOS: dict[str, tuple[str, Era]] = {
    # name: (what app, which era); the floors first, every ratio needs them.
    "floor": ("floor", "handshake"),
    "floor-modern": ("floor-modern", "modern"),
    "floor-jwt": ("floor-jwt", "handshake"),
    "floor-stream": ("floor-stream", "handshake"),
    "floor-static": ("floor-static", "handshake"),
    "floor-oauth": ("floor-oauth", "handshake"),
    # The same views answering as the 2026-07-28 era does (resultType, the server's info).
    "floor-jwt-modern": ("floor-jwt-modern", "modern"),
    "floor-stream-modern": ("floor-stream-modern", "modern"),
    "floor-static-modern": ("floor-static-modern", "modern"),
    "floor-oauth-modern": ("floor-oauth-modern", "modern"),
    "flask_mcp": ("stateful", "handshake"),
    "flask_mcp-modern": ("stateful", "modern"),
    "flask_mcp-redis": ("redis", "handshake"),
    # Signed in: a bearer JWT verified by JWTBackend, against a view verifying it with PyJWT.
    "flask_mcp-jwt": ("jwt", "handshake"),
    # Signed in with a static token: StaticTokenBackend, against a view comparing the same token.
    "flask_mcp-static": ("static", "handshake"),
    # Signed in with a token of the app's own OAuthServer, against a view verifying it with PyJWT.
    "flask_mcp-oauth": ("oauth", "handshake"),
    # Streamed: a tool reporting progress three times, against a view streaming the same four events.
    "flask_mcp-progress": ("stateful", "handshake"),
    # The same four in the 2026-07-28 era: no session (each call still carries its token), each
    # against its -modern floor. The modern stream has no priming event and no event ids: the
    # floor streams the same four events.
    "flask_mcp-jwt-modern": ("jwt", "modern"),
    "flask_mcp-static-modern": ("static", "modern"),
    "flask_mcp-oauth-modern": ("oauth", "modern"),
    "flask_mcp-progress-modern": ("stateful", "modern"),
}
#: Each scenario's floor, the bare view doing the same work for the same request: a floor's is
#: itself; the plain handshake call's (here ``flask_mcp``, served ``flask_mcp-stateful``) the plain
#: floor; every other's the one the side-by-side runs pair it with.
FLOOR_OF: dict[str, str] = {
    **{name: name for name in SCENARIOS if name.startswith("floor")},
    "flask_mcp": "floor",
    "flask_mcp-redis": "floor",
    **OWN_FLOORS,
}
#: What each call does besides a plain ``add`` (a variant of benchmarks/load.py): signed in with
#: a token, or the ``progress`` tool with a progress token. A scenario not named here is ``plain``.
VARIANT_OF: dict[str, Variant] = {
    "floor-jwt": "jwt", "flask_mcp-jwt": "jwt",
    "floor-jwt-modern": "jwt", "flask_mcp-jwt-modern": "jwt",
    "floor-static": "static", "flask_mcp-static": "static",
    "floor-static-modern": "static", "flask_mcp-static-modern": "static",
    "floor-oauth": "oauth", "flask_mcp-oauth": "oauth",
    "floor-oauth-modern": "oauth", "flask_mcp-oauth-modern": "oauth",
    "floor-stream": "progress", "flask_mcp-progress": "progress",
    "floor-stream-modern": "progress", "flask_mcp-progress-modern": "progress",
}  # fmt: skip
#: The scenarios answered as an event stream: three progress notifications, then the result.
STREAMED = {name for name, variant in VARIANT_OF.items() if variant == "progress"}
#: The scenarios whose calls carry a bearer token (the signing module's, or the app's own server's).
SIGNED_IN = {name for name, variant in VARIANT_OF.items() if variant in ("jwt", "static", "oauth")}
#: The apps whose token the app's own authorization server issues: its tables are prepared first.
OAUTH_KINDS = ("oauth", "floor-oauth", "floor-oauth-modern")


def build(kind: str) -> Flask:
    """The app a scenario sends its calls to."""
    if kind in OAUTH_KINDS:
        from benchmarks.servers import oauth_issued

        return oauth_issued.app() if kind == "oauth" else oauth_issued.floor(modern=kind.endswith("modern"))
    if kind.startswith("floor"):
        from benchmarks.servers import floor_app

        made: dict[str, t.Callable[[], Flask]] = {
            "floor": lambda: floor_app.app,
            "floor-modern": lambda: floor_app.modern_app,
            "floor-jwt": floor_app.signed_in,  # PyJWT: only when asked for
            "floor-stream": lambda: floor_app.streaming_app,
            "floor-static": lambda: floor_app.static_token_app,
            "floor-jwt-modern": floor_app.modern_signed_in,
            "floor-stream-modern": lambda: floor_app.modern_streaming_app,
            "floor-static-modern": lambda: floor_app.modern_static_token_app,
        }
        return made[kind]()
    from benchmarks.servers.flask_mcp_app import create_app

    return create_app(kind)


def request_of(name: str, app: Flask) -> tuple[dict[str, t.Any], dict[str, str]]:
    """The message and the headers of *name*'s call: what benchmarks/load.py sends for its era and variant."""
    kind, era = SCENARIOS[name]
    variant = VARIANT_OF.get(name, "plain")
    session = ""
    if era == "handshake":
        # The floor is sent the same request, with a session id it ignores.
        session = IGNORED_SESSION if kind.startswith("floor") else open_session(app, headers=signed_in_headers(name))
    # A modern streamed call names its tool in Mcp-Name as well as in the body: both say ``progress``.
    return call_body(7, 40, 2, era, variant), call_headers(session, era, variant)


def signed_in_headers(name: str) -> dict[str, str]:
    """The bearer token of a signed-in scenario (none for the others)."""
    return authorization(VARIANT_OF[name]) if name in SIGNED_IN else {}


def answered(name: str, status: str, data: bytes) -> bool:
    """Whether *name*'s call was answered as it should be: 42, and three progress notes when streamed.

    A modern answer must also say ``"resultType": "complete"`` (as the check of
    benchmarks/run.py wants it): without it, the request was served as the
    handshake era would serve it.
    """
    if not status.startswith("200"):
        return False
    if name in STREAMED:
        # The messages of the stream; a handshake-era stream of flask_mcp opens with an empty priming event.
        events = [line[5:] for line in data.splitlines() if line.startswith(b"data:") and line[5:].strip()]
        if len(events) != 4 or sum(b"notifications/progress" in event for event in events[:3]) != 3:
            return False
        data = events[-1]  # the result comes last
    result = json.loads(data)["result"]
    if SCENARIOS[name][1] == "modern" and result.get("resultType") != "complete":
        return False
    return bool(result["structuredContent"] == {"result": 42})


def caller(name: str) -> t.Callable[[], None]:
    """A function sending *name*'s ``tools/call add(40, 2)``, its answer checked once here."""
    app = build(SCENARIOS[name][0])
    message, headers = request_of(name, app)
    status, _, data = post(app, message, headers)
    if not answered(name, status, data):
        raise SystemExit(f"{name}: the call failed: {status} {data!r}")
    body = json.dumps(message).encode()
    environ = environ_for(body, headers)

    def ignore(status: str, headers: list[tuple[str, str]], exc_info: t.Any = None) -> None:
        pass

    def call() -> None:
        chunks = app({**environ, "wsgi.input": io.BytesIO(body)}, ignore)
        for _ in chunks:
            pass
        getattr(chunks, "close", lambda: None)()

    return call


def run_scenario(name: str, count: int, collect: bool = False) -> None:
    """Warm *name* up, then send *count* calls (what each counted run executes).

    :param collect: leave the garbage collector on while counting.
    """
    call = caller(name)
    for _ in range(WARMUP):
        call()
    gc.collect()
    if not collect:
        # A collection of the older generations costs millions of instructions and comes when
        # the allocations add up, in one run of the pair and not the other: none while counting.
        gc.disable()
    for _ in range(count):
        call()


def counted(name: str, count: int, redis_url: str | None, collect: bool = False) -> int:
    """Instructions callgrind counts for a run of *name* with *count* measured calls."""
    environment = {**os.environ, "PYTHONHASHSEED": "0"}
    if redis_url:
        environment["BENCH_REDIS_URL"] = redis_url
    with tempfile.TemporaryDirectory() as scratch:
        command = [
            "valgrind", "--tool=callgrind", f"--callgrind-out-file={scratch}/out",
            sys.executable, __file__, "--scenario", name, "--count", str(count),
            *(["--collect"] if collect else []),
        ]  # fmt: skip
        done = subprocess.run(command, env=environment, capture_output=True, text=True, check=False)
    found = re.search(r"Collected\s*:\s*(\d+)", done.stderr)
    if done.returncode != 0 or not found:
        raise SystemExit(f"{name}: callgrind failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return int(found.group(1))


def measure(names: list[str], calls: int, jobs: int, collect: bool = False) -> dict[str, float]:
    """Instructions per call of each scenario in *names*."""
    redis = None
    if "flask_mcp-redis" in names:
        if shutil.which("redis-server"):
            from benchmarks.servers_under_test import Redis

            redis = Redis()
        else:
            print("flask_mcp-redis: skipped, redis-server is not installed")
            names = [name for name in names if name != "flask_mcp-redis"]
    if any(SCENARIOS[name][0] in OAUTH_KINDS for name in names):
        from benchmarks.servers.oauth_issued import prepared

        prepared()  # the tables and the token, once: every counted process finds them in its environment
    try:
        per_call: dict[str, float] = {}
        with ThreadPoolExecutor(jobs) as pool:  # the counts do not depend on what else runs
            runs = {
                name: [pool.submit(counted, name, count, redis.url if redis else None, collect) for count in (0, calls)]
                for name in names
            }
            for name, (base, loaded) in runs.items():
                per_call[name] = (loaded.result() - base.result()) / calls
                print(f"  {name}: {per_call[name]:,.0f} instructions per call", flush=True)
        return per_call
    finally:
        if redis:
            redis.stop()


def main(argv: list[str] | None = None) -> dict[str, t.Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=300, help="measured calls per scenario (default 300)")
    parser.add_argument("--jobs", type=int, default=2, help="callgrind runs at once (default 2)")
    parser.add_argument("--only", default="", help="comma-separated scenarios (default: all; the floors always run)")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help=f"output file (default {DEFAULT_JSON})")
    parser.add_argument(
        "--collect",
        action="store_true",
        help="count the garbage collector's work too (give enough --calls for its collections to average out)",
    )
    parser.add_argument("--scenario", help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.scenario:
        run_scenario(args.scenario, args.count, args.collect)
        return {}
    if not shutil.which("valgrind"):
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    wanted = [name for name in args.only.split(",") if name] or list(SCENARIOS)
    names = [name for name in SCENARIOS if name in wanted or name in {FLOOR_OF.get(w) for w in wanted}]
    per_call = measure(names, args.calls, args.jobs, args.collect)
    report: dict[str, t.Any] = {"calls": args.calls, "collect": args.collect, "scenarios": {}}
    print(f"{'scenario':<28}{'instructions/call':>20}{'ratio to floor':>16}{'over floor':>14}")
    for name, value in per_call.items():
        floor = per_call[FLOOR_OF[name]]
        ratio = floor / value
        report["scenarios"][name] = {"instructions_per_call": round(value), "ratio_to_floor": round(ratio, 3)}
        print(f"{name:<28}{value:>20,.0f}{ratio:>16.2f}{value - floor:>14,.0f}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    return report


if __name__ == "__main__":
    main()
