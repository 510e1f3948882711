"""Every endpoint of the authorization server answers malformed input with a 4xx, never a 5xx."""

from __future__ import annotations

import typing as t
from pathlib import Path
from urllib.parse import urlencode

import pytest
from flask import Flask
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.oauth.conftest import build_app

#: The endpoints that answer in JSON, and the pages.
JSON_ENDPOINTS = ["/oauth/token", "/oauth/register", "/oauth/revoke"]
PAGES = [
    ("GET", "/oauth/authorize"),
    ("POST", "/oauth/authorize"),
    ("GET", "/oauth/connections"),
    ("POST", "/oauth/connections/revoke"),
    ("GET", "/oauth/jwks.json"),
    ("GET", "/.well-known/oauth-authorization-server"),
]
FIELDS = [
    "grant_type",
    "client_id",
    "client_secret",
    "code",
    "code_verifier",
    "redirect_uri",
    "refresh_token",
    "resource",
    "scope",
    "token",
    "token_type_hint",
    "response_type",
    "state",
    "code_challenge",
    "code_challenge_method",
    "csrf_token",
    "decision",
]
VALUES = st.one_of(
    st.sampled_from(
        ["authorization_code", "refresh_token", "client_credentials", "S256", "code", "http://localhost/mcp"]
    ),
    st.text(st.characters(exclude_categories=("Cs",)), max_size=40),
    # Any character a form can carry (bad encodings come as raw bodies below).
    st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=("Cs",)), max_size=10),
)
#: Form fields, repeated at will.
FORMS = st.lists(
    st.tuples(
        st.one_of(st.sampled_from(FIELDS), st.text(st.characters(exclude_categories=("Cs",)), max_size=8)), VALUES
    ),
    max_size=8,
)


def deep(depth: int, opener: str = "[") -> bytes:
    closer = {"[": "]", "{": "}"}[opener]
    inner = '{"a":' * depth + "1" + "}" * depth if opener == "{" else opener * depth + closer * depth
    return inner.encode()


BODIES = st.one_of(
    st.binary(max_size=200),
    st.one_of(st.sampled_from([3_000, 100_000]), st.integers(1, 120_000)).map(deep),
    st.integers(1, 5_000).map(lambda depth: deep(depth, "{")),
    st.sampled_from([b"\xff\xfe\x00", b'{"redirect_uris": ["\\ud800"]}', b"%ZZ=%", b"a=1&a=2&a=3", b"null", b"[]"]),
)
CONTENT_TYPES = st.sampled_from(
    [
        "application/json",
        "application/x-www-form-urlencoded",
        "application/x-www-form-urlencoded; charset=latin-1",
        "text/plain",
        "multipart/form-data; boundary=x",
        "application/json; charset=utf-16",
    ]
)


@pytest.fixture
def fuzzed(tmp_path: Path) -> Flask:
    # No rate limit: every example reaches the endpoint's own parsing.
    return build_app(
        tmp_path,
        MCP_OAUTH_RATE_LIMIT_FAILURES=None,
        MCP_OAUTH_RATE_LIMIT_CLIENT=None,
        MCP_OAUTH_REGISTRATION_RATE_LIMIT=None,
    )


def test_a_registration_nested_a_hundred_thousand_deep_is_a_400(fuzzed: Flask) -> None:
    for path in JSON_ENDPOINTS:
        answer = fuzzed.test_client().post(path, data=deep(100_000), content_type="application/json")
        assert 400 <= answer.status_code < 500, (path, answer.status_code)
        assert answer.is_json and answer.get_json()["error"], path


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from(JSON_ENDPOINTS), body=BODIES, content_type=CONTENT_TYPES, query=FORMS)
def test_json_endpoints_answer_any_body_with_a_json_4xx(
    fuzzed: Flask, path: str, body: bytes, content_type: str, query: list[tuple[str, str]]
) -> None:
    answer = fuzzed.test_client().post(path + "?" + urlencode(query), data=body, content_type=content_type)
    assert answer.status_code < 500, answer.get_data(as_text=True)[:300]
    assert answer.is_json and "Traceback" not in answer.get_data(as_text=True)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    path=st.sampled_from(JSON_ENDPOINTS),
    form=FORMS,
    auth=st.one_of(st.none(), st.text(st.characters(exclude_categories=("Cs",)), max_size=30)),
)
def test_json_endpoints_answer_any_form_with_a_json_4xx(
    fuzzed: Flask, path: str, form: list[tuple[str, str]], auth: str | None
) -> None:
    headers = {"Authorization": auth} if auth is not None and auth.isprintable() and auth.isascii() else {}
    answer = fuzzed.test_client().post(
        path, data=urlencode(form), headers=headers, content_type="application/x-www-form-urlencoded"
    )
    assert answer.status_code < 500, answer.get_data(as_text=True)[:300]
    assert answer.is_json


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(page=st.sampled_from(PAGES), query=FORMS, form=FORMS, signed_in=st.booleans())
def test_pages_answer_any_request_without_a_5xx(
    fuzzed: Flask, page: tuple[str, str], query: list[tuple[str, str]], form: list[tuple[str, str]], signed_in: bool
) -> None:
    browser = fuzzed.test_client()
    if signed_in:
        browser.post("/login", data={"username": "alice"})
    method, path = page
    answer = browser.open(
        path + "?" + urlencode(query),
        method=method,
        data=urlencode(form),
        content_type="application/x-www-form-urlencoded",
    )
    assert answer.status_code < 500, answer.get_data(as_text=True)[:300]
    assert "Traceback" not in answer.get_data(as_text=True)


def test_the_examples_are_not_trivially_all_refused(fuzzed: Flask) -> None:
    """The strategies reach the endpoints' own checks: a well-formed registration among them succeeds."""
    body = b'{"redirect_uris": ["http://127.0.0.1:9/cb"], "token_endpoint_auth_method": "none"}'
    answer = fuzzed.test_client().post("/oauth/register", data=body, content_type="application/json")
    assert answer.status_code == 201
    t.cast(t.Any, answer).close()
