"""Generated signing keys with several processes on one database: one first key, new keys trusted at once."""

from __future__ import annotations

import secrets
import typing as t
from pathlib import Path

from flask import Flask
from joserfc import jwt as jose_jwt
from joserfc.jwk import RSAKey
from sqlalchemy import event, func, select

from flask_mcp.oauth.keys import UNKNOWN_KID_INTERVAL
from flask_mcp.oauth.models import SigningKey
from tests.conftest import BOTH_DATABASES
from tests.oauth.conftest import Flow, build_app, call_tool

pytestmark = BOTH_DATABASES


def _two_apps(tmp_path: Path, database_uri: str) -> tuple[Flask, Flask]:
    """Two app instances (two worker processes, as far as the keys go) on one database."""
    return (
        build_app(tmp_path, MCP_OAUTH_DATABASE_URI=database_uri),
        build_app(tmp_path, MCP_OAUTH_DATABASE_URI=database_uri),
    )


_TABLE = "FROM mcp_oauth_signing_key"


def _store(app: Flask) -> t.Any:
    return app.extensions["flask_mcp.oauth"].store


def _keys(app: Flask) -> t.Any:
    return app.extensions["flask_mcp.oauth"].keys


def _stored_keys(app: Flask) -> int:
    with app.extensions["flask_mcp.oauth"].store.session() as session:
        return int(session.scalar(select(func.count()).select_from(SigningKey)) or 0)


def test_two_processes_that_both_find_no_key_sign_with_one(tmp_path: Path, database_uri: str) -> None:
    first, second = _two_apps(tmp_path, database_uri)
    # The race: the second process reads an empty table (its first reading of the keys is made to
    # find none), as if it read just before the first process stored its key.
    raced: list[str] = []

    @event.listens_for(_store(second).engine, "before_cursor_execute", retval=True)
    def read_empty(conn: t.Any, cursor: t.Any, statement: str, parameters: t.Any, *args: t.Any) -> t.Any:
        if not raced and statement.lstrip().upper().startswith("SELECT") and _TABLE in statement:
            raced.append(statement)
            statement = statement.replace(_TABLE, _TABLE + " WHERE 1 = 0", 1)
        return statement, parameters

    with first.app_context():
        first_kid = _keys(first).public_jwks()["keys"][0]["kid"]
    with second.app_context():
        assert [jwk["kid"] for jwk in _keys(second).public_jwks()["keys"]] == [first_kid]
    assert raced and _stored_keys(first) == 1
    # A token the second signs verifies in the first, and the other way round.
    from_second = Flow(second).tokens("alice")["access_token"]
    assert call_tool(first, from_second, "whoami").status_code == 200
    from_first = Flow(first).tokens("bob")["access_token"]
    assert call_tool(second, from_first, "whoami").status_code == 200


def test_a_key_rotated_in_another_process_is_trusted_at_once(tmp_path: Path, database_uri: str) -> None:
    first, second = _two_apps(tmp_path, database_uri)
    assert call_tool(first, Flow(first).tokens("alice")["access_token"], "whoami").status_code == 200
    with second.app_context():
        _keys(second).rotate()
    token = Flow(second).tokens("alice")["access_token"]
    # The first process read its keys a moment ago; the unknown kid makes it read them again.
    answer = call_tool(first, token, "whoami")
    assert answer.status_code == 200, answer.get_data(as_text=True)
    assert answer.get_json()["result"]["content"][0]["text"] == "alice"


def test_rotations_in_two_processes_agree_on_the_newest_key(tmp_path: Path, database_uri: str) -> None:
    first, second = _two_apps(tmp_path, database_uri)
    with first.app_context(), second.app_context():
        _keys(first).public_jwks()
        older, newer = _keys(first).rotate(), _keys(second).rotate()
        assert older != newer and _stored_keys(first) == 3
        assert _keys(first).knows(newer)
        # The newest key signs, the same one in both; the retired ones still verify.
        assert _keys(first).signing_key().keys[0].kid == _keys(second).signing_key().keys[0].kid == newer
        assert _keys(second).knows(older)


def test_made_up_kids_cannot_hammer_the_database(tmp_path: Path, database_uri: str) -> None:
    app = build_app(tmp_path, MCP_OAUTH_DATABASE_URI=database_uri)
    state = app.extensions["flask_mcp.oauth"]
    with app.app_context():
        state.keys.public_jwks()
    reads: list[str] = []

    @event.listens_for(state.store.engine, "before_cursor_execute")
    def count(conn: t.Any, cursor: t.Any, statement: str, *args: t.Any) -> None:
        if "FROM mcp_oauth_signing_key" in statement:
            reads.append(statement)

    try:
        now = state.store.clock()
        state.store.clock = lambda: now
        forger = RSAKey.generate_key(2048, private=True)
        for _ in range(30):
            header = {"alg": "RS256", "typ": "at+jwt", "kid": secrets.token_hex(8)}
            token = jose_jwt.encode(header, {"sub": "alice"}, forger)
            assert call_tool(app, token, "whoami").status_code == 401
        assert len(reads) == 1  # one reading for the whole flood
        state.store.clock = lambda: now + UNKNOWN_KID_INTERVAL + 1
        assert call_tool(app, token, "whoami").status_code == 401
        assert len(reads) == 2  # and one more once the interval has passed
    finally:
        event.remove(state.store.engine, "before_cursor_execute", count)
