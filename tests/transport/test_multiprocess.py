"""A server of several processes with sessions in one process's memory is named on its first request."""

from __future__ import annotations

import json
import typing as t
import urllib.request
import warnings

import pytest
from flask import Flask

from flask_mcp import MCP, ProcessLocalSessionsWarning
from flask_mcp.protocol.envelope import CLIENT_CAPABILITIES, CLIENT_INFO, PROTOCOL_VERSION
from flask_mcp.protocol.versions import MODERN_PROTOCOL_VERSIONS

from .test_streaming import gunicorn

MODERN = MODERN_PROTOCOL_VERSIONS[0]
DISCOVER = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "server/discover",
    "params": {
        "_meta": {PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: {}, CLIENT_INFO: {"name": "t", "version": "1"}}
    },
}

HEADERS = {
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": MODERN,
    "Mcp-Method": "server/discover",
}


def _first_request(app: Flask, multiprocess: bool) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        response = app.test_client().post(
            "/mcp",
            json=DISCOVER,
            headers=HEADERS,
            environ_overrides={"wsgi.multiprocess": multiprocess},
        )
    assert response.status_code == 200, response.get_data(as_text=True)
    return [warning for warning in caught if issubclass(warning.category, ProcessLocalSessionsWarning)]


def test_simplecache_under_several_processes_warns_once(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    app = make_app(mcp)
    (warning,) = _first_request(app, multiprocess=True)
    message = str(warning.message)
    assert "several processes" in message and "MCP_CACHE_TYPE = 'RedisCache'" in message and "MCP_STATELESS" in message
    assert "requestState key every process shares: set SECRET_KEY" in message
    assert _first_request(app, multiprocess=True) == []  # once a process


def test_with_a_secret_only_the_sessions_are_named(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    (warning,) = _first_request(make_app(mcp, SECRET_KEY="shared"), multiprocess=True)
    assert "Session not found" in str(warning.message) and "requestState" not in str(warning.message)


def test_without_sessions_the_rounds_key_is_named(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    (warning,) = _first_request(make_app(mcp, MCP_STATELESS=True), multiprocess=True)
    assert "signs input_required rounds' requestState with a key of its own" in str(warning.message)


@pytest.mark.parametrize(
    ("multiprocess", "config"),
    [(False, {}), (True, {"MCP_STATELESS": True, "SECRET_KEY": "shared"})],
    ids=["one process", "no sessions, a shared secret"],
)
def test_no_warning_where_nothing_can_be_lost(
    mcp: MCP, make_app: t.Callable[..., Flask], multiprocess: bool, config: dict[str, t.Any]
) -> None:
    assert _first_request(make_app(mcp, **config), multiprocess=multiprocess) == []


def test_a_shared_store_under_several_processes_does_not_warn(
    mcp: MCP, make_app: t.Callable[..., Flask], redis_url: str
) -> None:
    app = make_app(mcp, MCP_CACHE_TYPE="RedisCache", MCP_CACHE_REDIS_URL=redis_url)
    assert _first_request(app, multiprocess=True) == []


def test_gunicorn_with_two_workers_prints_the_warning() -> None:
    """gunicorn says ``wsgi.multiprocess`` when it runs more than one worker."""
    with gunicorn(workers=2) as server:
        request = urllib.request.Request(
            server.url,
            data=json.dumps(DISCOVER).encode(),
            headers={"Content-Type": "application/json", **HEADERS},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.status == 200
        assert "Use a shared store" in server.wait_for("ProcessLocalSessionsWarning")
