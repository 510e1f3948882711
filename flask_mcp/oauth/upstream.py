"""Upstream identity provider mode: users sign in with an OpenID Connect provider, tokens are this server's.

An app without users of its own names a provider (``MCP_OAUTH_UPSTREAM_*``);
the authorization endpoint sends an anonymous user there (authorization code
with PKCE ``S256``, ``state`` and ``nonce``, through Authlib's Flask OAuth
client), and the callback validates the ID token (signature against the
provider's JWKS, ``iss``, ``aud``, ``exp``, ``nonce``, ``at_hash``). The
user's ``iss`` and ``sub`` become the local subject; the consent page and
everything after it are the authorization server's own. The provider's
access, refresh and ID tokens are dropped when the callback returns: they
are never stored, never put in the session and never reach an MCP client or
a tool. The Flask session holds only the sign-in's ``state``, PKCE verifier
and ``nonce`` until the callback (Authlib's state data), then who signed in.
"""

from __future__ import annotations

import dataclasses
import hashlib
import typing as t
from urllib.parse import urlsplit

from flask import Flask

from ..config.prefix import canonical_view
from ..policies.tool import ConfigurationError

__all__ = [
    "SIGNATURE_ALGORITHMS",
    "SIGN_IN_MAX_AGE",
    "UpstreamError",
    "UpstreamSettings",
    "UpstreamSignIn",
    "UpstreamUser",
    "local_subject",
]

#: The Flask session key of the signed-in upstream user (issuer, subject, name: no credential).
USER_KEY = "_mcp_oauth_upstream_user"
#: ID-token signature algorithms accepted, whatever the provider advertises (never ``none`` or a MAC).
SIGNATURE_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
#: Seconds a user has to complete a sign-in at the provider.
SIGN_IN_MAX_AGE = 600
#: Longest local subject kept as is (the database's user columns hold 255 characters).
_MAX_SUBJECT = 255


@dataclasses.dataclass(frozen=True)
class UpstreamSettings:
    """The ``MCP_OAUTH_UPSTREAM_*`` keys."""

    #: The provider's discovery document (``.../.well-known/openid-configuration``).
    discovery_url: str
    client_id: str
    #: ``None``: a public client (``token_endpoint_auth_method=none``).
    client_secret: str | None
    #: The scopes asked of the provider; always includes ``openid``.
    scope: str
    #: Seconds each request to the provider may take.
    timeout: float

    @classmethod
    def from_app(cls, app: Flask, prefix: str) -> UpstreamSettings | None:
        """The settings, or ``None`` when no provider is configured.

        :raises ~flask_mcp.ConfigurationError: a provider is named without a client id, or a value is malformed.
        """
        config = canonical_view(app.config, prefix)
        url = config.get("MCP_OAUTH_UPSTREAM_DISCOVERY_URL")
        if not url:
            return None
        parts = urlsplit(str(url))
        if parts.scheme not in ("https", "http") or not parts.netloc:
            raise ConfigurationError(f"MCP_OAUTH_UPSTREAM_DISCOVERY_URL must be an https URL, not {url!r}")
        client_id = config.get("MCP_OAUTH_UPSTREAM_CLIENT_ID")
        if not client_id:
            raise ConfigurationError("MCP_OAUTH_UPSTREAM_CLIENT_ID is needed with MCP_OAUTH_UPSTREAM_DISCOVERY_URL")
        scopes = str(config.get("MCP_OAUTH_UPSTREAM_SCOPE") or "openid").split()
        if "openid" not in scopes:
            scopes.insert(0, "openid")
        timeout = config.get("MCP_OAUTH_UPSTREAM_TIMEOUT")
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise ConfigurationError(f"MCP_OAUTH_UPSTREAM_TIMEOUT must be a positive number, not {timeout!r}")
        return cls(
            discovery_url=str(url),
            client_id=str(client_id),
            client_secret=config.get("MCP_OAUTH_UPSTREAM_CLIENT_SECRET") or None,
            scope=" ".join(dict.fromkeys(scopes)),
            timeout=float(timeout),
        )


@dataclasses.dataclass(frozen=True)
class UpstreamUser:
    """A user the provider signed in: its issuer and subject, and a name to greet."""

    issuer: str
    subject: str
    name: str

    def get_id(self) -> str:
        """The local subject (the tokens' ``sub``): see :func:`local_subject`."""
        return local_subject(self.issuer, self.subject)


def local_subject(issuer: str, subject: str) -> str:
    """The local user id of the provider *issuer*'s user *subject*: ``<issuer>#<subject>``.

    Namespaced by issuer, so a change of provider never hands one person's
    grants to another who has the same ``sub`` there. A pair too long for the
    database (OpenID allows a 255-character ``sub``) is kept as its digest.
    """
    value = f"{issuer}#{subject}"
    if len(value) <= _MAX_SUBJECT:
        return value
    return f"{issuer[:120]}#sha256:{hashlib.sha256(value.encode('utf-8')).hexdigest()}"


class UpstreamError(Exception):
    """A sign-in through the provider failed; shown to the user on an error page.

    :param error: an OAuth error code (``access_denied``, ``invalid_state``...).
    :param description: what went wrong, for the user.
    :param status: the HTTP status of the page (4xx, or 502 when the provider cannot be reached).
    """

    def __init__(self, error: str, description: str, status: int = 400) -> None:
        super().__init__(f"{error}: {description}")
        self.error = error
        self.description = description
        self.status = status


class UpstreamSignIn:
    """Authlib's Flask OAuth client for the provider, for one app.

    :param settings: the provider and this server's client there.
    :param app: the app (Authlib's registry is kept private to the sign-in, not in ``app.extensions``).
    """

    #: Authlib's name of the client (also its config-key prefix, hence unlikely to be in use).
    NAME = "flask_mcp_oauth_upstream"

    def __init__(self, settings: UpstreamSettings, app: Flask) -> None:
        from authlib.integrations.flask_client import OAuth

        self.settings = settings
        registry = OAuth()
        # The app's own Authlib registry (app.extensions) is left alone: this one is private.
        registry.app = app
        registry.register(
            self.NAME,
            client_id=settings.client_id,
            client_secret=settings.client_secret,
            server_metadata_url=settings.discovery_url,
            client_kwargs={
                "scope": settings.scope,
                "code_challenge_method": "S256",
                "default_timeout": settings.timeout,
                "token_endpoint_auth_method": "client_secret_basic" if settings.client_secret else "none",
            },
        )
        self.client: t.Any = registry.create_client(self.NAME)
        # A sign-in's state data lives this long in the session (Authlib's default is an hour).
        self.client.framework.expires_in = SIGN_IN_MAX_AGE

    def metadata(self) -> dict[str, t.Any]:
        """The provider's discovery document, checked once: its ``issuer`` is the discovery URL's.

        :raises UpstreamError: the document cannot be had or names another issuer (status 502).
        """
        import requests

        try:
            metadata = t.cast("dict[str, t.Any]", self.client.load_server_metadata())
        except (requests.RequestException, ValueError, TypeError, AttributeError) as error:
            # Unreachable, an error status, or a body that is not a JSON object.
            raise UpstreamError("temporarily_unavailable", "The sign-in provider cannot be reached.", 502) from error
        if not metadata.get("_mcp_checked"):
            issuer = metadata.get("issuer")
            expected = (
                f"{issuer}".rstrip("/") + "/.well-known/openid-configuration",
                _rfc8414_url(f"{issuer}"),
            )
            if not isinstance(issuer, str) or self.settings.discovery_url not in expected:
                self.client.server_metadata = {}
                raise UpstreamError(
                    "server_error", "The sign-in provider's discovery document names another issuer.", 502
                )
            for member in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
                if not isinstance(metadata.get(member), str):
                    self.client.server_metadata = {}
                    raise UpstreamError("server_error", f"The sign-in provider publishes no {member}.", 502)
            advertised = metadata.get("id_token_signing_alg_values_supported") or ["RS256"]
            allowed = [alg for alg in SIGNATURE_ALGORITHMS if isinstance(advertised, list) and alg in advertised]
            metadata["id_token_signing_alg_values_supported"] = allowed or ["RS256"]
            metadata["_mcp_checked"] = True
        return metadata


def _rfc8414_url(issuer: str) -> str:
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    return f"{parts.scheme}://{parts.netloc}/.well-known/openid-configuration{path}"
