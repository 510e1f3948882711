"""The sweep: expired rows go by themselves, in bounded batches, and the tables come back to the live rows."""

from __future__ import annotations

import typing as t
from pathlib import Path

import pytest
from cachelib import SimpleCache
from flask import Flask
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flask_mcp.oauth.pruning import PruneSchedule, prune
from flask_mcp.oauth.store import OAuthStore
from tests.conftest import BOTH_DATABASES
from tests.oauth.conftest import Flow, build_app
from tests.oauth.test_machine_clients import add_client, credentials

DAY = 86400


def store_of(app: Flask) -> OAuthStore:
    return t.cast(OAuthStore, app.extensions["flask_mcp.oauth"].store)


def move_clock(store: OAuthStore, seconds: float) -> None:
    now = store.clock()
    store.clock = lambda: now + seconds


def live(counts: dict[str, int]) -> dict[str, int]:
    """The rows beyond what every app has: its signing key and the REST docs page's client."""
    counts = {**counts, "mcp_oauth_client": counts["mcp_oauth_client"] - 1}
    return {table: count for table, count in counts.items() if count and table != "mcp_oauth_signing_key"}


@BOTH_DATABASES
def test_after_a_flood_and_its_expiry_the_tables_hold_the_live_rows(tmp_path: Path, database_uri: str) -> None:
    app = build_app(
        tmp_path,
        MCP_OAUTH_DATABASE_URI=database_uri,
        MCP_OAUTH_RATE_LIMIT_CLIENT=None,
        MCP_OAUTH_REGISTRATION_RATE_LIMIT=None,
        MCP_OAUTH_PRUNE_BATCH=50,
    )
    store = store_of(app)
    machine = add_client(app, "robot", "--scope", "notes:read")
    for _ in range(120):
        assert credentials(app, machine).status_code == 200
    flow = Flow(app)
    tokens = flow.tokens("alice")
    for _ in range(20):
        tokens = flow.refresh(tokens["refresh_token"]).get_json()
    for _ in range(30):  # registrations that never obtain a token
        assert app.test_client().post("/oauth/register", json={"redirect_uris": [flow.redirect_uri]}).status_code == 201
    grown = store.row_counts()
    assert grown["mcp_oauth_access_token"] == 141 and grown["mcp_oauth_refresh_token"] == 21
    move_clock(store, 31 * DAY)  # every token, code and unused registration has expired
    result = app.test_cli_runner().invoke(args=["mcp", "oauth", "prune"])
    assert result.exit_code == 0, result.output
    assert "access tokens: 141" in result.output and "clients: 30" in result.output
    # What is left is what is still live: the two clients that were used, and alice's consent.
    assert live(store.row_counts()) == {"mcp_oauth_client": 2, "mcp_oauth_consent": 1}


@BOTH_DATABASES
def test_the_sweep_runs_by_itself_after_an_endpoint_answers(tmp_path: Path, database_uri: str) -> None:
    app = build_app(tmp_path, MCP_OAUTH_DATABASE_URI=database_uri, MCP_OAUTH_UNUSED_CLIENT_TTL=60)
    store = store_of(app)
    store.add_client("idle", None, {"redirect_uris": ["http://127.0.0.1/cb"]})
    store.save_access_token("old", None, "someone-else", None, expires_at=store.clock() - 1)
    move_clock(store, 120)
    # Buffered: the response is read and closed, as a WSGI server does once it has sent it.
    answer = app.test_client().post("/oauth/token", data={"grant_type": "client_credentials"}, buffered=True)
    assert answer.status_code == 401  # nothing to do with the sweep, which runs once the answer is sent
    assert live(store.row_counts()) == {}
    # Not due again until the interval has passed: a new expired row stays for now.
    store.save_access_token("later", None, "x", None, expires_at=store.clock() - 1)
    app.test_client().post("/oauth/token", data={"grant_type": "client_credentials"}, buffered=True)
    assert store.row_counts()["mcp_oauth_access_token"] == 1


@BOTH_DATABASES
def test_consents_of_removed_clients_go_and_document_clients_consents_stay(tmp_path: Path, database_uri: str) -> None:
    app = build_app(tmp_path, MCP_OAUTH_DATABASE_URI=database_uri)
    store = store_of(app)
    store.add_client("kept", None, {})
    store.remember_consent("alice", "kept", ["notes:read"])
    store.remember_consent("alice", "gone", ["notes:read"])
    store.remember_consent("alice", "https://app.example/client.json", ["notes:read"])
    report = prune(store, unused_client_ttl=None, batch=10)
    assert report.consents == 1
    assert {consent.client_id for consent, _ in store.connections("alice")} == {
        "kept",
        "https://app.example/client.json",
    }


def test_an_operators_client_is_never_swept_as_unused(tmp_path: Path) -> None:
    app = build_app(tmp_path)
    store = store_of(app)
    made = add_client(app, "robot", "--scope", "notes:read")
    move_clock(store, 365 * DAY)
    assert prune(store, unused_client_ttl=60, batch=10).clients == 0
    assert store.client(made["client_id"]) is not None


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.integers(0, 30), batch=st.integers(1, 12))
def test_one_sweep_deletes_at_most_its_batch_per_table(tmp_path: Path, rows: int, batch: int) -> None:
    """The cost of the sweep that runs after an answer is bounded, and what is left goes on the next."""
    app = build_app(tmp_path / f"{rows}-{batch}")
    store = store_of(app)
    for index in range(rows):
        store.save_access_token(f"jti-{index}", None, "c", None, expires_at=store.clock() - 1)
        store.add_client(f"c-{index}", None, {})
    move_clock(store, 2 * DAY)
    left = rows
    while left:
        report = prune(store, unused_client_ttl=60, batch=batch)
        assert report.access_tokens == report.clients == min(left, batch)
        assert report.full(batch) == (left >= batch)
        left -= report.access_tokens
    assert live(store.row_counts()) == {}


def test_a_full_batch_makes_the_next_sweep_due_at_once(tmp_path: Path) -> None:
    store = store_of(build_app(tmp_path))
    for index in range(5):
        store.save_access_token(f"jti-{index}", None, "c", None, expires_at=store.clock() - 1)
    shared = SimpleCache()
    first = PruneSchedule(store, interval=300, batch=3, unused_client_ttl=None, cache=shared)
    second = PruneSchedule(store, interval=300, batch=3, unused_client_ttl=None, cache=shared)
    assert first.due() and not second.due()  # one worker of those sharing the cache sweeps
    report = first.sweep()
    assert report is not None and report.access_tokens == 3
    assert first.due()  # more was left: due again without waiting the interval
    report = first.sweep()
    assert report is not None and report.access_tokens == 2
    assert not first.due() and not second.due()


def test_each_process_asks_the_cache_at_most_once_per_interval(tmp_path: Path) -> None:
    """The election is a round trip to the cache: not one per answer."""
    store = store_of(build_app(tmp_path))
    asked: list[str] = []

    class Counting(SimpleCache):  # type: ignore[misc]
        def add(self, key: str, value: t.Any, timeout: int | None = None) -> bool:
            asked.append(key)
            return bool(super().add(key, value, timeout))

    shared = Counting()
    workers = [PruneSchedule(store, interval=300, batch=10, unused_client_ttl=None, cache=shared) for _ in range(3)]
    answers = [worker.due() for _ in range(50) for worker in workers]
    assert answers.count(True) == 1 and len(asked) == 3


def test_a_failing_sweep_fails_no_answer(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = store_of(build_app(tmp_path))
    schedule = PruneSchedule(store, interval=300, batch=3, unused_client_ttl=None, cache=None)
    store.engine.dispose()
    store._sessions.configure(bind=None)  # every statement now fails
    assert schedule.due() and schedule.sweep() is None
    assert "the OAuth sweep failed" in caplog.text
