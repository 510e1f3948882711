"""The REST docs page as a client of the app's own authorization server: Authorize signs in by itself.

When the app runs an :class:`~flask_mcp.oauth.OAuthServer` and serves the
REST docs page, the page is a public client the server knows: made by the
server itself (an operator's client, so the consent page marks it verified),
with PKCE instead of a secret, its one redirect URI the page's own
``oauth2-redirect.html`` on the origin of ``MCP_AUTH_RESOURCE``. The user
still signs in and consents; the tokens are ordinary ones, bound to
``MCP_AUTH_RESOURCE``. Its record is written when the server starts, and
brought up to date (redirect URI, scopes) at every start.
"""

from __future__ import annotations

import contextlib
import typing as t
from urllib.parse import urlsplit

from sqlalchemy.exc import IntegrityError

from ..transport.swagger_page import ASSETS_PATH
from .models import Client

if t.TYPE_CHECKING:
    from .store import OAuthStore

__all__ = ["CLIENT_NAME", "docs_client_id", "docs_redirect_uri", "ensure_docs_client", "initialisation"]

#: The page's name as a client: what the consent page and the connections page show.
CLIENT_NAME = "API documentation"


def docs_client_id(blueprint: str) -> str:
    """The docs page's client id for the MCP server of *blueprint* (``flask-mcp-docs`` for the default ``mcp``)."""
    return "flask-mcp-docs" if blueprint == "mcp" else f"flask-mcp-docs-{blueprint}"


def docs_redirect_uri(resource: str, mcp_path: str, rest_prefix: str) -> str:
    """Where the authorization server sends the page's browser back: its ``oauth2-redirect.html``.

    On the origin of *resource* (``MCP_AUTH_RESOURCE``), where the page is
    opened, and under the path the app is mounted at: what *resource* has
    before the endpoint's own *mcp_path* (``/shop`` for
    ``https://example.com/shop/mcp``), as the page's own links carry the
    request's script root.

    :param mcp_path: the MCP endpoint's path in the app (``/mcp``).
    :param rest_prefix: the REST routes' prefix in the app (``/mcp/rest``).
    """
    parts = urlsplit(resource)
    path, endpoint = parts.path.rstrip("/"), mcp_path.rstrip("/")
    mounted = path[: len(path) - len(endpoint)] if path.endswith(endpoint) else ""
    return f"{parts.scheme}://{parts.netloc}{mounted}{rest_prefix.rstrip('/')}{ASSETS_PATH}/oauth2-redirect.html"


def ensure_docs_client(store: OAuthStore, client_id: str, redirect_uri: str, scopes: t.Sequence[str]) -> None:
    """Make the docs page's client, or bring it up to date; safe when several processes start at once."""
    metadata = {
        "client_name": CLIENT_NAME,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "scope": " ".join(scopes),
    }
    with store.session() as session:
        existing = session.get(Client, client_id)
        if existing is not None:
            # A row of that id made otherwise (by hand, with a secret) becomes the page's public client.
            if existing.client_metadata != metadata or existing.origin != "operator" or existing.secret_hash:
                existing.client_metadata = metadata
                existing.origin = "operator"
                existing.secret_hash = None
            return
    # Another process starting at the same moment may have made it first.
    with contextlib.suppress(IntegrityError):
        store.add_client(client_id, None, metadata, origin="operator")


def initialisation(client_id: str, resource: str, scopes: t.Sequence[str]) -> dict[str, t.Any]:
    """Swagger UI's ``initOAuth`` options: this client, ``resource`` on the authorization request, the scopes ticked."""
    return {
        "clientId": client_id,
        "appName": CLIENT_NAME,
        "scopes": list(scopes),
        # RFC 8707: the authorization server issues tokens for its MCP server only, and says so.
        "additionalQueryStringParams": {"resource": resource},
    }
