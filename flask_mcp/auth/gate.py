"""What the HTTP surfaces do with a backend: 401 challenges, 403/429 mapping, RFC 9728 metadata."""

from __future__ import annotations

import math
import typing as t
from urllib.parse import urlsplit

from flask import current_app, request

from ..globals import current_state
from ..policies.principal import Principal
from ..policies.tool import ConfigurationError
from ..protocol.jsonrpc import PERMISSION_DENIED, RATE_LIMITED, SERVICE_UNAVAILABLE
from .base import AuthBackend

if t.TYPE_CHECKING:
    from flask import Request

    from ..config.settings import Settings

__all__ = [
    "METADATA_PATH",
    "TEST_PRINCIPAL_KEY",
    "AuthGate",
    "Unauthorized",
    "current_gate",
    "current_principal",
    "error_status",
]

#: Where Protected Resource Metadata lives (RFC 9728 section 3); the
#: endpoint's path is appended for the path-specific variant.
METADATA_PATH = "/.well-known/oauth-protected-resource"


#: Where the authenticated principal is kept for the rest of the request (the
#: WSGI environ, which copies of the request context made for worker threads share).
PRINCIPAL_KEY = "flask_mcp.policies.principal"
#: Where :class:`~flask_mcp.testing.MCPTestClient` (``principal=``) puts the caller a test
#: stands in for. Honoured only by an app in testing mode (``TESTING``), and a WSGI
#: environ key no HTTP client can set: only headers reach the environ, as ``HTTP_*``.
TEST_PRINCIPAL_KEY = "flask_mcp.testing.principal"


def current_principal() -> Principal | None:
    """The principal authenticated for the current request, if any; for use inside handlers."""
    return t.cast("Principal | None", request.environ.get(PRINCIPAL_KEY))


class Unauthorized(Exception):
    """The request carries no valid credential: answer 401 with :attr:`challenge`.

    :param message: what the client is told in the error body.
    :param challenge: the ``WWW-Authenticate`` header value.
    """

    def __init__(self, message: str, challenge: str) -> None:
        super().__init__(message)
        self.message = message
        self.challenge = challenge


class AuthGate:
    """A backend together with the ``MCP_AUTH_*`` settings, as the transports use it.

    :param backend: the configured :class:`~flask_mcp.auth.AuthBackend`.
    :param settings: the app's settings.

    :raises ~flask_mcp.ConfigurationError: the backend checks token
        audiences and ``MCP_AUTH_RESOURCE`` is not set.
    """

    def __init__(self, backend: AuthBackend, settings: Settings) -> None:
        if getattr(backend, "checks_audience", False) and not settings.auth_resource:
            raise ConfigurationError(
                "MCP_AUTH_RESOURCE must be set to this server's canonical URL "
                f'(e.g. "https://mcp.example.com/mcp"): {type(backend).__name__} checks each token\'s audience '
                "against it, and taking it from the request would let a client choose it"
            )
        configure = getattr(backend, "configure", None)
        if callable(configure):
            configure(settings.auth_resource)
        self.backend = backend
        self.settings = settings
        #: Path of the MCP endpoint, known once the blueprint is registered.
        self.mcp_path = settings.url_prefix

    def authenticate(self, req: Request) -> Principal:
        """The caller of *req*.

        :raises Unauthorized: no credential, or one the backend refused.
        """
        principal = req.environ.get(TEST_PRINCIPAL_KEY)
        if principal is None or not current_app.testing:
            principal = self.backend.authenticate(req)
        if principal is not None:
            req.environ[PRINCIPAL_KEY] = principal
            return principal
        if self.backend.has_credentials(req):
            raise Unauthorized(
                "Unauthorized: the access token is invalid or expired",
                self.challenge(error="invalid_token", scopes=self.settings.auth_required_scopes),
            )
        raise Unauthorized(
            f"Unauthorized: this server requires authentication; {self.backend.credential_hint}",
            self.challenge(scopes=self.settings.auth_required_scopes),
        )

    def challenge(self, *, error: str | None = None, scopes: t.Sequence[str] = ()) -> str:
        """A ``WWW-Authenticate`` value pointing at this server's metadata."""
        return self.backend.challenge(resource_metadata=self.metadata_url(), scopes=scopes, error=error)

    def resource_url(self) -> str:
        """This server's resource identifier: ``MCP_AUTH_RESOURCE``, or the endpoint's absolute URL.

        The fallback is built from the request, whose ``Host`` the guard has
        accepted; only backends that do not check audiences run without
        ``MCP_AUTH_RESOURCE``, so it is never compared with a token.
        """
        configured = self.settings.auth_resource
        if configured:
            return configured
        return request.host_url.rstrip("/") + request.script_root + self.mcp_path.rstrip("/")

    def metadata_url(self) -> str:
        """Absolute URL of the Protected Resource Metadata for :meth:`resource_url` (path inserted)."""
        parts = urlsplit(self.resource_url())
        return f"{parts.scheme}://{parts.netloc}{METADATA_PATH}{parts.path.rstrip('/')}"

    def metadata(self) -> dict[str, t.Any]:
        """The RFC 9728 document."""
        document: dict[str, t.Any] = {"resource": self.resource_url()}
        if self.settings.auth_authorization_servers:
            document["authorization_servers"] = list(self.settings.auth_authorization_servers)
        if self.settings.auth_scopes_supported:
            document["scopes_supported"] = list(self.settings.auth_scopes_supported)
        document["bearer_methods_supported"] = ["header"]
        return self.backend.metadata(document)


def current_gate() -> AuthGate:
    """The gate of the current app.

    :raises RuntimeError: the app has no auth backend.
    """
    gate: AuthGate | None = current_state().auth
    if gate is None:
        raise RuntimeError("no authentication backend is configured on this app")
    return gate


def error_status(error: t.Any, gate: AuthGate | None) -> tuple[int, dict[str, str]] | None:
    """Status and headers for a JSON-RPC error object the core returned, or ``None`` to keep 200.

    ``PERMISSION_DENIED`` is a 403 with an ``insufficient_scope`` challenge
    naming ``data.requiredScopes``; ``RATE_LIMITED`` is a 429 and
    ``SERVICE_UNAVAILABLE`` a 503, both with ``Retry-After``
    (``data.retryAfter`` rounded up to whole seconds).
    """
    if not isinstance(error, dict):
        return None
    code, data = error.get("code"), error.get("data")
    data = data if isinstance(data, dict) else {}
    if code == PERMISSION_DENIED:
        required = data.get("requiredScopes")
        scopes = [str(scope) for scope in required] if isinstance(required, list) else []
        if gate is not None:
            challenge = gate.challenge(error="insufficient_scope", scopes=scopes)
        else:
            challenge = 'Bearer error="insufficient_scope"' + (f', scope="{" ".join(scopes)}"' if scopes else "")
        return 403, {"WWW-Authenticate": challenge}
    if code in (RATE_LIMITED, SERVICE_UNAVAILABLE):
        retry = data.get("retryAfter")
        headers = {}
        if isinstance(retry, (int, float)) and not isinstance(retry, bool) and math.isfinite(retry):
            headers["Retry-After"] = str(max(0, math.ceil(retry)))
        return (429 if code == RATE_LIMITED else 503), headers
    return None
