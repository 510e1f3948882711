"""Authentication of the HTTP surfaces: backends, challenges and Protected Resource Metadata.

Pass a backend as ``MCP(auth=...)``, or set ``MCP_AUTH_TOKENS`` for static
tokens. Every request to the MCP endpoint and the REST adapter is then
authenticated before anything else is read; the caller becomes a
:class:`~flask_mcp.Principal` that tools and permissions see. stdio and the
``flask mcp`` commands get theirs from a token or ``MCP_LOCAL_PRINCIPAL``
(:mod:`flask_mcp.auth.local`).
"""

from __future__ import annotations

from .adapters import FlaskLoginBackend, HTTPAuthBackend, TokenVerifierBackend, UserFunctionBackend
from .base import AuthBackend, bearer_token, parse_scopes, to_principal
from .gate import METADATA_PATH, AuthGate, Unauthorized, current_principal, error_status
from .jwt import JWTBackend
from .local import TOKEN_ENV, LocalAuthError, local_principal
from .static import StaticTokenBackend, hash_token

__all__ = [
    "METADATA_PATH",
    "TOKEN_ENV",
    "AuthBackend",
    "AuthGate",
    "FlaskLoginBackend",
    "HTTPAuthBackend",
    "JWTBackend",
    "LocalAuthError",
    "StaticTokenBackend",
    "TokenVerifierBackend",
    "Unauthorized",
    "UserFunctionBackend",
    "bearer_token",
    "current_principal",
    "error_status",
    "hash_token",
    "local_principal",
    "parse_scopes",
    "to_principal",
]
