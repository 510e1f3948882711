"""The app's own authorization server as the signed-in scenarios' issuer: its tables, a token it issued, its key.

``flask_mcp-oauth`` is the benchmark app with an :class:`~flask_mcp.oauth.OAuthServer`
(its tables in a SQLite file): every call carries an access token that server
issued to an operator-made client (``client_credentials``), which
:class:`~flask_mcp.oauth.tokens.OAuthTokenBackend` verifies. Its floor,
``floor-oauth``, is a bare view verifying the same JWT with PyJWT and the
server's public key (signature, ``exp``, ``aud``, ``iss``), as any resource
server would. ``flask_mcp-oauth-modern`` sends the same app 2026-07-28
requests, against ``floor-oauth-modern``: the same view answering as that
era does.

:func:`prepare` makes the tables and the token once, in the harness's own
process; each counted process reads them from the environment
(:data:`ENVIRONMENT`), so that the floor's never builds the app, and the
app's signs with the key in the tables.
"""

from __future__ import annotations

import json
import os
import tempfile
import typing as t
from pathlib import Path

if t.TYPE_CHECKING:
    from flask import Flask

#: The resource the tokens are issued for (their audience).
RESOURCE = "http://127.0.0.1:8000/mcp"
#: The environment :func:`prepare` fills: the tables' database, the token, the public key, the issuer.
ENVIRONMENT = ("BENCH_OAUTH_DATABASE", "BENCH_OAUTH_TOKEN", "BENCH_OAUTH_PEM", "BENCH_OAUTH_ISSUER")


def prepare(directory: str | None = None) -> dict[str, str]:
    """Make the authorization server's tables, a client and an access token; the environment that names them."""
    from cryptography.hazmat.primitives import serialization
    from jwt.algorithms import RSAAlgorithm

    from benchmarks.servers.flask_mcp_app import create_app
    from flask_mcp.oauth.tokens import oauth_state

    database = f"sqlite:///{Path(directory or tempfile.mkdtemp(prefix='bench-oauth-')) / 'oauth.sqlite'}"
    app = create_app("oauth", config={"MCP_OAUTH_DATABASE_URI": database})
    made = app.test_cli_runner().invoke(args=["mcp", "oauth", "add-client", "bench", "--scope", "notes"])
    client = dict(line.split(": ", 1) for line in made.output.strip().splitlines())
    answer = app.test_client().post(
        "/oauth/token",
        data={"grant_type": "client_credentials", "resource": RESOURCE, "scope": "notes"},
        auth=(client["client_id"], client["client_secret"]),
    )
    if answer.status_code != 200:
        raise SystemExit(f"the authorization server issued no token: {answer.status_code} {answer.get_data(True)}")
    with app.app_context():
        state = oauth_state()
        (key,) = state.keys.public_jwks()["keys"]
        issuer = state.settings.issuer
    public = RSAAlgorithm.from_jwk(json.dumps(key))
    pem = public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    return dict(zip(ENVIRONMENT, (database, answer.get_json()["access_token"], pem, issuer), strict=True))


def prepared() -> dict[str, str]:
    """What :func:`prepare` made, from this process's environment (made here when it is not there)."""
    if not all(name in os.environ for name in ENVIRONMENT):
        os.environ.update(prepare())
    return {name: os.environ[name] for name in ENVIRONMENT}


def served() -> Flask:
    """``flask_mcp-oauth``'s app on the prepared tables, as a server runs it (``oauth_issued:served()``)."""
    from benchmarks.servers.flask_mcp_app import create_app

    return create_app("oauth", config={"MCP_OAUTH_DATABASE_URI": prepared()["BENCH_OAUTH_DATABASE"]})


def app() -> Flask:
    """:func:`served`'s app, its revocation check held still: what its calls are counted on.

    The check is a query at most once a second a token: under callgrind a
    second holds a few dozen calls, not the thousands it does when served,
    which would count the query as a hundred times its share.
    """
    from flask_mcp.oauth.tokens import oauth_state

    made = served()
    with made.app_context():
        store = oauth_state().store
        now = store.clock()
        store.clock = lambda: now
    return made


def floor(modern: bool = False) -> Flask:
    """``floor-oauth``: the bare view verifying the prepared token with the server's public key.

    :param modern: answer as the 2026-07-28 era does (``floor-oauth-modern``).
    """
    from benchmarks.servers.floor_app import jwt_verifying_app

    found = prepared()
    return jwt_verifying_app(found["BENCH_OAUTH_PEM"], found["BENCH_OAUTH_ISSUER"], RESOURCE, modern=modern)


def modern_floor() -> Flask:
    """``floor-oauth-modern``: :func:`floor` answering as the 2026-07-28 era does (``oauth_issued:modern_floor()``)."""
    return floor(modern=True)


def token() -> str:
    """The prepared access token."""
    return prepared()["BENCH_OAUTH_TOKEN"]
