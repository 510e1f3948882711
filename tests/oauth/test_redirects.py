"""Redirect URI matching: exact, except the port of a loopback IP literal."""

from __future__ import annotations

import pytest

from flask_mcp.oauth import redirect_matches, redirect_problem

REGISTERED = "http://127.0.0.1:8765/callback"


@pytest.mark.parametrize(
    "requested",
    [REGISTERED, "http://127.0.0.1:1/callback", "http://127.0.0.1/callback", "http://127.0.0.1:65000/callback"],
)
def test_a_loopback_redirect_may_change_port(requested: str) -> None:
    assert redirect_matches(REGISTERED, requested)


def test_ipv6_loopback_may_change_port() -> None:
    assert redirect_matches("http://[::1]:3000/cb", "http://[::1]:4000/cb")


@pytest.mark.parametrize(
    "requested",
    [
        "http://127.0.0.1:8765/callback/x",
        "http://127.0.0.1:8765/callbac",
        "http://127.0.0.1:8765/callback?x=1",
        "http://127.0.0.1:8765/callback#f",
        "https://127.0.0.1:8765/callback",
        "http://localhost:8765/callback",
        "http://127.0.0.2:8765/callback",
        "http://user@127.0.0.1:8765/callback",
        "http://127.0.0.1:8765@evil.example/callback",
        "http://127.0.0.1:99999/callback",
        "",
    ],
)
def test_anything_else_about_a_loopback_redirect_must_match(requested: str) -> None:
    assert not redirect_matches(REGISTERED, requested)


@pytest.mark.parametrize(
    ("registered", "requested"),
    [
        ("https://app.example/cb", "https://app.example:444/cb"),
        ("https://app.example/cb", "https://app.example/cb/"),
        ("https://app.example/cb", "https://app.example/cb/../cb"),
        ("http://localhost:3000/cb", "http://localhost:3001/cb"),
        ("https://app.example/cb", "https://APP.example/cb"),
    ],
)
def test_other_redirects_match_exactly(registered: str, requested: str) -> None:
    assert redirect_matches(registered, registered) and not redirect_matches(registered, requested)


@pytest.mark.parametrize(
    "uri",
    [
        "https://app.example/cb",
        "http://127.0.0.1:3000/cb",
        "http://[::1]/cb",
        "http://localhost:3000/cb",
        "com.example.app:/cb",
    ],
)
def test_registrable_redirects(uri: str) -> None:
    assert redirect_problem(uri) is None


@pytest.mark.parametrize(
    "uri",
    [
        "http://app.example/cb",
        "https://app.example/cb#frag",
        "javascript:alert(1)",
        "data:text/html,x",
        "myapp:/cb",
        "/relative",
        "https://user@app.example/cb",
        "https://app.example/a b",
        "",
        42,
    ],
)
def test_refused_redirects(uri: object) -> None:
    assert redirect_problem(uri) is not None
