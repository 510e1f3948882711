"""Authentication of the HTTP surfaces: backends, challenges and Protected Resource Metadata.

Pass a backend as ``MCP(auth=...)``, or set ``MCP_AUTH_TOKENS`` for static
tokens. Every request to the MCP endpoint and the REST adapter is then
authenticated before anything else is read; the caller becomes a
:class:`~flask_mcp.Principal` that tools and permissions see.
"""

from __future__ import annotations

from .adapters import FlaskLoginBackend, HTTPAuthBackend, TokenVerifierBackend, UserFunctionBackend
from .base import AuthBackend, bearer_token, parse_scopes, to_principal
from .gate import METADATA_PATH, AuthGate, Unauthorized, current_principal, error_status
from .jwt import JWTBackend
from .static import StaticTokenBackend, hash_token

__all__ = [
    "METADATA_PATH",
    "AuthBackend",
    "AuthGate",
    "FlaskLoginBackend",
    "HTTPAuthBackend",
    "JWTBackend",
    "StaticTokenBackend",
    "TokenVerifierBackend",
    "Unauthorized",
    "UserFunctionBackend",
    "bearer_token",
    "current_principal",
    "error_status",
    "hash_token",
    "parse_scopes",
    "to_principal",
]
