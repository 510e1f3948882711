"""The protocol every authentication backend follows, and helpers they share."""

from __future__ import annotations

import typing as t

from ..policies.principal import Principal

if t.TYPE_CHECKING:
    from flask import Request

__all__ = ["AuthBackend", "bearer_token", "parse_scopes", "to_principal"]


class AuthBackend:
    """Authenticates one HTTP request and describes how to do it.

    Subclass it and implement :meth:`authenticate`; the other methods have
    defaults that suit bearer tokens. Any object with the same methods works
    too (the extension only calls them).
    """

    #: The scheme named in the ``WWW-Authenticate`` challenge.
    scheme: str = "Bearer"
    #: Whether tokens are checked against this server's resource identifier
    #: (their audience). Such a backend needs ``MCP_AUTH_RESOURCE``: the
    #: extension refuses to start without it, since a value taken from the
    #: request would let a client pick the audience its token was minted for.
    checks_audience: bool = False

    #: How a client sends its credential, for the message of a 401.
    credential_hint: str = "send the access token in an 'Authorization: Bearer <token>' header"

    def configure(self, resource: str | None) -> None:
        """Called once when the app is set up, with ``MCP_AUTH_RESOURCE`` (``None`` when unset)."""

    def authenticate(self, request: Request) -> Principal | None:
        """The caller of *request*, or ``None`` when it carries no valid credential.

        Called for every request to a protected surface, inside its request
        context. Never raise for a bad credential: return ``None``.
        """
        raise NotImplementedError

    def has_credentials(self, request: Request) -> bool:
        """Whether *request* presented a credential at all.

        A request that did, but was refused, gets ``error="invalid_token"``
        in its challenge; one that did not is only told how to authenticate.
        """
        return bool(request.headers.get("Authorization"))

    def challenge(
        self,
        *,
        resource_metadata: str,
        scopes: t.Sequence[str] = (),
        error: str | None = None,
        description: str | None = None,
    ) -> str:
        """The ``WWW-Authenticate`` header value of a 401 or 403 answer.

        :param resource_metadata: absolute URL of the Protected Resource Metadata (RFC 9728).
        :param scopes: scopes that would let the request through (``scope=``).
        :param error: an RFC 6750 error code: ``invalid_token``, ``insufficient_scope``.
        :param description: a human-readable ``error_description``.
        """
        params = []
        if error:
            params.append(f'error="{error}"')
        if description:
            params.append(f'error_description="{_quote(description)}"')
        if scopes:
            params.append(f'scope="{_quote(" ".join(scopes))}"')
        params.append(f'resource_metadata="{_quote(resource_metadata)}"')
        return f"{self.scheme} " + ", ".join(params)

    def authorization_server_metadata(self) -> dict[str, t.Any] | None:
        """The metadata (RFC 8414) of the authorization server this app runs to issue its tokens, if any.

        ``None`` by default: the tokens come from elsewhere. The backend of
        :class:`~flask_mcp.oauth.OAuthServer` returns its document, from
        which the REST adapter's OpenAPI document declares the OAuth flows
        (Swagger UI's **Authorize** then gets a token there). Called inside
        a request context.
        """
        return None

    def metadata(self, base: dict[str, t.Any]) -> dict[str, t.Any]:
        """The Protected Resource Metadata document (RFC 9728), from the configured *base*.

        *base* already holds ``resource``, ``authorization_servers`` (when
        configured), ``scopes_supported`` and ``bearer_methods_supported``;
        override to add members (``resource_documentation``, signing
        algorithms, ...).
        """
        return base


def _quote(value: str) -> str:
    # A quoted-string (RFC 9110): backslash-escape what would end it early.
    return value.replace("\\", "\\\\").replace('"', '\\"')


def bearer_token(request: Request) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, if any (case-insensitive scheme)."""
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return None
    return token


def parse_scopes(value: t.Any) -> frozenset[str]:
    """Scopes from a space-separated string (``scope`` claim) or a list (``scp`` claim)."""
    if value is None:
        return frozenset()
    if isinstance(value, str):
        return frozenset(value.split())
    if isinstance(value, (list, tuple, set, frozenset)):
        return frozenset(str(item) for item in value)
    raise ValueError(f"scopes must be a space-separated string or a list, not {type(value).__name__}")


def to_principal(value: Principal | t.Mapping[str, t.Any] | None) -> Principal | None:
    """A :class:`~flask_mcp.Principal` from what a verifier returned.

    A mapping gives the subject as ``subject`` or ``sub``; scopes as
    ``scopes``, ``scope`` or ``scp``; expiry as ``expires_at`` or ``exp``;
    the whole mapping (or its ``claims`` member) becomes the claims.

    :raises ValueError: a mapping without a subject.
    """
    if value is None or isinstance(value, Principal):
        return value
    subject = value.get("subject", value.get("sub"))
    if subject is None or subject == "":
        raise ValueError("a verified token must name its subject ('subject' or 'sub')")
    scopes: t.Any = None
    for key in ("scopes", "scope", "scp"):
        if value.get(key) is not None:
            scopes = value[key]
            break
    expires = value.get("expires_at", value.get("exp"))
    return Principal(
        subject=str(subject),
        scopes=parse_scopes(scopes),
        claims=dict(value.get("claims", value)),
        expires_at=float(expires) if expires is not None else None,
        user=value.get("user"),
    )
