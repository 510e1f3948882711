"""Client registration (RFC 7591), revocation (RFC 7009) and the server's metadata (RFC 8414)."""

from __future__ import annotations

import hmac
import typing as t
from urllib.parse import urlsplit

from authlib.common.security import generate_token
from authlib.oauth2.rfc7009 import RevocationEndpoint
from authlib.oauth2.rfc7591 import ClientRegistrationEndpoint, InvalidClientMetadataError, InvalidRedirectURIError
from flask import url_for

from ..auth.base import bearer_token
from .models import Client, RefreshToken
from .redirects import redirect_problem

if t.TYPE_CHECKING:
    from .server import MCPAuthorizationServer

__all__ = ["GRANT_TYPES", "TOKEN_AUTH_METHODS", "Registration", "Revocation", "server_metadata"]

GRANT_TYPES = ["authorization_code", "refresh_token", "client_credentials"]
TOKEN_AUTH_METHODS = ["none", "client_secret_basic", "client_secret_post"]
#: Client metadata members kept, and their bound (characters).
_MAX_METADATA = 4096


def server_metadata(server: MCPAuthorizationServer) -> dict[str, t.Any]:
    """The RFC 8414 document, with absolute URLs on the issuer's origin."""
    settings = server.settings
    parts = urlsplit(settings.issuer)
    origin = f"{parts.scheme}://{parts.netloc}"

    def endpoint(name: str) -> str:
        return origin + url_for(f"mcp_oauth.{name}")

    document: dict[str, t.Any] = {
        "issuer": settings.issuer,
        "authorization_endpoint": endpoint("authorize"),
        "token_endpoint": endpoint("token"),
        "revocation_endpoint": endpoint("revoke"),
        "jwks_uri": endpoint("jwks"),
        "scopes_supported": server.scopes.supported(),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": GRANT_TYPES,
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": TOKEN_AUTH_METHODS,
        "revocation_endpoint_auth_methods_supported": TOKEN_AUTH_METHODS,
        "authorization_response_iss_parameter_supported": True,
        "client_id_metadata_document_supported": server.clients is not None and server.clients.settings.enabled,
    }
    if settings.registration_enabled:
        document["registration_endpoint"] = endpoint("register")
    return document


class Registration(ClientRegistrationEndpoint):  # type: ignore[misc]
    """RFC 7591 registration: open, or behind ``MCP_OAUTH_REGISTRATION_TOKEN``; redirect URIs checked."""

    @property
    def oauth(self) -> MCPAuthorizationServer:
        return t.cast("MCPAuthorizationServer", self.server)

    def authenticate_token(self, request: t.Any) -> bool:
        expected = self.oauth.settings.registration_token
        if expected is None:
            return True
        presented = bearer_token(t.cast(t.Any, request))
        return presented is not None and hmac.compare_digest(presented.encode(), str(expected).encode())

    def get_server_metadata(self) -> dict[str, t.Any]:
        return server_metadata(self.oauth)

    def extract_client_metadata(self, request: t.Any) -> dict[str, t.Any]:
        data = request.payload.data
        if not isinstance(data, dict):
            raise InvalidClientMetadataError("the registration request is a JSON object")
        if len(str(data)) > _MAX_METADATA:
            raise InvalidClientMetadataError("the client metadata is too large")
        try:
            metadata = t.cast("dict[str, t.Any]", super().extract_client_metadata(request))
        except (TypeError, AttributeError, ValueError) as exc:
            # Authlib's claim checks assume each member has its documented JSON type.
            raise InvalidClientMetadataError("a client metadata member has the wrong type") from exc
        metadata.setdefault("token_endpoint_auth_method", "client_secret_basic")
        metadata.setdefault("grant_types", ["authorization_code"])
        metadata.setdefault("response_types", ["code"])
        uris = metadata.get("redirect_uris") or []
        if not isinstance(uris, list):
            raise InvalidRedirectURIError("redirect_uris is a list")
        for uri in uris:
            problem = redirect_problem(uri)
            if problem is not None:
                raise InvalidRedirectURIError(problem)
        grants = set(metadata["grant_types"])
        if "authorization_code" in grants and not uris:
            raise InvalidRedirectURIError("the authorization_code grant needs redirect_uris")
        if "client_credentials" in grants:
            # A client acting for itself has no user behind it: only the operator may make one.
            raise InvalidClientMetadataError(
                "client_credentials is only for clients the app's operator makes (flask mcp oauth add-client)"
            )
        logo = metadata.get("logo_uri")
        if logo is not None and urlsplit(str(logo)).scheme != "https":
            metadata.pop("logo_uri")  # shown on the consent page: https only
        return metadata

    def generate_client_info(self, request: t.Any) -> dict[str, t.Any]:
        info = t.cast("dict[str, t.Any]", super().generate_client_info(request))
        if info.get("client_secret") is None:
            info.pop("client_secret", None)
            info.pop("client_secret_expires_at", None)
        return info

    def generate_client_secret(self, request: t.Any) -> str | None:
        method = (request.payload.data or {}).get("token_endpoint_auth_method", "client_secret_basic")
        return None if method == "none" else generate_token(48)

    def save_client(self, client_info: dict[str, t.Any], client_metadata: dict[str, t.Any], request: t.Any) -> Client:
        return self.oauth.store.add_client(client_info["client_id"], client_info.get("client_secret"), client_metadata)


class Revocation(RevocationEndpoint):  # type: ignore[misc]
    """RFC 7009: a refresh token revokes its whole family; an access token, itself."""

    CLIENT_AUTH_METHODS: t.ClassVar[list[str]] = TOKEN_AUTH_METHODS

    @property
    def oauth(self) -> MCPAuthorizationServer:
        return t.cast("MCPAuthorizationServer", self.server)

    def query_token(self, token_string: str, token_type_hint: str | None) -> t.Any:
        store = self.oauth.store
        if token_type_hint != "access_token":
            row = store.refresh_token(token_string)
            if row is not None:
                return row
        from .tokens import access_token_jti

        jti = access_token_jti(token_string)
        return store.access_token(jti) if jti is not None else None

    def revoke_token(self, token: t.Any, request: t.Any) -> None:
        if isinstance(token, RefreshToken):
            self.oauth.store.revoke_family(token.family_id)
        else:
            self.oauth.store.revoke_access_token(token.jti)
