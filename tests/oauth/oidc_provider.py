"""A small OpenID Connect provider on Authlib, run in its own process by the upstream-mode tests.

Authorization code with PKCE (S256 required), ID tokens signed with RS256,
a discovery document and a JWKS. One client (``--client-id`` and
``--client-secret``) whose redirect URIs are loopback callbacks of
flask_mcp's upstream mode (any port). One user, ``carol`` (password
``carol``), signs in on the authorization page, which also has a deny
button. ``POST /test/mode`` makes the next ID tokens wrong in one way
(``bad-signature``, ``bad-issuer``, ``bad-audience``, ``bad-nonce``,
``no-id-token``; ``claims-iss`` makes the discovery document promise an
``iss`` its answers do not carry) so the relying party's checks can be tested.

``python tests/oauth/oidc_provider.py --client-id X --client-secret Y``
listens on a free loopback port and prints ``listening on http://127.0.0.1:<port>``.
"""

from __future__ import annotations

import argparse
import contextlib
import secrets
import sys
import time
import typing as t
from urllib.parse import urlsplit

from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.oauth2.rfc6749 import grants
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oidc.core import UserInfo
from authlib.oidc.core.grants import OpenIDCode
from flask import Flask, jsonify, request
from joserfc.jwk import KeySet, RSAKey
from werkzeug.serving import make_server

USERS = {"carol": {"password": "carol", "sub": "248289761001", "name": "Carol Upstream", "email": "carol@idp.test"}}
CALLBACK_PATH = "/oauth/upstream/callback"
PAGE = """<!doctype html><title>Provider sign-in</title>
<form method="post"><input name="username"><input name="password" type="password">
<button name="decision" value="approve">Sign in</button><button name="decision" value="deny">Deny</button></form>"""


class Client:
    def __init__(self, client_id: str, secret: str) -> None:
        self.client_id = client_id
        self.secret = secret

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> None:
        return None

    def get_allowed_scope(self, scope: str) -> str:
        return " ".join(s for s in (scope or "").split() if s in ("openid", "profile", "email"))

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        parts = urlsplit(redirect_uri)
        return parts.scheme == "http" and parts.hostname == "127.0.0.1" and parts.path == CALLBACK_PATH

    def check_client_secret(self, client_secret: str) -> bool:
        return secrets.compare_digest(self.secret, client_secret)

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method == "client_secret_basic"

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in ("authorization_code", "refresh_token")


class Code:
    def __init__(self, **fields: t.Any) -> None:
        self.__dict__.update(fields)

    def get_redirect_uri(self) -> str:
        return str(self.redirect_uri)

    def get_scope(self) -> str:
        return str(self.scope)

    def get_nonce(self) -> str | None:
        return t.cast("str | None", self.nonce)

    def get_auth_time(self) -> int:
        return int(self.auth_time)

    def get_acr(self) -> None:
        return None

    def get_amr(self) -> None:
        return None


class User:
    def __init__(self, name: str) -> None:
        self.name = name

    def get_user_id(self) -> str:
        return str(USERS[self.name]["sub"])


def create_app(client_id: str, client_secret: str, issuer_holder: list[str]) -> Flask:
    app = Flask(__name__)
    key = RSAKey.generate_key(2048, private=True, auto_kid=True)
    # A key with the same kid the JWKS does not hold: its signatures must be refused.
    impostor = RSAKey.generate_key(2048, private=True, parameters={"kid": key.kid})
    client = Client(client_id, client_secret)
    codes: dict[str, Code] = {}
    mode = {"value": "ok"}
    # Every token value this provider handed out, so a test can look for them where they must not be.
    issued: list[str] = []

    def issuer() -> str:
        return issuer_holder[0]

    class AuthorizationCodeGrant(grants.AuthorizationCodeGrant):  # type: ignore[misc]
        TOKEN_ENDPOINT_AUTH_METHODS: t.ClassVar[list[str]] = ["client_secret_basic"]

        def save_authorization_code(self, code: str, req: t.Any) -> None:
            codes[code] = Code(
                code=code,
                client_id=req.client.client_id,
                redirect_uri=req.payload.redirect_uri,
                scope=req.payload.scope,
                user=req.user.name,
                nonce=req.payload.data.get("nonce"),
                auth_time=int(time.time()),
                code_challenge=req.payload.data.get("code_challenge"),
                code_challenge_method=req.payload.data.get("code_challenge_method"),
            )

        def query_authorization_code(self, code: str, client: Client) -> Code | None:
            found = codes.get(code)
            return found if found is not None and found.client_id == client.client_id else None

        def delete_authorization_code(self, authorization_code: Code) -> None:
            codes.pop(authorization_code.code, None)

        def authenticate_user(self, authorization_code: Code) -> User:
            return User(authorization_code.user)

    class OpenIDCodeExtension(OpenIDCode):  # type: ignore[misc]
        def exists_nonce(self, nonce: str, req: t.Any) -> bool:
            return any(code.nonce == nonce for code in codes.values())

        def resolve_client_private_key(self, the_client: Client) -> t.Any:
            return KeySet([impostor if mode["value"] == "bad-signature" else key])

        def get_client_algorithm(self, the_client: Client) -> str:
            return "RS256"

        def get_encode_header(self, the_client: Client) -> dict[str, str]:
            return {"alg": "RS256", "kid": str(key.kid)}

        def get_client_claims(self, the_client: Client) -> dict[str, t.Any]:
            now = int(time.time())
            claims: dict[str, t.Any] = {"iss": issuer(), "aud": [the_client.client_id], "exp": now + 300}
            if mode["value"] == "bad-issuer":
                claims["iss"] = "http://127.0.0.1:1/elsewhere"
            if mode["value"] == "bad-audience":
                # Issued to another client, naming this one as the authorized party: still not for it.
                claims["aud"] = ["someone-else"]
                claims["azp"] = the_client.client_id
            return claims

        def get_authorization_code_claims(self, authorization_code: Code) -> dict[str, t.Any]:
            claims = t.cast("dict[str, t.Any]", super().get_authorization_code_claims(authorization_code))
            if mode["value"] == "bad-nonce":
                claims["nonce"] = "not-the-nonce"
            return claims

        def generate_user_info(self, user: User, scope: str) -> UserInfo:
            record = USERS[user.name]
            return UserInfo(sub=record["sub"], name=record["name"], email=record["email"])

        def process_token(self, grant: t.Any, response: t.Any) -> t.Any:
            token = super().process_token(grant, response)
            if mode["value"] == "no-id-token":
                token.pop("id_token", None)
            issued.extend(str(value) for name, value in token.items() if name.endswith("_token"))
            return token

    server = AuthorizationServer(app, query_client=lambda cid: client if cid == client.client_id else None)
    server.save_token = lambda token, req: None
    extensions = [CodeChallenge(required=True), OpenIDCodeExtension(require_nonce=True)]
    server.register_grant(AuthorizationCodeGrant, extensions)

    @app.get("/.well-known/openid-configuration")
    def discovery() -> t.Any:
        base = issuer()
        return jsonify(
            issuer=base,
            authorization_endpoint=base + "/authorize",
            token_endpoint=base + "/token",
            jwks_uri=base + "/jwks",
            response_types_supported=["code"],
            subject_types_supported=["public"],
            id_token_signing_alg_values_supported=["RS256"],
            code_challenge_methods_supported=["S256"],
            scopes_supported=["openid", "profile", "email"],
            token_endpoint_auth_methods_supported=["client_secret_basic"],
            # Claimed (falsely: its answers carry no iss) in this mode, to test the relying party's check.
            authorization_response_iss_parameter_supported=mode["value"] == "claims-iss",
        )

    @app.get("/jwks")
    def jwks() -> t.Any:
        return jsonify(KeySet([key]).as_dict(private=False))

    @app.route("/authorize", methods=["GET", "POST"])
    def authorize() -> t.Any:
        if request.method == "GET":
            server.get_consent_grant(end_user=None)  # refuses a bad request before the page
            return PAGE
        record = USERS.get(request.form.get("username", ""))
        if request.form.get("decision") != "approve":
            return server.create_authorization_response(grant_user=None)
        if record is None or not secrets.compare_digest(record["password"], request.form.get("password", "")):
            return "wrong password", 401
        return server.create_authorization_response(grant_user=User(request.form["username"]))

    @app.post("/token")
    def token() -> t.Any:
        return server.create_token_response()

    @app.get("/test/issued")
    def issued_tokens() -> t.Any:
        return jsonify(issued=issued)

    @app.post("/test/mode")
    def set_mode() -> t.Any:
        mode["value"] = str(request.get_json()["mode"])
        return jsonify(mode=mode["value"])

    return app


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--client-id", required=True)
    parser.add_argument("--client-secret", required=True)
    args = parser.parse_args()
    holder: list[str] = []
    app = create_app(args.client_id, args.client_secret, holder)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    holder.append(f"http://127.0.0.1:{server.server_port}")
    print(f"listening on {holder[0]}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever(poll_interval=0.05)
    sys.exit(0)


if __name__ == "__main__":
    main()
