"""The grants MCP's OAuth profile allows, as Authlib grants with the profile's rules added.

- authorization code, with PKCE ``S256`` required (``plain`` and a missing
  challenge refused at the authorization request already), codes single use;
- refresh tokens, rotated on every use, a replay revoking the whole family (after a short grace
  window for the same client presenting it twice);
- client credentials, for confidential clients the app's operator made, within their scopes;
- and for all of them the RFC 8707 ``resource``: required on the
  authorization request, and when given anywhere it must be this server's
  canonical URL (the only audience tokens are ever issued for).
"""

from __future__ import annotations

import typing as t

from authlib.oauth2.rfc6749 import InvalidGrantError, InvalidRequestError, InvalidScopeError, OAuth2Error, grants
from authlib.oauth2.rfc7636 import CodeChallenge

if t.TYPE_CHECKING:
    from .server import MCPAuthorizationServer

__all__ = [
    "AuthorizationCodeGrant",
    "ClientCredentialsGrant",
    "GrantedUser",
    "InvalidTargetError",
    "RefreshTokenGrant",
    "ResourceIndicator",
    "S256CodeChallenge",
]

_TOKEN_AUTH = ["none", "client_secret_basic", "client_secret_post"]


class GrantedUser:
    """The resource owner a grant is for: a subject, and the scopes the user granted.

    :param subject: the user's id (the tokens' ``sub``).
    :param scope: the granted scopes, space separated.
    """

    def __init__(self, subject: str, scope: str = "") -> None:
        self.subject = subject
        self.scope = scope

    def get_user_id(self) -> str:
        return self.subject


class InvalidTargetError(OAuth2Error):  # type: ignore[misc]
    """RFC 8707 ``invalid_target``: a missing, repeated or foreign ``resource``."""

    error = "invalid_target"


def checked_resource(grant: t.Any, *, required: bool) -> str | None:
    """The request's ``resource``, which must be the canonical URL of this MCP server.

    :raises InvalidTargetError: missing when *required*, given more than once, or another one.
    """
    values = grant.request.payload.datalist.get("resource", [])
    canonical = t.cast("MCPAuthorizationServer", grant.server).settings.resource
    if len(values) > 1:
        raise InvalidTargetError("give one 'resource'")
    if not values:
        if required:
            raise InvalidTargetError(f"'resource' is required: this server issues tokens for {canonical}")
        return None
    if values[0] != canonical:
        raise InvalidTargetError(f"tokens are issued only for the resource {canonical}")
    return str(values[0])


class ResourceIndicator:
    """Authlib grant extension: checks ``resource`` on the authorization request (required) and token request."""

    def __call__(self, grant: t.Any) -> None:
        grant.register_hook("after_validate_authorization_request_payload", self.on_authorize)
        grant.register_hook("after_validate_token_request", self.on_token)

    def on_authorize(self, grant: t.Any, redirect_uri: str) -> None:
        checked_resource(grant, required=True)

    def on_token(self, grant: t.Any, *args: t.Any) -> None:
        checked_resource(grant, required=False)


class S256CodeChallenge(CodeChallenge):  # type: ignore[misc]
    """PKCE with ``S256`` only: a missing challenge or method, or ``plain``, is refused."""

    SUPPORTED_CODE_CHALLENGE_METHOD: t.ClassVar[list[str]] = ["S256"]
    CODE_CHALLENGE_METHODS: t.ClassVar[dict[str, t.Any]] = {"S256": CodeChallenge.CODE_CHALLENGE_METHODS["S256"]}

    def validate_code_challenge(self, grant: t.Any, redirect_uri: str) -> None:
        data = grant.request.payload.data
        if not data.get("code_challenge"):
            raise InvalidRequestError("PKCE is required: send 'code_challenge' with 'code_challenge_method=S256'")
        if data.get("code_challenge_method") != "S256":
            raise InvalidRequestError("'code_challenge_method' must be S256")
        super().validate_code_challenge(grant, redirect_uri)


class AuthorizationCodeGrant(grants.AuthorizationCodeGrant):  # type: ignore[misc]
    """Authorization codes kept as digests, bound to the PKCE challenge and resource, single use."""

    TOKEN_ENDPOINT_AUTH_METHODS: t.ClassVar[list[str]] = _TOKEN_AUTH

    @property
    def oauth(self) -> MCPAuthorizationServer:
        return t.cast("MCPAuthorizationServer", self.server)

    def save_authorization_code(self, code: str, request: t.Any) -> None:
        user = t.cast(GrantedUser, request.user)
        data = request.payload.data
        self.oauth.store.save_code(
            code,
            client_id=request.client.get_client_id(),
            user_id=user.subject,
            redirect_uri=request.payload.redirect_uri,
            scope=user.scope,
            resource=self.oauth.settings.resource,
            code_challenge=data["code_challenge"],
            code_challenge_method=data["code_challenge_method"],
            expires_at=self.oauth.store.clock() + self.oauth.settings.code_ttl,
        )

    def query_authorization_code(self, code: str, client: t.Any) -> t.Any:
        # Redeemed here, before PKCE is checked: a wrong verifier burns the code rather than allowing retries.
        return self.oauth.store.redeem_code(code, client.get_client_id())

    def delete_authorization_code(self, authorization_code: t.Any) -> None:
        """Nothing: the code was marked used when it was redeemed."""

    def authenticate_user(self, authorization_code: t.Any) -> GrantedUser:
        return GrantedUser(authorization_code.user_id, authorization_code.scope)


class RefreshTokenGrant(grants.RefreshTokenGrant):  # type: ignore[misc]
    """Refresh with rotation: every use returns a new refresh token, and a replayed one revokes its family.

    A token presented again by its own client within ``MCP_OAUTH_REFRESH_GRACE`` seconds of its
    rotation is no replay but a client racing itself: it is answered with a new pair of the family.
    """

    TOKEN_ENDPOINT_AUTH_METHODS: t.ClassVar[list[str]] = _TOKEN_AUTH
    INCLUDE_NEW_REFRESH_TOKEN = True

    @property
    def oauth(self) -> MCPAuthorizationServer:
        return t.cast("MCPAuthorizationServer", self.server)

    def validate_token_request(self) -> None:
        checked_resource(self, required=False)
        super().validate_token_request()

    def _validate_request_token(self, client: t.Any) -> t.Any:
        token = self.request.form.get("refresh_token")
        if token is None:
            raise InvalidRequestError("Missing 'refresh_token' in request.")
        row = self.oauth.store.rotate_refresh_token(
            token, client.get_client_id(), grace=self.oauth.settings.refresh_grace
        )
        if row is None:
            raise InvalidGrantError("the refresh token is invalid, expired, revoked or already used")
        return row

    def authenticate_refresh_token(self, refresh_token: str) -> t.Any:
        return self.oauth.store.refresh_token(refresh_token)

    def authenticate_user(self, refresh_token: t.Any) -> GrantedUser:
        return GrantedUser(refresh_token.user_id or "", refresh_token.scope)

    def revoke_old_credential(self, refresh_token: t.Any) -> None:
        """Nothing: the old token was marked used when it was presented."""


class ClientCredentialsGrant(grants.ClientCredentialsGrant):  # type: ignore[misc]
    """Tokens for a client the app's operator made, acting for itself (``sub`` is its client id).

    Only operator-made confidential clients may use it (``Client.check_grant_type``), and a
    request for a scope outside the ones the operator gave the client is refused
    (``invalid_scope``) rather than quietly narrowed: the operator sees the mistake at once.
    """

    TOKEN_ENDPOINT_AUTH_METHODS: t.ClassVar[list[str]] = ["client_secret_basic", "client_secret_post"]

    def validate_token_request(self) -> None:
        checked_resource(self, required=False)
        super().validate_token_request()
        requested = (self.request.payload.scope or "").split()
        allowed = self.request.client.scopes
        if not set(requested) <= set(allowed):
            raise InvalidScopeError(f"this client may be granted only: {' '.join(allowed) or 'no scope'}")
