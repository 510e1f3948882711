"""What a client needs to reach the app: a bearer token, an OAuth sign-in, or nothing.

``flask mcp install`` warns when the entry it writes would be refused, and
``flask mcp dev`` says how to give the MCP Inspector a token. Both read it
from the app as its HTTP endpoint would answer:

* an app with an authentication backend (``MCP_AUTH_TOKENS``, ``MCP(auth=...)``,
  the OAuth server) answers every HTTP request without a valid credential
  with 401, so a client needs a token, or a sign-in;
* a client that speaks MCP's authorization (OAuth 2.1 with the Protected
  Resource Metadata of RFC 9728) signs in by itself when that metadata names
  an authorization server: ``MCP_AUTH_AUTHORIZATION_SERVERS``, or the app's
  own :class:`~flask_mcp.oauth.OAuthServer`;
* over stdio there is no sign-in: the launched process serves the caller of
  its token (``FLASK_MCP_TOKEN``), else of ``MCP_LOCAL_PRINCIPAL``, else nobody.
"""

from __future__ import annotations

import dataclasses
import typing as t

from ..globals import state_of

if t.TYPE_CHECKING:
    from flask import Flask

__all__ = ["Protection", "protection_of"]


@dataclasses.dataclass(frozen=True)
class Protection:
    """How the app's MCP server is protected."""

    #: Whether its HTTP endpoint refuses a request without a valid credential.
    token_required: bool
    #: The authorization servers its resource metadata names: a client that
    #: speaks MCP's OAuth signs in through them. Empty: tokens are handed out some other way.
    authorization_servers: tuple[str, ...] = ()
    #: Whether ``MCP_LOCAL_PRINCIPAL`` names the caller of a local process given no token.
    local_principal: bool = False

    @property
    def oauth(self) -> bool:
        """Whether clients can sign in by themselves (OAuth) instead of being given a token."""
        return bool(self.authorization_servers)


def protection_of(app: Flask) -> Protection:
    """How *app*'s current MCP server is protected (see the module docstring)."""
    state = state_of(app)
    local = state.settings.local_principal is not None
    if state.auth is None:
        return Protection(token_required=False, local_principal=local)
    # The metadata document as the endpoint serves it: the backend may add the
    # authorization server (the OAuth server does), beyond what the settings name.
    path = state.endpoint_path or state.settings.url_prefix or "/"
    with app.test_request_context(path):
        servers = state.auth.metadata().get("authorization_servers") or ()
    return Protection(
        token_required=True,
        authorization_servers=tuple(str(server) for server in servers),
        local_principal=local,
    )
