"""Smoke test of the benchmark harness: it runs and produces numbers (no timing is asserted)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from pathlib import Path

import pytest

from benchmarks import load, run
from benchmarks.servers_under_test import ServerSpec

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("gunicorn") is None, reason="gunicorn is not installed (pip install -e '.[test]')"
)


def test_harness_produces_numbers(tmp_path: Path) -> None:
    output = tmp_path / "bench.json"
    report = run.main(
        ["--duration", "1", "--warmup", "0", "--rounds", "1", "--concurrency", "2",
         "--only", "flask_mcp-stateful,flask_mcp-modern,floor", "--json", str(output)]
    )  # fmt: skip
    assert json.loads(output.read_text()) == report
    assert {r["server"] for r in report["results"]} == {"flask_mcp-stateful", "flask_mcp-modern", "floor"}
    for result in report["results"]:
        assert result["concurrency"] == 2 and result["rps"] > 0 and result["p99_ms"] >= result["p50_ms"] > 0
        assert result["rps_min"] == result["rps_max"] == result["rps"]  # one round: no spread
        assert result["errors"] == 0  # modern requests included: envelope and routing headers accepted
    assert [(r["scenario"], r["peer"]) for r in report["ratios"]] == [
        ("flask_mcp-modern", "floor"),
        ("flask_mcp-stateful", "floor"),
    ]
    assert report["tools_list_1000_ms"] > 0
    assert report["idle_session_bytes"]["simplecache"] > 50  # a record, not a pickled None
    assert report["load_generator"] == load.available()


def test_unknown_server_names_are_refused() -> None:
    with pytest.raises(SystemExit, match="unknown server"):
        run.select("flask_mcp-stateful,nonsense")


def test_ratios_compare_each_scenario_with_the_peers_of_its_era() -> None:
    names = ["flask_mcp-stateful", "flask_mcp-modern", "fastmcp-stateful", "fastmcp-modern", "floor"]
    results = [{"server": name, "concurrency": 1, "rps": 100.0, "p99_ms": 1.0} for name in names]
    assert [(r["scenario"], r["peer"]) for r in run.ratios(results)] == [
        ("flask_mcp-modern", "fastmcp-modern"),
        ("flask_mcp-modern", "floor"),
        ("flask_mcp-stateful", "fastmcp-stateful"),
        ("flask_mcp-stateful", "floor"),
    ]


def test_modern_requests_carry_the_envelope_and_routing_headers() -> None:
    body = load.call_body(7, 1, 2, "modern")
    assert body["params"]["_meta"] == {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    headers = load.call_headers("ignored", "modern")
    assert headers["MCP-Protocol-Version"] == "2026-07-28" and "Mcp-Session-Id" not in headers
    assert (headers["Mcp-Method"], headers["Mcp-Name"]) == ("tools/call", "add")
    assert "_meta" not in load.call_body(7, 1, 2)["params"] and "Mcp-Method" not in load.call_headers("s")


@pytest.mark.parametrize("era", ["handshake", "modern"])
def test_the_signed_in_and_streamed_variants_shape_the_call(era: load.Era) -> None:
    from benchmarks.servers.signing import TOKEN

    signed = load.call_headers("s", era, "jwt")
    assert signed["Authorization"] == f"Bearer {TOKEN}"
    assert "Authorization" not in load.call_headers("s", era)
    streamed = load.call_body(7, 1, 2, era, "progress")
    assert streamed["params"]["name"] == "progress" and streamed["params"]["_meta"]["progressToken"] == "p-7"
    if era == "modern":
        assert load.call_headers("", era, "progress")["Mcp-Name"] == "progress"
        assert streamed["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"


@pytest.mark.parametrize(
    "names",
    [
        ["flask_mcp-jwt", "floor-jwt", "flask_mcp-progress", "floor-stream"],
        [
            "flask_mcp-jwt-modern", "floor-jwt-modern", "flask_mcp-static-modern", "floor-static-modern",
            "flask_mcp-oauth-modern", "floor-oauth-modern", "flask_mcp-progress-modern", "floor-stream-modern",
        ],
    ],
    ids=["handshake", "modern"],
)  # fmt: skip
def test_the_signed_in_and_streamed_scenarios_are_served_and_checked(
    names: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Each new pair answers its real call (the check before any load), then carries a short load."""
    if any("oauth" in name for name in names):
        from benchmarks.servers.oauth_issued import prepare

        for variable, value in prepare(str(tmp_path)).items():  # in this test's environment only
            monkeypatch.setenv(variable, value)
    report = run.main(
        ["--duration", "1", "--warmup", "0", "--rounds", "1", "--concurrency", "1", "--load", "python",
         "--only", ",".join(names), "--json", str(tmp_path / "b.json")]
    )  # fmt: skip
    served = {(entry["server"], entry["errors"]) for entry in report["results"]}
    assert {name for name, _ in served} == set(names)
    assert all(errors == 0 for _, errors in served)
    assert all(entry["rps"] > 0 for entry in report["results"])
    # Each flask_mcp scenario against its floor first.
    compared = {(entry["scenario"], entry["peer"]) for entry in report["ratios"]}
    assert {(name, floor) for name, floor in zip(names[::2], names[1::2], strict=True)} <= compared


def test_a_peer_serving_only_the_handshake_era_is_skipped_with_the_reason(monkeypatch, tmp_path: Path) -> None:
    """The floor answers the sum without ``resultType``: as a modern peer it fails the check and is not run."""
    spec = ServerSpec("handshake-only", "gunicorn", "benchmarks.servers.floor_app:app", era="modern")
    monkeypatch.setattr(run, "SPECS", [*run.SPECS, spec])
    report = run.main(["--only", "handshake-only", "--json", str(tmp_path / "bench.json")])
    assert report["results"] == [] and "serves only the handshake era" in report["skipped"]["handshake-only"]


@pytest.mark.parametrize("era", ["handshake", "modern"])
def test_python_load_generator_against_a_live_app(live_server, mcp, make_app, era) -> None:
    @mcp.tool
    def add(a: int, b: int) -> int:
        return a + b

    with live_server(make_app(mcp, MCP_STATELESS=True)) as server:
        port = int(server.url.rsplit(":", 1)[1])
        measurement = load.run_python(port, "", concurrency=2, duration=0.5, era=era)
    assert measurement.rps > 0 and measurement.errors == 0


def test_stream_load_test_holds_the_cap() -> None:
    """The streams load test runs: past MCP_MAX_STREAMS the server refuses streams and still answers tools/call."""
    from benchmarks import streams

    workers = "gthread,gevent" if importlib.util.find_spec("gevent") is not None else "gthread"
    report = streams.main(["--streams", "40", "--calls", "20", "--window", "0.5", "--workers", workers])
    by_worker = {result["worker"]: result for result in report["results"]}
    gthread = by_worker["gthread"]
    assert (gthread["streams_open"], gthread["streams_refused_503"]) == (32, 8)
    if "gevent" in by_worker:
        assert (by_worker["gevent"]["streams_open"], by_worker["gevent"]["streams_refused_503"]) == (40, 0)
    for result in report["results"]:
        assert result["open_p99_ms"] >= result["open_p50_ms"] > 0  # tools/call answered while streams were open


def test_the_task_cost_benchmark_runs_both_paths(tmp_path: Path) -> None:
    """The task benchmark creates, runs and reads tasks, and reports both costs (no timing asserted)."""
    from benchmarks import tasks

    report = tasks.main(["--calls", "20", "--rounds", "1", "--poll", "0.001", "--json", str(tmp_path / "tasks.json")])
    assert report["plain_call_cpu_us"] > 0 and report["task_cpu_us"] > 0 and report["plain_calls_paced"] is True
    assert report["polls_per_task"] >= 1
    assert json.loads((tmp_path / "tasks.json").read_text()) == report


def test_the_telemetry_benchmark_produces_numbers() -> None:
    from benchmarks import telemetry

    report = telemetry.measure(calls=5, rounds=1)
    assert set(report["us_per_call"]) == {"off", "api", "sdk"}
    assert all(value > 0 for value in report["us_per_call"].values())
    assert report["extra_us_over_off"]["off"] == 0


def test_other_servers_are_compared_with_the_floor_on_the_same_server() -> None:
    names = ["flask_mcp-modern@granian", "floor-modern@granian", "floor-modern", "fastmcp-modern@granian"]
    results = [{"server": name, "concurrency": 1, "rps": 100.0, "p99_ms": 1.0} for name in names]
    assert [(r["scenario"], r["peer"]) for r in run.ratios(results)] == [
        ("flask_mcp-modern@granian", "floor-modern@granian"),
        ("flask_mcp-modern@granian", "fastmcp-modern@granian"),
        ("flask_mcp-modern@granian", "floor-modern"),
        ("floor-modern@granian", "floor-modern"),
    ]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "flask_mcp-modern@granian",
            ["--interface", "wsgi", "--factory", "benchmarks.servers.flask_mcp_app:create_app"],
        ),
        ("fastmcp-modern@granian", ["--interface", "asgi", "benchmarks.servers.fastmcp_app:stateless_app"]),
        ("floor@gevent", ["-k", "gevent", "benchmarks.servers.floor_app:app"]),
    ],
)
def test_each_server_has_its_command_line(name: str, expected: list[str]) -> None:
    from benchmarks.servers_under_test import command_line

    (spec,) = run.select(name)
    command, _ = command_line(spec, 8000)
    assert all(part in command for part in expected)


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server is not installed")
def test_a_call_in_a_redis_session_is_one_round_trip_to_the_store_at_most() -> None:
    from benchmarks.servers_under_test import Redis

    redis = Redis()
    try:
        assert run.store_commands_per_call(redis.url, calls=50, tracked=False) == {"mget": 1.0}
        # Kept in the process: read again only once its second is up (fifty calls take far less).
        assert sum(run.store_commands_per_call(redis.url, calls=50).values()) <= 0.1
    finally:
        redis.stop()


def test_the_scale_benchmark_measures_every_variant(tmp_path: Path) -> None:
    from benchmarks import scale

    report = scale.main(["--batch", "2", "--rounds", "1", "--json", str(tmp_path / "scale.json")])
    assert set(report["us_per_call"]) == {"plain", "1000 tools", "100 resources", "1000 sessions", "unused signals"}
    assert all(value > 0 for eras in report["us_per_call"].values() for value in eras.values())
    assert report["ratio_to_plain"]["plain"] == {"handshake": 1.0, "modern": 1.0}


@pytest.mark.skipif(
    (os.cpu_count() or 1) < 2 or shutil.which("taskset") is None, reason="needs two CPUs and taskset (util-linux)"
)
def test_pinned_servers_run_on_the_first_cpu_and_the_load_on_the_others(tmp_path: Path) -> None:
    from benchmarks.servers_under_test import SPECS, RunningServer

    cpus = run.placement(pin=True)
    count = os.cpu_count() or 2
    assert cpus == {"servers": "0", "load": "1" if count == 2 else f"1-{count - 1}"}
    floor = next(spec for spec in SPECS if spec.name == "floor")
    server = RunningServer(floor, cpus=cpus["servers"])
    try:
        assert os.sched_getaffinity(server.process.pid) == {0}
    finally:
        server.stop()
    report = run.main(
        ["--duration", "1", "--warmup", "0", "--rounds", "2", "--concurrency", "1",
         "--only", "flask_mcp-stateful,floor", "--pin", "--json", str(tmp_path / "bench.json")]
    )  # fmt: skip
    assert report["cpus"] == cpus
    (ratio,) = report["ratios"]
    assert len(ratio["rps_ratio_rounds"]) == 2 and all(value > 0 for value in ratio["rps_ratio_rounds"])


def test_each_audited_server_writes_a_table_of_its_own_removed_when_it_stops() -> None:
    """What a row costs must not depend on what an earlier run, or the other audited server, left in the table."""
    from benchmarks.servers_under_test import SPECS, RunningServer

    audited = [spec for spec in SPECS if spec.name in ("flask_mcp-audit", "flask_mcp-modern-audit")]
    servers = [RunningServer(spec) for spec in audited]
    try:
        tables = [Path(server.scratch.name) / "audit.sqlite3" for server in servers]
        assert len(set(tables)) == 2 and all(table.is_file() for table in tables)  # made by each app as it started
    finally:
        for server in servers:
            server.stop()
    assert not any(table.parent.exists() for table in tables)


def test_without_pin_the_scheduler_places_everything() -> None:
    assert run.placement(pin=False) is None


def test_each_scenario_is_measured_beside_its_floor() -> None:
    from benchmarks.servers_under_test import SPECS

    class Started:
        def __init__(self, spec: ServerSpec) -> None:
            self.spec = spec

    order = [server.spec.name for server in run.paired([Started(spec) for spec in reversed(SPECS)])]  # type: ignore[misc]
    for suffix in ("", "@gevent", "@granian"):
        stateful, floor, redis = (
            order.index(name + suffix) for name in ("flask_mcp-stateful", "floor", "flask_mcp-redis")
        )
        assert stateful + 1 == floor == redis - 1
        assert order.index("floor-modern" + suffix) == order.index("flask_mcp-modern" + suffix) + 1
    from benchmarks.side_by_side import OWN_FLOORS

    for scenario, own in OWN_FLOORS.items():  # signed in and streamed, in both eras
        assert order.index(own) == order.index(scenario) + 1


def test_each_served_scenario_has_a_floor_of_its_era_doing_the_same_work() -> None:
    """Its floor is sent the very same requests: the same era and the same variant (signed in, streamed)."""
    from benchmarks import side_by_side
    from benchmarks.servers_under_test import SPECS

    specs = {spec.name: spec for spec in SPECS}
    for name in side_by_side.SCENARIOS:
        ours, floor = specs[name], specs[side_by_side.floor_of(name)]
        assert (floor.era, floor.variant) == (ours.era, ours.variant)
        assert floor.name in run.COMPARED[name]
    for name in ("flask_mcp-jwt", "flask_mcp-static", "flask_mcp-oauth", "flask_mcp-progress"):
        handshake, modern = specs[name], specs[f"{name}-modern"]
        assert (modern.era, modern.variant, modern.target) == ("modern", handshake.variant, handshake.target)
        assert not modern.stateful and not specs[side_by_side.floor_of(modern.name)].ignored_session


def test_the_served_count_pairs_each_scenario_with_its_floor_on_the_same_server() -> None:
    from benchmarks import instructions_served
    from benchmarks.servers_under_test import SPECS

    names = {spec.name for spec in SPECS}
    assert set(instructions_served.PAIRS) | set(instructions_served.PAIRS.values()) <= names
    for scenario, floor in instructions_served.PAIRS.items():
        assert scenario.partition("@")[2] == floor.partition("@")[2]
    with pytest.raises(SystemExit, match="unknown scenario"):
        instructions_served.main(["--only", "nonsense"])


def test_side_by_side_pairs_each_scenario_with_the_floor_of_its_era_on_its_server() -> None:
    from benchmarks import side_by_side
    from benchmarks.servers_under_test import SPECS

    class Started:
        def __init__(self, spec: ServerSpec) -> None:
            self.spec = spec

    found = {(ours.spec.name, floor.spec.name) for ours, floor in side_by_side.pairs([Started(s) for s in SPECS])}  # type: ignore[misc]
    assert found == {
        (f"{scenario}{server}", f"{floor}{server}")
        for server in ("", "@gevent", "@granian")
        for scenario, floor in (
            ("flask_mcp-stateful", "floor"),
            ("flask_mcp-redis", "floor"),
            ("flask_mcp-modern", "floor-modern"),
        )
    } | {
        ("flask_mcp-jwt", "floor-jwt"),
        ("flask_mcp-static", "floor-static"),
        ("flask_mcp-oauth", "floor-oauth"),
        ("flask_mcp-progress", "floor-stream"),
        ("flask_mcp-jwt-modern", "floor-jwt-modern"),
        ("flask_mcp-static-modern", "floor-static-modern"),
        ("flask_mcp-oauth-modern", "floor-oauth-modern"),
        ("flask_mcp-progress-modern", "floor-stream-modern"),
        # The audit trail on, beside the same call with it off.
        ("flask_mcp-audit", "flask_mcp-stateful"),
        ("flask_mcp-modern-audit", "flask_mcp-modern"),
        ("flask_mcp-jwt-audit", "flask_mcp-jwt"),
        ("flask_mcp-jwt-modern-audit", "flask_mcp-jwt-modern"),
    }
    # Without its floor running, a scenario is not measured side by side.
    alone = [Started(s) for s in SPECS if s.name in ("flask_mcp-modern", "floor")]
    assert side_by_side.pairs(alone) == []  # type: ignore[arg-type]


def test_side_by_side_rounds_load_a_scenario_and_its_floor_at_once(tmp_path: Path) -> None:
    report = run.main(
        ["--duration", "1", "--warmup", "0", "--rounds", "1", "--concurrency", "1",
         "--only", "flask_mcp-stateful,floor", "--side-by-side", "2", "--json", str(tmp_path / "bench.json")]
    )  # fmt: skip
    assert report["cpus"] is not None  # placed as --pin places them
    (entry,) = report["side_by_side"]
    assert (entry["scenario"], entry["floor"], entry["concurrency"]) == ("flask_mcp-stateful", "floor", 1)
    assert len(entry["rps_ratio_rounds"]) == 2 and all(value > 0 for value in entry["rps_ratio_rounds"])
    assert entry["rps_ratio_min"] <= entry["rps_ratio_median"] <= entry["rps_ratio_max"]
    assert json.loads((tmp_path / "bench.json").read_text())["side_by_side_rounds"] == 2


def test_in_process_side_by_side_counts_the_calls_of_each_scenario_in_the_same_seconds(tmp_path: Path) -> None:
    from benchmarks import in_process

    report = in_process.main(
        ["--only", "floor,flask_mcp", "--seconds", "0.2", "--rounds", "2", "--evict", "4096",
         "--json", str(tmp_path / "in_process.json")]
    )  # fmt: skip
    assert [len(report["calls_per_second"][name]) for name in ("floor", "flask_mcp")] == [2, 2]
    assert all(rate > 0 for rates in report["calls_per_second"].values() for rate in rates)
    ratio = report["ratio_to_floor"]["flask_mcp"]
    assert ratio["floor"] == "floor" and len(ratio["rounds"]) == 2 and ratio["median"] > 0
    with pytest.raises(SystemExit, match="unknown scenario"):
        in_process.main(["--only", "flask_mcp-redis"])


def test_in_process_runs_another_checkouts_scenarios_in_the_same_rounds(tmp_path: Path) -> None:
    from benchmarks import in_process

    checkout = Path(in_process.__file__).resolve().parents[1]
    report = in_process.main(
        ["--only", "floor,flask_mcp", "--seconds", "0.2", "--rounds", "2", "--against", str(checkout),
         "--json", str(tmp_path / "in_process.json")]
    )  # fmt: skip
    against = in_process.AGAINST.format(name="flask_mcp")
    assert set(report["calls_per_second"]) == {"floor", "flask_mcp", against}
    assert report["against"] == str(checkout)
    assert report["ratio_to_floor"][against]["floor"] == "floor" and report["ratio_to_floor"][against]["median"] > 0
    with pytest.raises(SystemExit, match="not a checkout"):
        in_process.main(["--only", "floor,flask_mcp", "--against", str(tmp_path)])


def test_the_oauth_storage_measurement_ends_with_the_live_rows() -> None:
    from benchmarks import oauth_storage

    report = oauth_storage.main(["--requests", "40"])
    assert report["statuses"] == {"201": 10, "200": 20, "401": 4, "400": 6}
    assert report["rows_after_flood"]["mcp_oauth_access_token"] == 20
    left = {table: rows for table, rows in report["rows_after_expiry_and_sweeps"].items() if rows}
    # The operator's client, the REST docs page's and the signing key.
    assert left == {"mcp_oauth_client": 2, "mcp_oauth_signing_key": 1}


def test_the_audit_benchmark_produces_numbers_and_writes_every_row() -> None:
    from benchmarks import audit

    report = audit.measure(calls=5, rounds=1)
    for era in ("handshake", "modern"):
        assert set(report["us_per_call"][era]) == {"floor", "off", "on"}
        assert all(value > 0 for value in report["us_per_call"][era].values())
        assert report["rows"][era] == {"written": 5 + 1, "lost": 0}  # the warm-up call, and each measured one


def test_the_budget_fails_a_scenario_over_its_allowance_and_forgives_what_its_floor_moved() -> None:
    from benchmarks.budget import TOLERANCE, verdicts

    budget = {
        "floors": {"floor": 1000, "floor-stream": 1000},
        "scenarios": {
            "flask_mcp": {"instructions_per_call": 1000},
            "flask_mcp-progress": {"instructions_per_call": 2000, "tolerance": 0.15},
        },
    }
    within = {"floor": 1000, "floor-stream": 1000, "flask_mcp": 1000 * (1 + TOLERANCE), "flask_mcp-progress": 2300}
    assert [verdict[3] for verdict in verdicts(budget, within)] == [True, True]
    over = {**within, "flask_mcp": 1000 * (1 + TOLERANCE) + 1, "flask_mcp-progress": 2301}
    assert [verdict[3] for verdict in verdicts(budget, over)] == [False, False]
    # A newer Flask makes the floor 10 % dearer: the scenario may cost 10 % more too, no more.
    moved = {"floor": 1100, "floor-stream": 1000, "flask_mcp": 1100 * (1 + TOLERANCE), "flask_mcp-progress": 2000}
    assert [verdict[3] for verdict in verdicts(budget, moved)] == [True, True]


def test_every_budgeted_scenario_is_counted_beside_its_floor() -> None:
    import json

    from benchmarks.budget import BUDGET
    from benchmarks.instructions import FLOOR_OF, SCENARIOS, caller

    budget = json.loads(BUDGET.read_text())
    assert set(budget["floors"]) == {FLOOR_OF[name] for name in budget["scenarios"]}
    for name in [*budget["scenarios"], *budget["floors"]]:
        assert name in SCENARIOS
        caller(name)()  # answers as it should (checked once when the caller is made)


def test_every_counted_scenario_has_a_floor_of_its_era_doing_the_same_work() -> None:
    from benchmarks.instructions import FLOOR_OF, SCENARIOS, VARIANT_OF

    assert set(FLOOR_OF) == set(SCENARIOS)
    for name, floor in FLOOR_OF.items():
        assert FLOOR_OF[floor] == floor and SCENARIOS[floor][0].startswith("floor")
        assert SCENARIOS[floor][1] == SCENARIOS[name][1]
        assert VARIANT_OF.get(floor, "plain") == VARIANT_OF.get(name, "plain")
    for name in ("flask_mcp-jwt", "flask_mcp-static", "flask_mcp-oauth", "flask_mcp-progress"):
        assert SCENARIOS[f"{name}-modern"] == (SCENARIOS[name][0], "modern")
        assert VARIANT_OF[f"{name}-modern"] == VARIANT_OF[name]


@pytest.mark.parametrize(
    "name", ["flask_mcp-jwt-modern", "flask_mcp-static-modern", "flask_mcp-oauth-modern", "flask_mcp-progress-modern"]
)
def test_the_modern_signed_in_and_streamed_calls_are_answered_by_flask_mcp_and_its_floor(
    name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The modern call of each pair (no session, the envelope) is answered as that era answers, by both sides.

    The handshake era's floor answers it without ``resultType``: it is no floor of this era.
    """
    from benchmarks.instructions import FLOOR_OF, SCENARIOS, answered, build, caller, request_of
    from benchmarks.scale import post

    if name.startswith("flask_mcp-oauth"):
        from benchmarks.servers.oauth_issued import prepare

        for variable, value in prepare(str(tmp_path)).items():  # in this test's environment only
            monkeypatch.setenv(variable, value)
    for scenario in (name, FLOOR_OF[name]):
        message, headers = request_of(scenario, build(SCENARIOS[scenario][0]))
        assert "Mcp-Session-Id" not in headers and headers["Mcp-Name"] == message["params"]["name"]
        assert message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
        caller(scenario)()  # answers as it should (checked once when the caller is made)
    handshake_floor = FLOOR_OF[name.removesuffix("-modern")]
    status, _, data = post(build(SCENARIOS[handshake_floor][0]), message, headers)
    assert status.startswith("200") and not answered(FLOOR_OF[name], status, data)
