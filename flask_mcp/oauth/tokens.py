"""Issuing tokens (RFC 9068 JWT access tokens, opaque refresh tokens) and trusting them on the resource side.

An access token is a JWT signed with the server's current key, with
``iss`` the issuer, ``aud`` the MCP server's canonical URL (RFC 8707),
``sub`` the user (or the client, for client credentials), ``scope`` and a
``jti``. The resource side is flask_mcp's own :class:`~flask_mcp.auth.JWTBackend`
reading the published keys, plus one check: the ``jti`` must not have been
revoked (RFC 7009 revocation, a revoked connection, a replayed refresh token).

That check reads the database, so a process asks it about a token at most
once every :data:`REVOCATION_BOUND` seconds, and answers the token's calls in
between from memory (:mod:`flask_mcp.auth.verified`): a token revoked anywhere
is refused by every process within that bound, and at once by the process
that revoked it.
"""

from __future__ import annotations

import dataclasses
import typing as t

from authlib.common.security import generate_token
from authlib.oauth2.rfc9068 import JWTBearerTokenGenerator
from flask import current_app
from joserfc.jwk import KeySet

from ..auth.base import bearer_token
from ..auth.jwt import JWTBackend
from ..auth.verified import VerifiedTokens
from .keys import ALGORITHM

if t.TYPE_CHECKING:
    from flask import Request

    from ..policies.principal import Principal
    from .server import MCPAuthorizationServer, OAuthState

__all__ = ["REVOCATION_BOUND", "AccessTokenGenerator", "OAuthTokenBackend", "save_token"]

#: Seconds a process trusts its last look at whether a token was revoked before it looks again.
REVOCATION_BOUND = 1.0

#: Where the app keeps its :class:`~flask_mcp.oauth.state.OAuthState`.
STATE_KEY = "flask_mcp.oauth"


class AccessTokenGenerator(JWTBearerTokenGenerator):  # type: ignore[misc]
    """Authlib's RFC 9068 generator, signing with the server's keys for the canonical resource.

    :param server: the authorization server (its settings and keys).
    """

    def __init__(self, server: MCPAuthorizationServer) -> None:
        settings = server.settings
        super().__init__(
            issuer=settings.issuer,
            alg=ALGORITHM,
            refresh_token_generator=lambda *args, **kwargs: generate_token(48),
            expires_generator=lambda client, grant_type: settings.access_token_ttl,
        )
        self.server = server

    def get_jwks(self) -> KeySet:
        return self.server.keys.signing_key()

    def get_audiences(self, client: t.Any, user: t.Any, scope: str | None) -> str:
        return self.server.settings.resource


def save_token(server: MCPAuthorizationServer, token: t.Mapping[str, t.Any], request: t.Any) -> None:
    """Keep what an issued token answer needs later: its family, its refresh token's digest, its ``jti``.

    A redeemed code starts a family; a refresh continues its token's
    family; client credentials have none (and no refresh token).
    """
    import jwt

    store, settings = server.store, server.settings
    client = request.client
    user = getattr(request, "user", None)
    user_id = user.get_user_id() if user is not None else None
    scope = str(token.get("scope") or "")
    family_id: str | None = None
    code = getattr(request, "authorization_code", None)
    previous = getattr(request, "refresh_token", None)
    if code is not None:
        family_id = store.new_family(client.get_client_id(), user_id, scope, settings.resource)
        store.link_code(code, family_id)
    elif previous is not None:
        family_id = previous.family_id
    claims = jwt.decode(token["access_token"], options={"verify_signature": False})
    store.save_access_token(str(claims["jti"]), family_id, client.get_client_id(), user_id, float(claims["exp"]))
    refresh = token.get("refresh_token")
    if refresh and family_id is not None:
        store.save_refresh_token(
            refresh,
            family_id,
            client.get_client_id(),
            user_id,
            scope=scope,
            expires_at=store.clock() + settings.refresh_token_ttl,
        )


def oauth_state() -> OAuthState:
    """The authorization server of the current app.

    :raises RuntimeError: the app has none.
    """
    state = current_app.extensions.get(STATE_KEY)
    if state is None:
        raise RuntimeError("no OAuthServer is set up on this app")
    return t.cast("OAuthState", state)


class OAuthTokenBackend(JWTBackend):
    """The resource side of :class:`~flask_mcp.oauth.OAuthServer`: its own JWTs, not revoked.

    A :class:`~flask_mcp.auth.JWTBackend` whose issuer and keys are the
    authorization server's (read from the app when a token arrives, so
    rotated keys are taken up) and whose audience is ``MCP_AUTH_RESOURCE``.
    Its Protected Resource Metadata names the authorization server and the
    scopes it grants.
    """

    def __init__(self) -> None:
        super().__init__(issuer=None, jwks=lambda: oauth_state().keys.public_jwks(), algorithms=(ALGORITHM,))
        #: Tokens found not revoked, with the issuer, the moment and this process's revocation count then.
        self.unrevoked = VerifiedTokens()

    def authenticate(self, request: Request) -> Principal | None:
        """The principal of a valid, unrevoked access token of this app's authorization server."""
        token = bearer_token(request)
        if token is None:
            return None
        state = oauth_state()
        store, issuer = state.store, state.settings.issuer
        now = store.clock()
        known = self.unrevoked.get(token, self.clock())
        if known is not None:
            principal, (checked_for, checked_at, revocations) = known
            fresh = now - checked_at < REVOCATION_BOUND and revocations == store.revocations
            if fresh and checked_for == issuer and super().authenticate(request) is not None:
                return principal
        # A key another process generated or rotated a moment ago is read now, not at the next reload.
        _learn_key_of(state, token)
        # The issuer is the app's (one extension may serve several apps), so it is compared here.
        verified = super().authenticate(request)
        record = None
        if verified is not None and verified.claims.get("iss") == issuer:
            revocations = store.revocations  # before the read: a revocation meanwhile makes it stale
            record = store.live_access_token(verified.claims.get("jti"))
        if verified is None or record is None:
            self.unrevoked.drop(token)
            return None
        # A token issued to a client for itself (client credentials) has no user behind it.
        principal = dataclasses.replace(verified, machine=True) if record.user_id is None else verified
        self.unrevoked.put(token, principal, (issuer, now, revocations))
        return principal

    def authorization_server_metadata(self) -> dict[str, t.Any]:
        """This app's authorization server's RFC 8414 document."""
        return oauth_state().server.metadata()

    def metadata(self, base: dict[str, t.Any]) -> dict[str, t.Any]:
        """The resource metadata, naming this app's authorization server and the scopes it grants."""
        state = oauth_state()
        base["authorization_servers"] = [state.settings.issuer]
        base["scopes_supported"] = state.scopes.supported()
        return base


def access_token_jti(token: str) -> str | None:
    """The ``jti`` of an access token this server signed for its resource (expired or not); else ``None``."""
    import jwt

    state = oauth_state()
    try:
        kid = jwt.get_unverified_header(token).get("kid")
        state.keys.knows(kid)
        keys = {jwk.get("kid"): jwk for jwk in state.keys.public_jwks()["keys"]}
        if kid not in keys:
            return None
        claims = jwt.decode(
            token,
            key=jwt.PyJWK(keys[kid]).key,
            algorithms=[ALGORITHM],
            audience=state.settings.resource,
            issuer=state.settings.issuer,
            options={"verify_exp": False},
        )
    except (jwt.PyJWTError, ValueError, TypeError):
        return None
    jti = claims.get("jti")
    return jti if isinstance(jti, str) else None


def _learn_key_of(state: OAuthState, token: str) -> None:
    import jwt

    try:
        kid = jwt.get_unverified_header(token).get("kid")
    except (jwt.PyJWTError, ValueError, TypeError):
        return  # not a JWT: the verification refuses it
    state.keys.knows(kid)
