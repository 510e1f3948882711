"""The tables of the authorization server (SQLAlchemy), and the Authlib model protocols they follow.

Secrets are never stored as given: client secrets, codes and refresh tokens
are kept as SHA-256 digests (:func:`digest`), so a copy of the database does
not hand out working credentials. Access tokens are JWTs nobody stores; only
their ``jti`` is kept, for revocation.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import typing as t

from sqlalchemy import JSON, Boolean, Float, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

__all__ = [
    "AccessTokenRecord",
    "AuthorizationCode",
    "Base",
    "Client",
    "Consent",
    "RefreshToken",
    "SigningKey",
    "TokenFamily",
    "digest",
]


def digest(secret: str) -> str:
    """The hex SHA-256 of *secret*: how codes, refresh tokens and client secrets are kept."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class Base(DeclarativeBase):
    """The tables' own metadata, created on whichever engine the server uses."""


class Client(Base):
    """A registered client (RFC 7591); follows Authlib's ``ClientMixin``."""

    __tablename__ = "mcp_oauth_client"

    client_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    secret_hash: Mapped[str | None] = mapped_column(String(64))
    #: The registered metadata (``client_name``, ``redirect_uris``, ``logo_uri``...).
    client_metadata: Mapped[dict[str, t.Any]] = mapped_column(JSON)
    issued_at: Mapped[float] = mapped_column(Float, default=time.time)
    #: When it last obtained a token; ``None``: never.
    used_at: Mapped[float | None] = mapped_column(Float)
    #: Who made it: ``"registered"`` (the client itself, RFC 7591) or ``"operator"`` (the app's
    #: operator, ``flask mcp oauth add-client``). Only an operator's client may act for itself
    #: (``client_credentials``), and only within the scopes the operator gave it.
    origin: Mapped[str] = mapped_column(String(16), default="registered", server_default="registered")

    @property
    def operator_made(self) -> bool:
        """Whether the app's operator made it (a client that registered itself, or one known only by
        its metadata document, is not)."""
        return self.origin == "operator"

    @property
    def client_name(self) -> str:
        """The name shown to users; the client id when it gave none."""
        return str(self.client_metadata.get("client_name") or self.client_id)

    @property
    def redirect_uris(self) -> list[str]:
        """The registered redirect URIs."""
        return [str(uri) for uri in self.client_metadata.get("redirect_uris") or []]

    @property
    def auth_method(self) -> str:
        """``none`` for a public client, else how it authenticates at the token endpoint."""
        return str(self.client_metadata.get("token_endpoint_auth_method") or "client_secret_basic")

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str | None:
        # Never a default: the request must name its redirect URI, which is matched exactly.
        return None

    @property
    def scopes(self) -> list[str]:
        """The scopes of its metadata: the default of a registered client, the bound of an operator's."""
        value = self.client_metadata.get("scope")
        return list(dict.fromkeys(value.split())) if isinstance(value, str) else []

    def get_allowed_scope(self, scope: str | None) -> str:
        if self.operator_made:
            # The operator gave this client the scopes it may ever get: nothing outside them.
            allowed = self.scopes
            return " ".join(
                allowed if not scope else [each for each in dict.fromkeys(scope.split()) if each in allowed]
            )
        # The registered scope is only the default: a client's own registration is no limit worth
        # keeping (it could register again), and MCP clients ask for more scopes later (step-up)
        # without registering again. What a token gets is bounded by the supported scopes, the
        # user's allowed scopes and the user's consent.
        if not scope:
            return " ".join(self.scopes)
        return " ".join(dict.fromkeys(scope.split()))

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        from .redirects import redirect_matches

        return any(redirect_matches(registered, redirect_uri) for registered in self.redirect_uris)

    def check_client_secret(self, client_secret: str) -> bool:
        if self.secret_hash is None or not isinstance(client_secret, str):
            return False
        return hmac.compare_digest(self.secret_hash, digest(client_secret))

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        if endpoint == "token":
            return method == self.auth_method
        # Revocation: a public client proves nothing; a confidential one authenticates as at the token endpoint.
        return method == self.auth_method

    def check_response_type(self, response_type: str) -> bool:
        return response_type in (self.client_metadata.get("response_types") or ["code"])

    def check_grant_type(self, grant_type: str) -> bool:
        granted = self.client_metadata.get("grant_types") or ["authorization_code"]
        if grant_type == "client_credentials" and (self.auth_method == "none" or not self.operator_made):
            # A public client has no credentials to present; and a client acting for itself needs an
            # operator behind it: a stranger that registered itself gets no token without a user.
            return False
        return grant_type in granted


class AuthorizationCode(Base):
    """An authorization code: single use, short-lived, bound to its client, redirect URI, PKCE and resource."""

    __tablename__ = "mcp_oauth_code"

    code_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    client_id: Mapped[str] = mapped_column(String(128), index=True)
    user_id: Mapped[str] = mapped_column(String(255))
    redirect_uri: Mapped[str] = mapped_column(Text)
    scope: Mapped[str] = mapped_column(Text, default="")
    resource: Mapped[str] = mapped_column(Text)
    code_challenge: Mapped[str] = mapped_column(String(128))
    code_challenge_method: Mapped[str] = mapped_column(String(16))
    expires_at: Mapped[float] = mapped_column(Float)
    #: When it was redeemed; a second redemption revokes what the first issued.
    used_at: Mapped[float | None] = mapped_column(Float)
    #: The token family its redemption started.
    family_id: Mapped[str | None] = mapped_column(String(64))

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope


class TokenFamily(Base):
    """Every token descending from one authorization: revoked together."""

    __tablename__ = "mcp_oauth_family"

    family_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    client_id: Mapped[str] = mapped_column(String(128), index=True)
    user_id: Mapped[str | None] = mapped_column(String(255), index=True)
    scope: Mapped[str] = mapped_column(Text, default="")
    resource: Mapped[str] = mapped_column(Text)
    created_at: Mapped[float] = mapped_column(Float, default=time.time)
    revoked: Mapped[bool] = mapped_column(Boolean, default=False)


class RefreshToken(Base):
    """A refresh token of a family; rotated on use, and a replay revokes the family."""

    __tablename__ = "mcp_oauth_refresh_token"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    family_id: Mapped[str] = mapped_column(String(64), index=True)
    client_id: Mapped[str] = mapped_column(String(128))
    user_id: Mapped[str | None] = mapped_column(String(255))
    scope: Mapped[str] = mapped_column(Text, default="")
    expires_at: Mapped[float] = mapped_column(Float)
    #: When it was exchanged for the next one.
    used_at: Mapped[float | None] = mapped_column(Float)
    revoked: Mapped[bool] = mapped_column(Boolean, default=False)

    def check_client(self, client: Client) -> bool:
        return hmac.compare_digest(self.client_id, client.get_client_id())

    def get_scope(self) -> str:
        return self.scope

    def get_expires_in(self) -> int:
        return max(0, int(self.expires_at - time.time()))

    def is_expired(self) -> bool:
        return self.expires_at <= time.time()

    def is_revoked(self) -> bool:
        return self.revoked or self.used_at is not None


class AccessTokenRecord(Base):
    """What is kept of an issued access token: its ``jti``, for revocation."""

    __tablename__ = "mcp_oauth_access_token"

    jti: Mapped[str] = mapped_column(String(64), primary_key=True)
    family_id: Mapped[str | None] = mapped_column(String(64), index=True)
    client_id: Mapped[str] = mapped_column(String(128), index=True)
    user_id: Mapped[str | None] = mapped_column(String(255))
    expires_at: Mapped[float] = mapped_column(Float)
    revoked: Mapped[bool] = mapped_column(Boolean, default=False)

    def check_client(self, client: Client) -> bool:
        return hmac.compare_digest(self.client_id, client.get_client_id())


class Consent(Base):
    """A user's remembered approval of a client for some scopes."""

    __tablename__ = "mcp_oauth_consent"
    __table_args__ = (UniqueConstraint("user_id", "client_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    user_id: Mapped[str] = mapped_column(String(255), index=True)
    client_id: Mapped[str] = mapped_column(String(128))
    scope: Mapped[str] = mapped_column(Text, default="")
    granted_at: Mapped[float] = mapped_column(Float, default=time.time)

    @property
    def scopes(self) -> frozenset[str]:
        """The approved scopes."""
        return frozenset(self.scope.split())


class SigningKey(Base):
    """A generated signing key (a private JWK, as JSON)."""

    __tablename__ = "mcp_oauth_signing_key"

    kid: Mapped[str] = mapped_column(String(128), primary_key=True)
    #: 1 for the first key, one more for each rotation; unique, so concurrent processes make one key, not two.
    generation: Mapped[int] = mapped_column(Integer, unique=True)
    private_jwk: Mapped[str] = mapped_column(Text)
    created_at: Mapped[float] = mapped_column(Float, default=time.time)
    #: Retired keys still verify tokens (they stay in the JWKS) but sign none.
    retired: Mapped[bool] = mapped_column(Boolean, default=False)

    @property
    def jwk(self) -> dict[str, t.Any]:
        """The private key as a JWK dict."""
        return t.cast("dict[str, t.Any]", json.loads(self.private_jwk))
