"""Who is shown what in the REST adapter's OpenAPI document: the OAuth schemes, and each caller's tools.

A server that requires authentication asks for a credential here too by
default (``MCP_AUTH_OPENAPI`` ``None``, :func:`needs_credential`): the
document names and describes every tool, which ``tools/list`` tells only
authenticated callers; the docs page signs in first. With
``MCP_AUTH_OPENAPI = False`` it is public. What a
caller could not list, it is not shown either: with
``MCP_FILTER_LISTINGS_BY_PERMISSIONS`` the document holds the tools the
caller's ``tools/list`` would (an anonymous request: those whose
permissions let an unauthenticated caller see them; a request with a
credential: that principal's), as :func:`visible_tools` works out.

Besides the backend's own schemes (:func:`~flask_mcp.transport.openapi.security_schemes`),
:func:`oauth_schemes` declares where to get a token: the OAuth flows of an
authorization server this app runs itself, or OpenID Connect discovery of
the ``MCP_AUTH_AUTHORIZATION_SERVERS`` that issue them.
"""

from __future__ import annotations

import typing as t
from urllib.parse import urlsplit

if t.TYPE_CHECKING:
    from ..core.server import Server
    from ..policies.principal import Principal

__all__ = [
    "DISCOVERY_PATH",
    "View",
    "connect_origins",
    "needs_credential",
    "oauth_schemes",
    "views_differ",
    "visible_view",
]

#: Appended to an issuer for its OpenID Connect discovery document.
DISCOVERY_PATH = "/.well-known/openid-configuration"

#: Which part of the registry one document shows: the tool names and whether
#: the resource operation is there. ``None``: everything.
View = tuple[frozenset[str], bool] | None


def oauth_schemes(
    authorization_server: t.Mapping[str, t.Any] | None, authorization_servers: t.Sequence[str]
) -> dict[str, dict[str, t.Any]]:
    """The OAuth security schemes: how a client gets the tokens the backend accepts.

    :param authorization_server: the RFC 8414 metadata of the authorization
        server the app runs itself
        (:meth:`~flask_mcp.auth.AuthBackend.authorization_server_metadata`):
        an ``oauth2`` scheme with its authorization code flow (PKCE; the
        refresh URL too when it grants refresh tokens) and client credentials
        flow, and the scopes it grants.
    :param authorization_servers: ``MCP_AUTH_AUTHORIZATION_SERVERS``, used when
        the app runs none: an ``openIdConnect`` scheme per issuer, pointing at
        its discovery document, which Swagger UI reads for the endpoints and scopes.
    """
    if authorization_server is not None:
        grants = authorization_server.get("grant_types_supported") or ["authorization_code"]
        token_url = authorization_server.get("token_endpoint")
        scopes = {str(scope): "" for scope in authorization_server.get("scopes_supported") or ()}
        flows: dict[str, t.Any] = {}
        authorize_url = authorization_server.get("authorization_endpoint")
        if "authorization_code" in grants and authorize_url and token_url:
            code: dict[str, t.Any] = {"authorizationUrl": authorize_url, "tokenUrl": token_url, "scopes": scopes}
            if "refresh_token" in grants:
                code["refreshUrl"] = token_url
            flows["authorizationCode"] = code
        if "client_credentials" in grants and token_url:
            flows["clientCredentials"] = {"tokenUrl": token_url, "scopes": scopes}
        return {"oauth2": {"type": "oauth2", "flows": flows}} if flows else {}
    schemes: dict[str, dict[str, t.Any]] = {}
    for number, issuer in enumerate(authorization_servers, 1):
        name = "openIdConnect" if number == 1 else f"openIdConnect{number}"
        schemes[name] = {"type": "openIdConnect", "openIdConnectUrl": issuer.rstrip("/") + DISCOVERY_PATH}
    return schemes


def connect_origins(schemes: t.Mapping[str, t.Mapping[str, t.Any]]) -> list[str]:
    """The origins of the OAuth URLs in *schemes*, which the docs page's fetches must be allowed to reach."""
    urls: list[str] = []
    for scheme in schemes.values():
        if scheme.get("type") == "openIdConnect":
            urls.append(str(scheme["openIdConnectUrl"]))
        for flow in (scheme.get("flows") or {}).values():
            urls.extend(str(flow[key]) for key in ("tokenUrl", "refreshUrl") if key in flow)
    origins = []
    for url in urls:
        parts = urlsplit(url)
        if parts.scheme in ("http", "https") and parts.netloc:
            origins.append(f"{parts.scheme}://{parts.netloc}")
    return list(dict.fromkeys(origins))


def needs_credential(auth_openapi: bool | None, protected: bool) -> bool:
    """Whether the document is refused to a request without a credential.

    :param auth_openapi: ``MCP_AUTH_OPENAPI``: ``None`` follows the server,
        ``False`` publishes the document, ``True`` asks for a credential.
    :param protected: whether the server has an authentication backend
        (every caller of a server with one needs a credential; a server
        without one has no credential to check, so its document is public).
    """
    return protected and auth_openapi is not False


def views_differ(server: Server) -> bool:
    """Whether readers may be shown different documents: listings are filtered and a permission could hide something."""
    if not server.filter_listings:
        return False
    defaults = bool(server.default_permissions)
    return any(server.registry.guarded(kind, defaults) for kind in ("tools", "resources", "templates"))


def visible_view(server: Server, principal: Principal | None) -> View:
    """What *principal* (``None``: an anonymous caller) is shown, or ``None`` when everyone is shown everything.

    The same rule as a ``tools/list`` filtered by ``MCP_FILTER_LISTINGS_BY_PERMISSIONS``
    (:meth:`~flask_mcp.core.server.Server.visible`): without the filter, or
    when no permission could hide anything, one document serves everyone.
    """
    if not views_differ(server):
        return None
    registry = server.registry
    tools = frozenset(name for name, tool in registry.tools.items() if server.visible(principal, "tool", tool))
    resources = any(
        server.visible(principal, "resource", component)
        for table in (registry.resources, registry.templates)
        for component in table.values()
    )
    return tools, resources
