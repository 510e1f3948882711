"""``OAuthServer``: the app as the OAuth 2.1 authorization server of its own users, for one MCP server."""

from __future__ import annotations

import dataclasses
import typing as t
from urllib.parse import urlsplit

from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.oauth2.rfc6749 import InvalidScopeError
from flask import Blueprint, Flask
from sqlalchemy import create_engine
from sqlalchemy.exc import OperationalError

from ..globals import state_for
from ..policies.ratelimit import CacheRateLimiter
from ..policies.tool import ConfigurationError
from ..stores.failures import warn_store_unreachable
from ..transport.sign_in import SIGN_IN
from .client_documents import ClientDirectory, ClientDocumentSettings
from .endpoints import Registration, Revocation, server_metadata
from .grants import (
    AuthorizationCodeGrant,
    ClientCredentialsGrant,
    RefreshTokenGrant,
    ResourceIndicator,
    S256CodeChallenge,
)
from .keys import SigningKeys
from .limits import EndpointLimits
from .pruning import PruneSchedule
from .scopes import ScopeCatalog
from .settings import OAuthSettings
from .store import OAuthStore
from .tokens import STATE_KEY, AccessTokenGenerator, OAuthTokenBackend, save_token
from .users import OAuthSignIn, UserHooks

if t.TYPE_CHECKING:
    from ..binding.state import MCPState
    from ..extension import MCP
    from ..transport.rest import RestSite

__all__ = ["MCPAuthorizationServer", "OAuthServer", "OAuthState"]


class MCPAuthorizationServer(AuthorizationServer):  # type: ignore[misc]
    """Authlib's Flask authorization server, holding what the grants and endpoints need."""

    def __init__(self, settings: OAuthSettings, store: OAuthStore, keys: SigningKeys, scopes: ScopeCatalog) -> None:
        super().__init__()
        self.settings = settings
        self.store = store
        self.keys = keys
        self.scopes = scopes
        self._query_client = store.client
        #: Where ``query_client`` looks clients up (documents too); set by :meth:`OAuthServer.init_app`.
        self.clients: ClientDirectory | None = None
        self._save_token = lambda token, request: save_token(self, token, request)
        self.register_token_generator("default", AccessTokenGenerator(self))
        self.register_grant(AuthorizationCodeGrant, [S256CodeChallenge(required=True), ResourceIndicator()])
        self.register_grant(RefreshTokenGrant)
        self.register_grant(ClientCredentialsGrant)
        self.register_endpoint(Revocation)
        if settings.registration_enabled:
            self.register_endpoint(Registration)

    def validate_requested_scope(self, scope: str | None) -> None:
        """Refuse scopes no permission or setting names (the set is read now: tools may be added later)."""
        if scope and not set(scope.split()) <= set(self.scopes.supported()):
            raise InvalidScopeError()

    def metadata(self) -> dict[str, t.Any]:
        """Its RFC 8414 document (:func:`~flask_mcp.oauth.endpoints.server_metadata`)."""
        return server_metadata(self)

    def handle_response(self, status_code: int, payload: t.Any, headers: t.Any) -> t.Any:
        response = super().handle_response(status_code, payload, headers)
        # Token and registration answers carry credentials: never cached (RFC 6749 section 5.1).
        response.headers.setdefault("Cache-Control", "no-store")
        return response


@dataclasses.dataclass
class OAuthState:
    """What one app's authorization server is made of (``app.extensions["flask_mcp.oauth"]``)."""

    settings: OAuthSettings
    store: OAuthStore
    keys: SigningKeys
    scopes: ScopeCatalog
    users: UserHooks
    server: MCPAuthorizationServer
    #: The endpoints' rate limits.
    limits: EndpointLimits
    #: When expired rows are swept (``None``: only ``flask mcp oauth prune``).
    prune: PruneSchedule | None


class OAuthServer:
    """Serve an OAuth 2.1 authorization server for *mcp*, signing in the app's own users.

    ::

        mcp = MCP()
        oauth = OAuthServer(mcp, scopes={"notes:write": "Write notes for you"})
        oauth.init_app(app)  # sets up mcp on app too

    It serves RFC 8414 metadata, the authorize, token, registration,
    revocation and JWKS endpoints under ``MCP_OAUTH_URL_PREFIX``, a consent
    page and a page of the user's connected clients; *mcp*'s HTTP surfaces
    then take the access tokens it issues (its auth backend becomes an
    :class:`~flask_mcp.oauth.tokens.OAuthTokenBackend`), and its Protected
    Resource Metadata names this server. ``MCP_AUTH_RESOURCE`` must be set.

    :param mcp: the MCP server the tokens are for; it must have no other auth backend.
    :param app: set up on *app* now.
    :param user_loader: returns the signed-in user (``None`` when nobody is); default: Flask-Login's ``current_user``.
    :param subject: the user's stable id (the tokens' ``sub``); default: ``user.get_id()``.
    :param allowed_scopes: ``f(user)``: the scopes that user may grant (``None``: all).
    :param display_name: ``f(user)``: the name the consent page greets.
    :param logout: signs the current user out, for the consent page's "Not you?"; default:
        Flask-Login's ``logout_user`` (with a ``user_loader`` of your own and no ``logout``, the
        page offers no way to switch accounts).
    :param scopes: ``{scope: description}``, added to ``MCP_OAUTH_SCOPES``.
    :param db: a Flask-SQLAlchemy ``SQLAlchemy``: its engine holds the tables; default: ``MCP_OAUTH_DATABASE_URI``.
    """

    def __init__(
        self,
        mcp: MCP,
        app: Flask | None = None,
        *,
        user_loader: t.Callable[[], t.Any] | None = None,
        subject: t.Callable[[t.Any], str] | None = None,
        allowed_scopes: t.Callable[[t.Any], t.Iterable[str] | None] | None = None,
        display_name: t.Callable[[t.Any], str] | None = None,
        logout: t.Callable[[], t.Any] | None = None,
        scopes: t.Mapping[str, str] | None = None,
        db: t.Any = None,
    ) -> None:
        if mcp.auth is not None and not isinstance(mcp.auth, OAuthTokenBackend):
            raise ConfigurationError("this MCP server already has an auth backend; OAuthServer provides its own")
        mcp.auth = OAuthTokenBackend()
        self.mcp = mcp
        self.users = UserHooks(user_loader, subject, allowed_scopes, display_name, logout)
        self.scope_descriptions = dict(scopes or {})
        self.db = db
        from .views import make_blueprint

        #: The endpoints, the consent page and its templates (``mcp_oauth/consent.html``).
        self.blueprint: Blueprint = make_blueprint()
        if app is not None:
            self.init_app(app)

    def init_app(self, app: Flask) -> None:
        """Set up the authorization server on *app* (and *mcp*, unless it is already).

        :raises ~flask_mcp.ConfigurationError: ``MCP_AUTH_RESOURCE`` unset, no ``SECRET_KEY``
            (the consent form's CSRF token is signed with it), or *mcp* set up on *app* without this backend.
        """
        existing = state_for(app, self.mcp)
        if existing is None:
            self.mcp.init_app(app)
        elif existing.auth is None or existing.auth.backend is not self.mcp.auth:
            raise ConfigurationError(
                "create OAuthServer(mcp) before mcp.init_app(app): the MCP server needs its backend"
            )
        if not app.secret_key:
            raise ConfigurationError("OAuthServer needs the app's SECRET_KEY: it signs the consent form's CSRF token")
        # The prefix in force on this app: given, or derived from the blueprint name for a further server.
        prefix = t.cast("MCPState", state_for(app, self.mcp)).settings.config_prefix
        settings = OAuthSettings.from_app(app, prefix)
        from .upstream_views import set_up_upstream

        # Upstream identity provider mode, when configured: the provider signs users in.
        settings, users = set_up_upstream(app, prefix, settings, self.users)
        store = OAuthStore(self._engine(app, settings))
        try:
            store.create_tables()
        except OperationalError as exc:
            # A database away at start is no reason to fail the worker: it answers 503 until it is back.
            warn_store_unreachable(exc, "the authorization server's database")
        keys = SigningKeys(store, settings.signing_keys)
        config = app.config
        also = [*config.get(f"{prefix}_AUTH_SCOPES_SUPPORTED", ())]
        also += [*config.get(f"{prefix}_AUTH_REQUIRED_SCOPES", ())]
        scopes = ScopeCatalog(self.mcp, {**settings.scopes, **self.scope_descriptions}, also)
        server = MCPAuthorizationServer(settings, store, keys, scopes)
        mcp_state = state_for(app, self.mcp)
        if mcp_state is not None and OperationalError not in mcp_state.store_errors:
            # The endpoint reads the database for each token it checks: while it is away, 503, never 500.
            mcp_state.store_errors = (*mcp_state.store_errors, OperationalError)
        server.clients = ClientDirectory(
            store,
            ClientDocumentSettings.from_app(app, prefix),
            mcp_state.ephemeral_cache if mcp_state is not None else None,
            mcp_state.server.limiter if mcp_state is not None else None,
        )
        server.init_app(app, query_client=server.clients, save_token=server._save_token)
        # init_app loads Authlib's default generator from app.config: ours takes its place again.
        server.register_token_generator("default", AccessTokenGenerator(server))
        if mcp_state is not None and mcp_state.rest_site is not None:
            _sign_in_docs_page(mcp_state, settings, store, scopes)
        limits, schedule = _upkeep(app, settings, store, mcp_state)
        app.extensions[STATE_KEY] = OAuthState(settings, store, keys, scopes, users, server, limits, schedule)
        # The approval page asks the same users: the one a token was issued to approves its calls.
        app.extensions[SIGN_IN] = OAuthSignIn(users, settings.login_view)
        from ..cli.commands import EXTRA_COMMANDS
        from .commands import oauth_group

        # ``flask mcp oauth`` on this app only.
        app.extensions.setdefault(EXTRA_COMMANDS, {})["oauth"] = oauth_group
        app.register_blueprint(self.blueprint, url_prefix=settings.url_prefix)
        from .views import add_well_known_routes

        add_well_known_routes(app, urlsplit(settings.issuer).path)

    def _engine(self, app: Flask, settings: OAuthSettings) -> t.Any:
        if self.db is not None:
            with app.app_context():
                return self.db.engine
        if settings.database_uri.startswith("sqlite:///"):
            import os

            os.makedirs(os.path.dirname(settings.database_uri[len("sqlite:///") :]) or ".", exist_ok=True)
        return create_engine(settings.database_uri)


def _upkeep(
    app: Flask, settings: OAuthSettings, store: OAuthStore, mcp_state: MCPState | None
) -> tuple[EndpointLimits, PruneSchedule | None]:
    # Counted and elected in the MCP server's ephemeral cache, shared by every worker that shares it.
    shared = mcp_state.server.limiter if mcp_state is not None else None
    limiter = shared if isinstance(shared, CacheRateLimiter) else CacheRateLimiter.in_process()
    limits = EndpointLimits(
        limiter, settings.rate_limit_failures, settings.rate_limit_client, settings.registration_rate_limit
    )
    if settings.prune_interval is None:
        return limits, None
    cache = mcp_state.ephemeral_cache if mcp_state is not None else None
    # The backend itself: a sweep's bookkeeping runs after the answer, outside the app context.
    backend = app.extensions["cache"][cache] if cache is not None else None
    schedule = PruneSchedule(store, settings.prune_interval, settings.prune_batch, settings.unused_client_ttl, backend)
    return limits, schedule


def _sign_in_docs_page(mcp_state: MCPState, settings: OAuthSettings, store: OAuthStore, scopes: ScopeCatalog) -> None:
    # The REST docs page signs in through this server as a public client it knows (docs_client).
    from .docs_client import docs_client_id, docs_redirect_uri, ensure_docs_client, initialisation

    site = t.cast("RestSite", mcp_state.rest_site)
    client_id = docs_client_id(mcp_state.mcp.blueprint.name)
    supported = scopes.supported()
    redirect_uri = docs_redirect_uri(settings.resource, site.mcp_path, site.prefix)
    # Written once the database answers: at once, or at its first use when it was away at start.
    store.after_tables(lambda: ensure_docs_client(store, client_id, redirect_uri, supported))
    site.sign_in = initialisation(client_id, settings.resource, supported)
