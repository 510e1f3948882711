"""The app as the OAuth 2.1 authorization server of its own users (the ``oauth`` extra).

:class:`OAuthServer` turns it on for one :class:`~flask_mcp.MCP`: metadata,
authorize (through the app's own sign-in and a consent page), token,
registration, revocation and JWKS endpoints, on Authlib, with MCP's OAuth
profile (PKCE S256, resource indicators, ``iss`` in the response, exact
redirect URIs, rotating refresh tokens). See :doc:`oauth`.
"""

from __future__ import annotations

from .redirects import redirect_matches, redirect_problem
from .scopes import ScopeCatalog
from .server import MCPAuthorizationServer, OAuthServer, OAuthState
from .settings import OAuthSettings
from .store import OAuthStore
from .tokens import OAuthTokenBackend

__all__ = [
    "MCPAuthorizationServer",
    "OAuthServer",
    "OAuthSettings",
    "OAuthState",
    "OAuthStore",
    "OAuthTokenBackend",
    "ScopeCatalog",
    "redirect_matches",
    "redirect_problem",
]
