"""Signed-in calls answered from memory: verified once per process, revocation seen within REVOCATION_BOUND.

Two apps on one database are two processes of one deployment: each keeps its
own verified tokens, and a revocation made by one reaches the other through the
database within the bound, at once in the process that made it. Clocks are the
store's and the backend's, moved by the tests: nothing waits.
"""

from __future__ import annotations

import typing as t
from pathlib import Path

import pytest
from flask import Flask

from flask_mcp.globals import state_of
from flask_mcp.oauth.tokens import REVOCATION_BOUND
from tests.oauth.conftest import Flow, build_app, call_tool


def backend_of(app: Flask) -> t.Any:
    gate = state_of(app).auth
    assert gate is not None
    return gate.backend


def store_of(app: Flask) -> t.Any:
    return app.extensions["flask_mcp.oauth"].store


@pytest.fixture
def two_processes(tmp_path: Path, database_uri: str) -> tuple[Flask, Flask]:
    first = build_app(tmp_path, MCP_OAUTH_DATABASE_URI=database_uri)
    second = build_app(tmp_path, MCP_OAUTH_DATABASE_URI=database_uri)
    return first, second


def test_a_signed_in_call_reads_the_database_once_a_bound_not_once_a_call(
    two_processes: tuple[Flask, Flask], monkeypatch: pytest.MonkeyPatch
) -> None:
    first, _ = two_processes
    token = Flow(first).tokens("alice")["access_token"]
    store = store_of(first)
    reads: list[object] = []
    live = store.live_access_token
    monkeypatch.setattr(store, "live_access_token", lambda jti: reads.append(jti) or live(jti))
    for _ in range(5):
        assert call_tool(first, token, "whoami").get_json()["result"]["content"][0]["text"] == "alice"
    assert len(reads) == 1
    now = store.clock()
    store.clock = lambda: now + REVOCATION_BOUND
    assert call_tool(first, token, "whoami").status_code == 200
    assert len(reads) == 2  # the bound passed: asked again


def test_a_revocation_reaches_another_process_within_the_bound(two_processes: tuple[Flask, Flask]) -> None:
    first, second = two_processes
    flow = Flow(first)
    token = flow.tokens("alice")["access_token"]
    assert call_tool(second, token, "whoami").status_code == 200  # verified and kept by the second process
    revoked = flow.client.post("/oauth/revoke", data={"token": token, "client_id": flow.client_id})
    assert revoked.status_code == 200
    # The process that revoked it refuses it at once ...
    assert call_tool(first, token, "whoami").status_code == 401
    # ... the other within the bound: until then it may still answer from memory, then never again.
    store = store_of(second)
    now = store.clock()
    store.clock = lambda: now + REVOCATION_BOUND
    assert call_tool(second, token, "whoami").status_code == 401
    store.clock = lambda: now  # and not answered from memory again once refused
    assert call_tool(second, token, "whoami").status_code == 401


def test_a_token_verified_once_is_still_refused_after_its_exp(tmp_path: Path) -> None:
    app = build_app(tmp_path, MCP_OAUTH_ACCESS_TOKEN_TTL=60)
    token = Flow(app).tokens("alice")["access_token"]
    assert call_tool(app, token, "whoami").status_code == 200
    backend = backend_of(app)
    assert len(backend.verified) == 1 and len(backend.unrevoked) == 1
    now = backend.clock()
    backend.clock = lambda: now + 61
    assert call_tool(app, token, "whoami").status_code == 401
    assert len(backend.verified) == 0 and len(backend.unrevoked) == 0


def test_a_removed_client_s_tokens_are_refused_at_once_in_its_process(tmp_path: Path) -> None:
    app = build_app(tmp_path)
    flow = Flow(app)
    token = flow.tokens("alice")["access_token"]
    assert call_tool(app, token, "whoami").status_code == 200
    assert store_of(app).remove_client(flow.client_id)
    assert call_tool(app, token, "whoami").status_code == 401
