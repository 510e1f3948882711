"""Hostile input to every endpoint of the authorization server: a 4xx, never a 5xx."""

from __future__ import annotations

import pytest
from flask import Flask
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.oauth.conftest import Flow

ENDPOINTS = ["/oauth/authorize", "/oauth/token", "/oauth/register", "/oauth/revoke", "/oauth/connections/revoke"]
NAMES = st.sampled_from(
    [
        "response_type",
        "client_id",
        "redirect_uri",
        "scope",
        "state",
        "code_challenge",
        "code_challenge_method",
        "resource",
        "grant_type",
        "code",
        "code_verifier",
        "refresh_token",
        "token",
        "token_type_hint",
        "client_secret",
        "csrf_token",
        "decision",
        "next",
    ]
)
VALUES = st.one_of(
    st.text(max_size=80), st.sampled_from(["code", "S256", "plain", "authorization_code", "refresh_token"])
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    endpoint=st.sampled_from(ENDPOINTS),
    method=st.sampled_from(["GET", "POST", "PUT"]),
    params=st.lists(st.tuples(NAMES, VALUES), max_size=8),
    signed_in=st.booleans(),
)
def test_no_input_makes_a_5xx(
    app: Flask, endpoint: str, method: str, params: list[tuple[str, str]], signed_in: bool
) -> None:
    client = app.test_client()
    if signed_in:
        client.post("/login", data={"username": "alice"})
    from werkzeug.datastructures import MultiDict

    fields = MultiDict(params)
    answer = client.open(
        endpoint,
        method=method,
        query_string=fields if method == "GET" else None,
        data=fields if method != "GET" else None,
    )
    assert answer.status_code < 500, answer.get_data(as_text=True)


@pytest.mark.parametrize(
    "body", [b"{}", b'{"redirect_uris": [1]}', b'{"grant_types": "x"}', b'{"client_name": {"a": 1}}']
)
def test_odd_registrations_are_a_4xx(app: Flask, body: bytes) -> None:
    answer = app.test_client().post("/oauth/register", data=body, content_type="application/json")
    assert 400 <= answer.status_code < 500


def test_a_valid_flow_with_hostile_extras_stays_a_4xx(app: Flask) -> None:
    flow = Flow(app)
    flow.login("alice")
    for extra in ({"resource": ["a", "b"]}, {"code_challenge": "short"}, {"response_type": "token"}, {"scope": "\x00"}):
        answer = flow.authorize(**extra)
        assert answer.status_code < 500
