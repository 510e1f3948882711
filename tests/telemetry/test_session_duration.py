"""``mcp.server.session.duration`` of handshake sessions however they end: deleted, idled out, past their age."""

from __future__ import annotations

import threading
import time
import typing as t
import uuid

import cachelib.simple
import pytest
from flask import Flask

from flask_mcp import MCP
from flask_mcp.stores import sessions as sessions_module
from tests.conftest import START, Clock, worker_app
from tests.redis_topologies import cluster
from tests.telemetry.conftest import Telemetry

TTL = 600
WINDOW = 60


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """One fake clock for the session store and for the in-memory caches' expiry."""
    clock = Clock(START)
    monkeypatch.setattr(sessions_module, "time", clock)
    monkeypatch.setattr(cachelib.simple, "time", clock.time)
    return clock


@pytest.fixture
def app(calc: MCP, make_app: t.Callable[..., Flask], telemetry: Telemetry, clock: Clock) -> Flask:
    return telemetry.instrument(make_app(calc, MCP_SESSION_TTL=TTL, MCP_SESSION_MAX_AGE=TTL + TTL // 2))


def durations(telemetry: Telemetry) -> dict[str | None, t.Any]:
    """The points of mcp.server.session.duration by error.type."""
    points = telemetry.points("mcp.server.session.duration")
    by_error = {point.attributes.get("error.type"): point for point in points}
    assert len(by_error) == len(points)
    return by_error


def test_a_session_that_idles_out_is_measured_by_a_later_message(
    app: Flask, make_client: t.Any, telemetry: Telemetry, clock: Clock
) -> None:
    client = make_client(app)
    client.initialize()
    clock.advance(TTL + 3 * WINDOW)
    assert durations(telemetry) == {}  # nobody saw it end
    make_client(app, era="modern").request("tools/list")  # any message, of anybody
    point = durations(telemetry)["timeout"]
    assert (point.count, point.sum) == (1, TTL)
    assert point.attributes["mcp.protocol.version"] == client.protocol_version
    assert point.attributes["network.transport"] == "tcp"
    assert "mcp.session.id" not in point.attributes and "client.address" not in point.attributes
    clock.advance(5 * WINDOW)
    make_client(app, era="modern").request("tools/list")
    assert durations(telemetry)["timeout"].count == 1


def test_a_session_past_its_maximum_age_is_measured_as_such(
    app: Flask, make_client: t.Any, telemetry: Telemetry, clock: Clock
) -> None:
    client = make_client(app)
    client.initialize()
    clock.advance(TTL - 100)
    client.request("ping")  # in use: from now on its record lives until its maximum age only
    clock.advance(TTL + 3 * WINDOW)
    make_client(app, era="modern").request("tools/list")
    point = durations(telemetry)["max_age"]
    assert (point.count, point.sum) == (1, TTL + TTL // 2)


def test_a_request_that_finds_its_session_past_its_maximum_age_measures_it_once(
    app: Flask, make_client: t.Any, telemetry: Telemetry, clock: Clock
) -> None:
    client = make_client(app)
    client.initialize()
    store = app.extensions["mcp"].sessions
    store.clock = lambda: clock.now + TTL + TTL // 2 + 1  # the store's record has not expired yet
    assert client.post({"jsonrpc": "2.0", "id": 9, "method": "ping"}).status_code == 404
    assert durations(telemetry)["max_age"].count == 1
    store.clock = sessions_module._now
    clock.advance(2 * TTL + 3 * WINDOW)
    make_client(app, era="modern").request("tools/list")
    assert durations(telemetry)["max_age"].count == 1


def test_a_deleted_session_is_measured_once_and_never_again_by_a_sweep(
    app: Flask, make_client: t.Any, telemetry: Telemetry, clock: Clock
) -> None:
    client = make_client(app)
    client.initialize()
    clock.advance(42)
    assert client.http.delete("/mcp", headers=client.headers()).status_code == 204
    clock.advance(TTL + 3 * WINDOW)
    make_client(app, era="modern").request("tools/list")
    point = durations(telemetry)[None]
    assert (point.count, point.sum) == (1, 42)
    assert set(durations(telemetry)) == {None}


def test_without_a_meter_nothing_is_kept_for_sessions_ends(
    calc: MCP, make_app: t.Callable[..., Flask], make_client: t.Any, telemetry: Telemetry, clock: Clock
) -> None:
    from flask_mcp.telemetry import instrument

    app = make_app(calc, MCP_SESSION_TTL=TTL)
    instrument(app, tracer_provider=telemetry.tracer_provider)  # spans, and the global meter: a stand-in
    client = make_client(app)
    client.initialize()
    clock.advance(TTL + 3 * WINDOW)
    make_client(app, era="modern").request("tools/list")
    backend = app.extensions["mcp"].ephemeral_cache.cache
    assert telemetry.mcp_spans()
    assert not [key for key in backend._cache if "sess-" in key]


def test_with_telemetry_off_sessions_are_not_watched(calc: MCP, make_app: t.Callable[..., Flask]) -> None:
    app = make_app(calc, MCP_OTEL_ENABLED=False)
    assert app.extensions["mcp"].server.tracer is None
    assert app.extensions["mcp"].sessions.ends is None


# -- several workers sharing one Redis --------------------------------------------------------------


def all_at_once(workers: list[Flask], make_client: t.Any, threads: int = 8) -> list[BaseException]:
    """A message to each worker in turn from *threads* threads released together; what they raised."""
    barrier = threading.Barrier(threads)
    errors: list[BaseException] = []

    def message(worker: Flask) -> None:
        try:
            barrier.wait(timeout=30)
            make_client(worker, era="modern").request("tools/list")
        except BaseException as exc:  # reported by the test's thread
            errors.append(exc)

    running = [threading.Thread(target=message, args=(workers[index % 2],)) for index in range(threads)]
    for thread in running:
        thread.start()
    for thread in running:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in running)
    return errors


def measured_once_across(workers: list[Flask], make_client: t.Any) -> None:
    """Sessions that idle out on a store *workers* share are each measured once, whoever sweeps."""
    telemetries = [Telemetry(), Telemetry()]
    offset = [0.0]
    try:
        for worker, telemetry in zip(workers, telemetries, strict=True):
            telemetry.instrument(worker)
            # The stores' clock, moved on by the test; Redis expires the records in real time.
            worker.extensions["mcp"].sessions.clock = lambda: time.time() + offset[0]
        clients = [make_client(workers[index % 2]) for index in range(4)]
        for client in clients:
            client.initialize()
        store = workers[0].extensions["mcp"].sessions
        deadline = time.monotonic() + 30
        with workers[0].app_context():
            while store.expiries([client.session_id for client in clients]) != [None] * 4:
                assert time.monotonic() < deadline, "Redis never expired the sessions"
                time.sleep(0.05)

        def measured() -> int:
            counts = [durations(telemetry).get("timeout") for telemetry in telemetries]
            return sum(point.count for point in counts if point is not None)

        for windows in (3 * WINDOW, 10 * WINDOW):
            offset[0] += windows
            # Both workers handle messages at once, from several threads: each may sweep, one does.
            assert all_at_once(workers, make_client) == []
            assert measured() == 4
    finally:
        for telemetry in telemetries:
            telemetry.shutdown()


def test_workers_sharing_a_redis_measure_each_session_once(redis_url: str, prefix: str, make_client: t.Any) -> None:
    measured_once_across([worker_app(redis_url, prefix, MCP_SESSION_TTL=1) for _ in range(2)], make_client)


def test_workers_sharing_a_redis_cluster_measure_each_session_once(make_client: t.Any) -> None:
    # Each window's keys share a hash tag; the sessions a sweep reads are read slot by slot.
    with cluster() as servers:
        config = {**servers.config(f"mcp_cluster:{uuid.uuid4().hex}:"), "MCP_SESSION_TTL": 1}
        workers = []
        for _ in range(2):
            worker = Flask("cluster-worker")
            worker.config.update(TESTING=True, **config)
            MCP(name="clustered").init_app(worker)
            workers.append(worker)
        measured_once_across(workers, make_client)
