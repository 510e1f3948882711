"""Rate limits of the token, registration and revocation endpoints: 429 with Retry-After, before any work."""

from __future__ import annotations

import typing as t
from pathlib import Path

import pytest
from flask import Flask, request
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flask_mcp.oauth.limits import client_id_of
from tests.oauth.conftest import RESOURCE, Flow, build_app
from tests.oauth.test_machine_clients import add_client, credentials


def limited_app(tmp_path: Path, **config: t.Any) -> Flask:
    """The test app, its limiter's clock held in the middle of a window (no test straddles two)."""
    app = build_app(tmp_path, **config)
    app.extensions["flask_mcp.oauth"].limits.limiter.clock = lambda: 7_200_030.0
    return app


def bad_secret(app: Flask, client_id: str, address: str = "10.0.0.7") -> t.Any:
    data = {"grant_type": "client_credentials", "resource": RESOURCE}
    return app.test_client().post(
        "/oauth/token", data=data, auth=(client_id, "wrong"), environ_base={"REMOTE_ADDR": address}
    )


def test_a_few_hundred_bad_secrets_from_one_address_meet_429_early(tmp_path: Path) -> None:
    app = limited_app(tmp_path)
    made = add_client(app, "reader", "--scope", "notes:read")
    answers = [bad_secret(app, made["client_id"]).status_code for _ in range(300)]
    assert answers[:30] == [401] * 30, answers[:31]
    assert set(answers[30:]) == {429}
    refused = bad_secret(app, made["client_id"])
    assert refused.get_json()["error"] == "slow_down" and 1 <= int(refused.headers["Retry-After"]) <= 60
    # The right secret from that address waits too; the client itself, elsewhere, is not held up.
    right = app.test_client().post(
        "/oauth/token",
        data={"grant_type": "client_credentials", "resource": RESOURCE},
        auth=(made["client_id"], made["client_secret"]),
        environ_base={"REMOTE_ADDR": "10.0.0.7"},
    )
    assert right.status_code == 429
    assert credentials(app, made).status_code == 200


def test_invalid_grants_and_revocations_count_as_failures(tmp_path: Path) -> None:
    app = limited_app(tmp_path, MCP_OAUTH_RATE_LIMIT_FAILURES="5/minute")
    flow = Flow(app)
    for _ in range(3):
        assert flow.exchange("not-a-code").status_code == 400
    for _ in range(2):
        assert flow.client.post("/oauth/revoke", data={"token": "x"}).status_code in (400, 401)
    assert flow.exchange("not-a-code").status_code == 429
    assert flow.client.post("/oauth/revoke", data={"token": "x", "client_id": flow.client_id}).status_code == 429


def test_a_clients_successes_have_their_own_looser_budget(tmp_path: Path) -> None:
    app = limited_app(tmp_path, MCP_OAUTH_RATE_LIMIT_CLIENT="4/minute", MCP_OAUTH_RATE_LIMIT_FAILURES="2/minute")
    made = add_client(app, "reader", "--scope", "notes:read")
    other = add_client(app, "other", "--scope", "notes:read")
    assert [credentials(app, made).status_code for _ in range(5)] == [200, 200, 200, 200, 429]
    assert credentials(app, other).status_code == 200  # another client's budget is its own


def test_nobody_spends_a_clients_budget_by_naming_it(tmp_path: Path) -> None:
    app = limited_app(tmp_path, MCP_OAUTH_RATE_LIMIT_CLIENT="3/minute")
    made = add_client(app, "reader", "--scope", "notes:read")
    for index in range(50):
        assert bad_secret(app, made["client_id"], address=f"10.1.0.{index}").status_code == 401
    assert credentials(app, made).status_code == 200


def test_limits_can_be_turned_off(tmp_path: Path) -> None:
    app = limited_app(tmp_path, MCP_OAUTH_RATE_LIMIT_FAILURES=None, MCP_OAUTH_RATE_LIMIT_CLIENT=None)
    made = add_client(app, "reader", "--scope", "notes:read")
    assert {bad_secret(app, made["client_id"]).status_code for _ in range(60)} == {401}


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(limit=st.integers(1, 12), extra=st.integers(1, 5))
def test_exactly_the_failure_budget_reaches_the_server(tmp_path: Path, limit: int, extra: int) -> None:
    """However the budget is set, that many refused requests are answered, and every one after is a 429."""
    app = limited_app(tmp_path / f"{limit}-{extra}", MCP_OAUTH_RATE_LIMIT_FAILURES=f"{limit}/hour")
    answers = [bad_secret(app, "nobody").status_code for _ in range(limit + extra)]
    assert answers == [401] * limit + [429] * extra


def test_revocations_naming_a_public_client_spend_nothing_of_its_budget(tmp_path: Path) -> None:
    """Revocation answers 200 to any public client's id with any token: it proves nothing, so it counts nothing."""
    app = limited_app(tmp_path, MCP_OAUTH_RATE_LIMIT_CLIENT="3/minute")
    flow = Flow(app)
    stranger = app.test_client()
    for index in range(20):
        answer = stranger.post("/oauth/revoke", data={"token": f"junk-{index}", "client_id": flow.client_id})
        assert answer.status_code == 200
    tokens = flow.tokens("alice")
    assert [flow.refresh(tokens["refresh_token"]).status_code] == [200]


@pytest.mark.parametrize("header", [" ", "Basic", "Basic %%%", "\t"])
def test_a_blank_or_broken_basic_header_names_no_client_and_fails_nothing(header: str) -> None:
    app = Flask(__name__)
    with app.test_request_context(
        "/oauth/token", method="POST", data={"client_id": "c1"}, headers={"Authorization": header}
    ):
        assert client_id_of(request) == "c1"
