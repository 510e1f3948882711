"""Each authentication backend on its own, against requests built by Flask's test request context."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
import typing as t
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from flask import Flask

from flask_mcp import MCP
from flask_mcp.auth import (
    FlaskLoginBackend,
    HTTPAuthBackend,
    JWTBackend,
    StaticTokenBackend,
    TokenVerifierBackend,
    UserFunctionBackend,
    hash_token,
)
from flask_mcp.policies.principal import Principal
from flask_mcp.policies.tool import ConfigurationError

ISSUER = "https://auth.example.com"
RESOURCE = "https://mcp.example.com/mcp"


@pytest.fixture
def app() -> Flask:
    app = Flask("auth_backends")
    app.config.update(TESTING=True, SECRET_KEY="test", MCP_AUTH_RESOURCE=RESOURCE)
    return app


def authenticate(app: Flask, backend: t.Any, **headers: str) -> Principal | None:
    with app.test_request_context("/mcp", method="POST", headers=headers):
        return t.cast("Principal | None", backend.authenticate(__import__("flask").request))


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


# -- static tokens --------------------------------------------------------------


def test_static_tokens_plain_and_hashed(app: Flask) -> None:
    """Plain tokens and sha256: digests both authenticate, with their subjects and scopes."""
    backend = StaticTokenBackend(
        {"plain-token": "bot", hash_token("hashed-token"): {"subject": "ada", "scopes": "read admin"}}
    )
    assert authenticate(app, backend, **bearer("plain-token")) == Principal("bot")
    ada = authenticate(app, backend, **bearer("hashed-token"))
    assert ada is not None and (ada.subject, ada.scopes) == ("ada", frozenset({"read", "admin"}))
    for wrong in ("plain-toke", "hashed-tokenX", hash_token("hashed-token"), ""):
        assert authenticate(app, backend, **bearer(wrong)) is None
    assert authenticate(app, backend) is None
    assert authenticate(app, backend, Authorization="Basic cGxhaW4tdG9rZW4=") is None


def test_static_tokens_compare_every_digest(app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every stored digest is compared in constant time, whichever one matches."""
    calls: list[tuple[bytes, bytes]] = []
    original = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return original(a, b)

    backend = StaticTokenBackend({"one": "a", "two": "b", "three": "c"})
    monkeypatch.setattr("flask_mcp.auth.static.hmac.compare_digest", spy)
    assert authenticate(app, backend, **bearer("one")) == Principal("a")
    assert len(calls) == 3 and all(len(a) == len(b) == 32 for a, b in calls)


def test_static_api_key_header(app: Flask) -> None:
    """X-API-Key is accepted only when configured."""
    with_key = StaticTokenBackend({"k3y": "svc"}, api_key_header="X-API-Key")
    without = StaticTokenBackend({"k3y": "svc"})
    assert authenticate(app, with_key, **{"X-API-Key": "k3y"}) == Principal("svc")
    assert authenticate(app, without, **{"X-API-Key": "k3y"}) is None
    with app.test_request_context(headers={"X-API-Key": "nope"}):
        from flask import request

        assert with_key.has_credentials(request) and not without.has_credentials(request)


@pytest.mark.parametrize("tokens", [{}, {"sha256:abcd": "x"}, {"sha256:" + "zz" * 32: "x"}, {"t": {"scopes": ["a"]}}])
def test_static_tokens_bad_config(tokens: dict[str, t.Any]) -> None:
    with pytest.raises(ValueError):
        StaticTokenBackend(tokens)


# -- token verifier and user functions ------------------------------------------------


def test_token_verifier_accepts_principal_dict_or_none(app: Flask) -> None:
    seen: list[str] = []

    def verify(token: str) -> t.Any:
        seen.append(token)
        return {
            "p": Principal("p", frozenset({"x"})),
            "d": {"sub": "d", "scope": "a b", "exp": 2_000_000_000},
            "s": {"subject": "s", "scp": ["c"]},
        }.get(token)

    backend = TokenVerifierBackend(verify)
    assert authenticate(app, backend, **bearer("p")) == Principal("p", frozenset({"x"}))
    d = authenticate(app, backend, **bearer("d"))
    assert d is not None and (d.subject, d.scopes, d.expires_at) == ("d", frozenset({"a", "b"}), 2_000_000_000.0)
    s = authenticate(app, backend, **bearer("s"))
    assert s is not None and s.scopes == frozenset({"c"})
    assert authenticate(app, backend, **bearer("unknown")) is None
    assert authenticate(app, backend) is None
    assert seen == ["p", "d", "s", "unknown"]  # never called without a token


def test_user_function_backend(app: Flask) -> None:
    class User:
        def __init__(self, name: str) -> None:
            self.username = name
            self.roles = ["editor"]

    users = {"tok": User("grace")}

    def find(request: t.Any) -> User | None:
        return users.get(request.headers.get("X-Token", ""))

    backend = UserFunctionBackend(find, scopes=lambda user: user.roles)
    grace = authenticate(app, backend, **{"X-Token": "tok"})
    assert grace is not None and grace.subject == "grace" and grace.scopes == {"editor"}
    assert grace.user is users["tok"]
    assert authenticate(app, backend, **{"X-Token": "bad"}) is None


def test_flask_login_backend(app: Flask) -> None:
    import flask_login

    class User(flask_login.UserMixin):
        def __init__(self, user_id: str) -> None:
            self.id = user_id

    manager = flask_login.LoginManager(app)
    manager.user_loader(lambda user_id: None)

    @manager.request_loader
    def load(request: t.Any) -> User | None:
        key = request.headers.get("Authorization", "")
        return User("42") if key == "Bearer letmein" else None

    backend = FlaskLoginBackend(scopes=lambda user: ["read"] if user.id == "42" else [])
    principal = authenticate(app, backend, **bearer("letmein"))
    assert principal is not None and (principal.subject, principal.scopes) == ("42", frozenset({"read"}))
    assert isinstance(principal.user, User)
    assert authenticate(app, backend, **bearer("nope")) is None
    assert authenticate(app, backend) is None


def test_httpauth_backend_token_and_basic(app: Flask) -> None:
    from flask_httpauth import HTTPBasicAuth, HTTPTokenAuth

    token_auth = HTTPTokenAuth(scheme="Bearer")
    token_auth.verify_token(lambda token: {"name": "tina"} if token == "good" else None)
    token_auth.get_user_roles(lambda user: ["admin"])
    backend = HTTPAuthBackend(token_auth, scopes=None)
    with app.test_request_context(headers=bearer("good")):
        from flask import request

        principal = backend.authenticate(request)
        assert principal is not None and principal.scopes == {"admin"}
        assert token_auth.current_user() == {"name": "tina"}
    assert authenticate(app, backend, **bearer("bad")) is None

    basic = HTTPBasicAuth()
    basic.verify_password(lambda username, password: username == "bob" and password == "pw")
    basic_backend = HTTPAuthBackend(basic)
    assert basic_backend.scheme == "Basic"
    ok = authenticate(app, basic_backend, Authorization="Basic Ym9iOnB3")  # bob:pw
    assert ok is not None and ok.subject == "bob"
    assert authenticate(app, basic_backend, Authorization="Basic Ym9iOng=") is None  # bob:x


# -- JWT ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="module")
def ec_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def base64url(data: bytes) -> bytes:
    return base64.urlsafe_b64encode(data).rstrip(b"=")


def pem(key: t.Any) -> str:
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


def claims(**overrides: t.Any) -> dict[str, t.Any]:
    base = {"iss": ISSUER, "aud": RESOURCE, "sub": "user-1", "exp": int(time.time()) + 600, "scope": "read write"}
    base.update(overrides)
    return {k: v for k, v in base.items() if v is not None}


@pytest.mark.parametrize("alg", ["RS256", "ES256"])
def test_jwt_valid(app: Flask, rsa_key: t.Any, ec_key: t.Any, alg: str) -> None:
    key = rsa_key if alg == "RS256" else ec_key
    backend = JWTBackend(issuer=ISSUER, audience=RESOURCE, key=pem(key))
    token = jwt.encode(claims(), key, algorithm=alg)
    principal = authenticate(app, backend, **bearer(token))
    assert principal is not None
    assert (principal.subject, principal.scopes) == ("user-1", frozenset({"read", "write"}))
    assert principal.claims["iss"] == ISSUER and principal.expires_at == principal.claims["exp"]


@pytest.mark.parametrize(
    "overrides",
    [
        {"iss": "https://evil.example.com"},
        {"aud": "https://other.example.com/mcp"},
        {"exp": 1_000_000_000},
        {"sub": None},
        {"exp": None},
    ],
    ids=["wrong-issuer", "wrong-audience", "expired", "no-sub", "no-exp"],
)
def test_jwt_refused_claims(app: Flask, rsa_key: t.Any, overrides: dict[str, t.Any]) -> None:
    backend = JWTBackend(issuer=ISSUER, audience=RESOURCE, key=pem(rsa_key))
    assert authenticate(app, backend, **bearer(jwt.encode(claims(), rsa_key, algorithm="RS256"))) is not None
    assert authenticate(app, backend, **bearer(jwt.encode(claims(**overrides), rsa_key, algorithm="RS256"))) is None


def test_jwt_leeway_and_scp(app: Flask, rsa_key: t.Any) -> None:
    token = jwt.encode(claims(exp=int(time.time()) - 30, scope=None, scp=["a", "b"]), rsa_key, algorithm="RS256")
    assert authenticate(app, JWTBackend(issuer=ISSUER, audience=RESOURCE, key=pem(rsa_key)), **bearer(token)) is None
    principal = authenticate(
        app, JWTBackend(issuer=ISSUER, audience=RESOURCE, key=pem(rsa_key), leeway=120), **bearer(token)
    )
    assert principal is not None and principal.scopes == {"a", "b"}


def test_jwt_refuses_bad_algorithms(app: Flask, rsa_key: t.Any) -> None:
    """alg none, HS256 signed with the public key, and algorithms off the allowlist are refused."""
    backend = JWTBackend(issuer=ISSUER, audience=RESOURCE, key=pem(rsa_key), algorithms=["RS256"])
    unsigned = jwt.encode(claims(), None, algorithm="none")
    assert authenticate(app, backend, **bearer(unsigned)) is None
    # The classic confusion attack: HMAC keyed with the (public) PEM text.
    signing_input = b".".join(
        base64url(json.dumps(part).encode()) for part in ({"alg": "HS256", "typ": "JWT"}, claims())
    )
    signature = hmac.new(pem(rsa_key).encode(), signing_input, hashlib.sha256).digest()
    forged = (signing_input + b"." + base64url(signature)).decode()
    assert authenticate(app, backend, **bearer(forged)) is None
    ps = jwt.encode(claims(), rsa_key, algorithm="PS256")
    assert authenticate(app, backend, **bearer(ps)) is None


@pytest.mark.parametrize(
    "kwargs",
    [{"algorithms": ["none"]}, {"algorithms": ["RS256", "HS256"]}, {}],
    ids=["none", "hs-without-secret", "no-key"],
)
def test_jwt_refuses_unsafe_configuration(rsa_key: t.Any, kwargs: dict[str, t.Any]) -> None:
    if kwargs:
        kwargs["key"] = pem(rsa_key)
    with pytest.raises(ValueError):
        JWTBackend(issuer=ISSUER, **kwargs)


def test_jwt_shared_secret(app: Flask) -> None:
    backend = JWTBackend(issuer=ISSUER, audience=RESOURCE, secret="s" * 32, algorithms=["HS256"])
    assert authenticate(app, backend, **bearer(jwt.encode(claims(), "s" * 32, algorithm="HS256"))) is not None
    assert authenticate(app, backend, **bearer(jwt.encode(claims(), "t" * 32, algorithm="HS256"))) is None


def jwk(key: t.Any, kid: str, alg: str) -> dict[str, t.Any]:
    algorithm = jwt.get_algorithm_by_name(alg)
    document = json.loads(algorithm.to_jwk(key.public_key()))
    document.update(kid=kid, use="sig", alg=alg)
    return t.cast(dict[str, t.Any], document)


@pytest.mark.parametrize("as_file", [False, True], ids=["dict", "file"])
def test_jwt_jwks_kid_lookup(app: Flask, rsa_key: t.Any, ec_key: t.Any, tmp_path: Path, as_file: bool) -> None:
    document = {"keys": [jwk(rsa_key, "r1", "RS256"), jwk(ec_key, "e1", "ES256")]}
    source: t.Any = document
    if as_file:
        source = tmp_path / "jwks.json"
        source.write_text(json.dumps(document))
    backend = JWTBackend(issuer=ISSUER, audience=RESOURCE, jwks=source)
    rs = jwt.encode(claims(), rsa_key, algorithm="RS256", headers={"kid": "r1"})
    es = jwt.encode(claims(sub="u2"), ec_key, algorithm="ES256", headers={"kid": "e1"})
    assert t.cast(Principal, authenticate(app, backend, **bearer(rs))).subject == "user-1"
    assert t.cast(Principal, authenticate(app, backend, **bearer(es))).subject == "u2"
    wrong_kid = jwt.encode(claims(), rsa_key, algorithm="RS256", headers={"kid": "e1"})
    unknown_kid = jwt.encode(claims(), rsa_key, algorithm="RS256", headers={"kid": "zz"})
    no_kid = jwt.encode(claims(), rsa_key, algorithm="RS256")
    for token in (wrong_kid, unknown_kid, no_kid):
        assert authenticate(app, backend, **bearer(token)) is None


def test_jwt_audience_is_the_configured_resource(make_app: t.Callable[..., Flask], rsa_key: t.Any) -> None:
    """Without audience=, aud must be MCP_AUTH_RESOURCE, whatever Host the request names."""
    backend = JWTBackend(issuer=ISSUER, key=pem(rsa_key))
    app = make_app(MCP(name="aud", auth=backend), MCP_AUTH_RESOURCE=RESOURCE, MCP_ALLOWED_HOSTS="*")
    client = app.test_client()
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    headers = {"Accept": "application/json", "Content-Type": "application/json"}
    ours = jwt.encode(claims(aud=RESOURCE), rsa_key, algorithm="RS256")
    for host, audience in [
        ("localhost:9999", "http://localhost:9999/mcp"),  # another server on this machine
        ("other.example", "http://other.example/mcp"),  # any server, named in Host behind a proxy
        ("localhost", "http://localhost/mcp"),
    ]:
        theirs = jwt.encode(claims(aud=audience), rsa_key, algorithm="RS256")
        refused = client.post("/mcp", json=ping, headers={**headers, "Host": host, **bearer(theirs)})
        assert refused.status_code == 401, host
        accepted = client.post("/mcp", json=ping, headers={**headers, "Host": host, **bearer(ours)})
        assert accepted.status_code == 400  # authenticated: now the missing session is the problem


@pytest.mark.parametrize(
    "backend",
    [
        lambda key: JWTBackend(issuer=ISSUER, key=key),
        lambda key: TokenVerifierBackend(lambda token: None, checks_audience=True),
    ],
    ids=["jwt", "introspection"],
)
def test_audience_checking_backends_need_the_resource(
    make_app: t.Callable[..., Flask], rsa_key: t.Any, backend: t.Callable[[t.Any], t.Any]
) -> None:
    """Refused at setup, naming the key to set, rather than trusting the request's Host."""
    with pytest.raises(ConfigurationError, match=r"MCP_AUTH_RESOURCE must be set .*https://mcp\.example\.com/mcp"):
        make_app(MCP(name="aud", auth=backend(pem(rsa_key))))


def test_an_explicit_audience_needs_no_resource(make_app: t.Callable[..., Flask], rsa_key: t.Any) -> None:
    backend = JWTBackend(issuer=ISSUER, audience="api://shop", key=pem(rsa_key))
    app = make_app(MCP(name="aud", auth=backend))
    token = jwt.encode(claims(aud="api://shop"), rsa_key, algorithm="RS256")
    assert t.cast(Principal, authenticate(app, backend, **bearer(token))).subject == "user-1"


def test_the_verifier_is_given_the_resource(make_app: t.Callable[..., Flask]) -> None:
    backend = TokenVerifierBackend(lambda token: None, checks_audience=True)
    make_app(MCP(name="aud", auth=backend), MCP_AUTH_RESOURCE=RESOURCE)
    assert backend.resource == RESOURCE
