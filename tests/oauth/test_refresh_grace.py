"""Refresh grace: a client presenting a refresh token twice (two tabs, a retry) is not signed out."""

from __future__ import annotations

import threading
import typing as t
from pathlib import Path

from flask import Flask
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import BOTH_DATABASES
from tests.oauth.conftest import Flow, build_app, call_tool

pytestmark = BOTH_DATABASES


def hold_clock(app: Flask, offset: float = 0.0) -> t.Callable[[float], None]:
    """Hold the store's clock; returns a function moving it on by some seconds."""
    store = app.extensions["flask_mcp.oauth"].store
    now = [store.clock() + offset]
    store.clock = lambda: now[0]

    def advance(seconds: float) -> None:
        now[0] += seconds

    return advance


def works(app: Flask, tokens: dict[str, t.Any]) -> bool:
    return bool(call_tool(app, tokens["access_token"], "whoami").status_code == 200)


def test_presented_again_within_the_window_it_gets_a_pair_of_the_same_family(app: Flask) -> None:
    flow = Flow(app)
    first = flow.tokens("alice")
    advance = hold_clock(app)
    rotated = flow.refresh(first["refresh_token"]).get_json()
    advance(9)  # MCP_OAUTH_REFRESH_GRACE is 10 by default
    again = flow.refresh(first["refresh_token"])
    assert again.status_code == 200, again.get_data(as_text=True)
    retried = again.get_json()
    assert retried["refresh_token"] not in (rotated["refresh_token"], first["refresh_token"])
    assert works(app, rotated) and works(app, retried)
    # Both branches go on rotating, and the family is still revoked together.
    assert flow.refresh(rotated["refresh_token"]).status_code == 200
    newest = flow.refresh(retried["refresh_token"]).get_json()
    revoke = {"token": newest["refresh_token"], "client_id": flow.client_id}
    assert flow.client.post("/oauth/revoke", data=revoke).status_code == 200
    assert not works(app, newest) and not works(app, rotated)


def test_after_the_window_a_replay_revokes_the_family(app: Flask) -> None:
    flow = Flow(app)
    first = flow.tokens("alice")
    advance = hold_clock(app)
    rotated = flow.refresh(first["refresh_token"]).get_json()
    advance(11)
    replay = flow.refresh(first["refresh_token"])
    assert replay.status_code == 400 and replay.get_json()["error"] == "invalid_grant"
    assert not works(app, rotated) and flow.refresh(rotated["refresh_token"]).status_code == 400


def test_another_client_presenting_it_is_refused_within_the_window(app: Flask) -> None:
    flow, stranger = Flow(app), Flow(app)
    first = flow.tokens("alice")
    hold_clock(app)
    rotated = flow.refresh(first["refresh_token"]).get_json()
    answer = flow.refresh(first["refresh_token"], client_id=stranger.client_id)
    assert answer.status_code == 400 and "access_token" not in answer.get_json()
    assert works(app, rotated)


def test_two_presentations_at_the_same_moment_both_get_a_pair(app: Flask) -> None:
    flow = Flow(app)
    first = flow.tokens("alice")
    barrier = threading.Barrier(2)
    answers: list[t.Any] = []

    def present() -> None:
        client = app.test_client()
        barrier.wait(timeout=10)
        data = {"grant_type": "refresh_token", "refresh_token": first["refresh_token"], "client_id": flow.client_id}
        answers.append(client.post("/oauth/token", data=data))

    threads = [threading.Thread(target=present) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(answer.status_code for answer in answers) == [200, 200], [a.get_data(as_text=True) for a in answers]
    pairs = [answer.get_json() for answer in answers]
    assert pairs[0]["refresh_token"] != pairs[1]["refresh_token"]
    assert all(works(app, pair) for pair in pairs)


def test_a_grace_of_zero_revokes_at_once(tmp_path: Path, database_uri: str) -> None:
    app = build_app(tmp_path, MCP_OAUTH_DATABASE_URI=database_uri, MCP_OAUTH_REFRESH_GRACE=0)
    flow = Flow(app)
    first = flow.tokens("alice")
    hold_clock(app)
    rotated = flow.refresh(first["refresh_token"]).get_json()
    assert flow.refresh(first["refresh_token"]).status_code == 400
    assert not works(app, rotated)


def test_a_revoked_family_gets_nothing_within_the_window(app: Flask) -> None:
    flow = Flow(app)
    first = flow.tokens("alice")
    hold_clock(app)
    rotated = flow.refresh(first["refresh_token"]).get_json()
    revoke = {"token": rotated["refresh_token"], "client_id": flow.client_id}
    assert flow.client.post("/oauth/revoke", data=revoke).status_code == 200
    assert flow.refresh(first["refresh_token"]).status_code == 400


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(grace=st.integers(0, 30), delay=st.floats(0, 40, allow_nan=False))
def test_the_window_is_exactly_the_grace(tmp_path: Path, database_uri: str, grace: int, delay: float) -> None:
    """Presented again after *delay* seconds: a new pair while within the grace, else the family is revoked."""
    app = build_app(tmp_path / f"{grace}-{delay}", MCP_OAUTH_DATABASE_URI=database_uri, MCP_OAUTH_REFRESH_GRACE=grace)
    flow = Flow(app)
    first = flow.tokens("alice")
    advance = hold_clock(app)
    rotated = flow.refresh(first["refresh_token"]).get_json()
    advance(delay)
    again = flow.refresh(first["refresh_token"])
    assert again.status_code == (200 if delay < grace else 400)
    assert works(app, rotated) == (delay < grace)
