"""The ``MCP_OAUTH_*`` keys of the authorization server, read once when it is set up."""

from __future__ import annotations

import dataclasses
import os
import typing as t
from urllib.parse import urlsplit

from flask import Flask

from ..config.prefix import canonical_view
from ..policies.ratelimit import Limit, parse_limit
from ..policies.tool import ConfigurationError

__all__ = ["OAuthSettings"]


@dataclasses.dataclass(frozen=True)
class OAuthSettings:
    """What the authorization server is configured with.

    Every field is read from the key of the same name, upper-cased, with the
    ``MCP_OAUTH_`` prefix (the server's ``config_prefix`` in place of ``MCP``).
    """

    #: This authorization server's issuer identifier (``iss`` of its tokens, ``issuer`` of its metadata).
    issuer: str
    #: The MCP server's canonical URL (``MCP_AUTH_RESOURCE``): the only ``resource`` tokens are issued for.
    resource: str
    #: Path under which the endpoints live (``/authorize``, ``/token``...).
    url_prefix: str
    #: SQLAlchemy URL of the database (when no Flask-SQLAlchemy ``db`` is given).
    database_uri: str
    access_token_ttl: int
    refresh_token_ttl: int
    code_ttl: int
    #: Whether RFC 7591 registration is served at all.
    registration_enabled: bool
    #: When set, registering needs ``Authorization: Bearer <this>`` (an initial access token).
    registration_token: str | None
    #: Registrations per client address.
    registration_rate_limit: Limit | None
    #: Refused requests per client address at the token, registration and revocation endpoints.
    rate_limit_failures: Limit | None
    #: Tokens issued per client (its requests wait once they are spent).
    rate_limit_client: Limit | None
    #: Seconds a rotated refresh token may be presented again by its client (0: never).
    refresh_grace: int
    #: Seconds between automatic sweeps (``None``: no automatic sweep).
    prune_interval: int | None
    #: Rows one sweep deletes per table at most.
    prune_batch: int
    #: Registered clients not used for this many seconds are deleted (``None``: kept).
    unused_client_ttl: int | None
    #: ``{scope: description}`` shown on the consent page and listed in the metadata.
    scopes: t.Mapping[str, str]
    #: Signing keys given in configuration (private JWKs); empty: generated and kept in the database.
    signing_keys: tuple[t.Mapping[str, t.Any], ...]
    #: The endpoint of the app's login view; ``None``: Flask-Login's ``login_view``.
    login_view: str | None
    #: Seconds a consent form stays valid.
    consent_max_age: int
    #: The name of the service the consent page says the user connects to (``None``: the MCP server's name).
    service_name: str | None = None

    @classmethod
    def from_app(cls, app: Flask, prefix: str) -> OAuthSettings:
        """Read the settings of the server with *prefix* from ``app.config`` (defaults already applied).

        :raises ~flask_mcp.ConfigurationError: ``MCP_AUTH_RESOURCE`` is not set, or a value is malformed.
        """
        config = canonical_view(app.config, prefix)
        resource = config.get("MCP_AUTH_RESOURCE")
        if not resource:
            raise ConfigurationError(
                "the OAuth authorization server needs MCP_AUTH_RESOURCE, this server's canonical URL "
                '(e.g. "https://mcp.example.com/mcp"): every token it issues is bound to it'
            )
        parts = urlsplit(resource)
        issuer = config.get("MCP_OAUTH_ISSUER") or f"{parts.scheme}://{parts.netloc}"
        issuer_parts = urlsplit(issuer)
        if issuer_parts.scheme not in ("https", "http") or not issuer_parts.netloc or issuer_parts.query:
            raise ConfigurationError(f"MCP_OAUTH_ISSUER must be an https URL without query, not {issuer!r}")
        prefix_path = "/" + str(config.get("MCP_OAUTH_URL_PREFIX") or "/oauth").strip("/")
        database = config.get("MCP_OAUTH_DATABASE_URI") or (
            "sqlite:///" + os.path.join(app.instance_path, "mcp_oauth.sqlite3")
        )
        keys = config.get("MCP_OAUTH_SIGNING_KEYS") or ()
        if isinstance(keys, t.Mapping):
            keys = keys.get("keys", [keys])
        scopes = config.get("MCP_OAUTH_SCOPES") or {}
        if not isinstance(scopes, t.Mapping):
            scopes = {str(scope): "" for scope in scopes}
        prune = config.get("MCP_OAUTH_PRUNE_INTERVAL")
        return cls(
            issuer=issuer.rstrip("/"),
            resource=resource,
            url_prefix=prefix_path,
            database_uri=str(database),
            access_token_ttl=_seconds(config, "MCP_OAUTH_ACCESS_TOKEN_TTL"),
            refresh_token_ttl=_seconds(config, "MCP_OAUTH_REFRESH_TOKEN_TTL"),
            code_ttl=_seconds(config, "MCP_OAUTH_CODE_TTL"),
            registration_enabled=bool(config.get("MCP_OAUTH_REGISTRATION", True)),
            registration_token=config.get("MCP_OAUTH_REGISTRATION_TOKEN") or None,
            registration_rate_limit=parse_limit(config.get("MCP_OAUTH_REGISTRATION_RATE_LIMIT")),
            rate_limit_failures=parse_limit(config.get("MCP_OAUTH_RATE_LIMIT_FAILURES")),
            rate_limit_client=parse_limit(config.get("MCP_OAUTH_RATE_LIMIT_CLIENT")),
            refresh_grace=_seconds(config, "MCP_OAUTH_REFRESH_GRACE", allow_zero=True),
            prune_interval=None if prune is None else _seconds(config, "MCP_OAUTH_PRUNE_INTERVAL"),
            prune_batch=_seconds(config, "MCP_OAUTH_PRUNE_BATCH", what="a positive number of rows"),
            unused_client_ttl=config.get("MCP_OAUTH_UNUSED_CLIENT_TTL"),
            scopes={str(key): str(value) for key, value in scopes.items()},
            signing_keys=tuple(dict(key) for key in keys),
            login_view=config.get("MCP_OAUTH_LOGIN_VIEW"),
            consent_max_age=_seconds(config, "MCP_OAUTH_CONSENT_MAX_AGE"),
            service_name=config.get("MCP_OAUTH_SERVICE_NAME") or None,
        )


def _seconds(
    config: t.Mapping[str, t.Any], key: str, *, allow_zero: bool = False, what: str = "a positive number of seconds"
) -> int:
    value = config.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < (0 if allow_zero else 1):
        raise ConfigurationError(f"{key} must be {what}{' or 0' if allow_zero else ''}, not {value!r}")
    return value
