"""Client ID Metadata Documents: a ``client_id`` that is an https URL names the client's own metadata.

The 2026-07-28 revision of MCP registers clients this way by default
(IETF draft-ietf-oauth-client-id-metadata-document): no registration call,
the client publishes a JSON document at a URL of its own and uses that URL
as its ``client_id``. When a request names such a ``client_id`` the server
fetches the document (:mod:`flask_mcp.oauth.safe_fetch`: https only, public
addresses only, bounded, no redirects), checks it, and uses it as the
client's registration for that request. Valid documents are kept in the
app's ephemeral cache for as long as their ``Cache-Control`` allows, within
``MCP_OAUTH_CLIENT_METADATA_CACHE_MIN`` and ``..._CACHE_MAX``; errors and
invalid documents are never kept.

Such clients are public: they authenticate at the token endpoint with
``none`` (PKCE proves the code's holder). A shared secret cannot exist for
them (the draft forbids ``client_secret_*``), and ``private_key_jwt`` is
refused as not supported here, so a client never believes it authenticated
with a key the server ignored.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import re
import typing as t
from urllib.parse import unquote, urlsplit

from authlib.oauth2.rfc6749 import InvalidClientError, OAuth2Error
from flask import Flask, current_app, has_request_context, request

from ..config.prefix import canonical_view
from ..policies.ratelimit import CacheRateLimiter, Limit, RateLimiter, parse_limit
from ..policies.tool import ConfigurationError
from .models import Client
from .redirects import redirect_problem
from .safe_fetch import FetchError, FetchPolicy, fetch_json

if t.TYPE_CHECKING:
    from flask_caching import Cache

    from .store import OAuthStore

__all__ = [
    "ClientDirectory",
    "ClientDocumentSettings",
    "DocumentProblem",
    "client_id_url_problem",
    "is_document_client_id",
    "validated_metadata",
]

#: A ``client_id`` that starts like a URL is looked up as a document, never in the table of registered clients.
_URL_LIKE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
#: Longest ``client_id`` URL: the tables keep client ids in 128 characters.
MAX_URL_LENGTH = 128
#: The members kept of a document (RFC 7591 client metadata a public client uses).
_KEPT = (
    "client_id",
    "client_name",
    "client_uri",
    "logo_uri",
    "tos_uri",
    "policy_uri",
    "redirect_uris",
    "grant_types",
    "response_types",
    "token_endpoint_auth_method",
    "scope",
    "software_id",
    "software_version",
)
_GRANTS = frozenset({"authorization_code", "refresh_token"})
_CACHE_KEY = "oauth-cimd:"


class DocumentProblem(InvalidClientError):  # type: ignore[misc]
    """``invalid_client``: the ``client_id`` URL or the document there cannot be used; the description says why."""


@dataclasses.dataclass(frozen=True)
class ClientDocumentSettings:
    """The ``MCP_OAUTH_CLIENT_METADATA_*`` keys (the server's ``config_prefix`` in place of ``MCP``)."""

    #: Whether ``client_id`` URLs are fetched at all (``MCP_OAUTH_CLIENT_METADATA_DOCUMENTS``).
    enabled: bool
    #: The fetch's bounds, CA bundle and loopback permission.
    policy: FetchPolicy
    #: Seconds a document is kept at least (when its headers allow caching) and at most.
    cache_min: int
    cache_max: int
    #: Fetches per client address.
    rate_limit: Limit | None

    @classmethod
    def from_app(cls, app: Flask, prefix: str) -> ClientDocumentSettings:
        """Read the settings from ``app.config``.

        :raises ~flask_mcp.ConfigurationError: a malformed value, or loopback allowed outside testing mode.
        """
        config = canonical_view(app.config, prefix)
        allow_loopback = bool(config.get("MCP_OAUTH_CLIENT_METADATA_ALLOW_LOOPBACK", False))
        if allow_loopback and not app.testing:
            raise ConfigurationError(
                "MCP_OAUTH_CLIENT_METADATA_ALLOW_LOOPBACK is for tests only: set TESTING = True, or leave it off "
                "(a client_id URL must never make the server fetch from its own loopback interface)"
            )
        timeout = config.get("MCP_OAUTH_CLIENT_METADATA_TIMEOUT", 5)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout <= 60:
            raise ConfigurationError(f"MCP_OAUTH_CLIENT_METADATA_TIMEOUT is seconds in (0, 60], not {timeout!r}")
        numbers = {}
        for key in ("MAX_BYTES", "CACHE_MIN", "CACHE_MAX"):
            value = config.get(f"MCP_OAUTH_CLIENT_METADATA_{key}")
            if isinstance(value, bool) or not isinstance(value, int) or value < (1 if key == "MAX_BYTES" else 0):
                raise ConfigurationError(f"MCP_OAUTH_CLIENT_METADATA_{key} must be a whole number, not {value!r}")
            numbers[key] = value
        if numbers["CACHE_MIN"] > numbers["CACHE_MAX"]:
            raise ConfigurationError("MCP_OAUTH_CLIENT_METADATA_CACHE_MIN is above MCP_OAUTH_CLIENT_METADATA_CACHE_MAX")
        bundle = config.get("MCP_OAUTH_CLIENT_METADATA_CA_BUNDLE")
        policy = FetchPolicy(numbers["MAX_BYTES"], float(timeout), allow_loopback, str(bundle) if bundle else None)
        return cls(
            enabled=bool(config.get("MCP_OAUTH_CLIENT_METADATA_DOCUMENTS", True)),
            policy=policy,
            cache_min=numbers["CACHE_MIN"],
            cache_max=numbers["CACHE_MAX"],
            rate_limit=parse_limit(config.get("MCP_OAUTH_CLIENT_METADATA_RATE_LIMIT")),
        )


def is_document_client_id(client_id: object) -> bool:
    """Whether *client_id* is written as a URL (and so names a metadata document, never a registered client)."""
    return isinstance(client_id, str) and bool(_URL_LIKE.match(client_id))


def client_id_url_problem(url: str) -> str | None:
    """Why *url* is not a Client Identifier URL (the draft's section 3), or ``None`` when it is one."""
    if len(url) > MAX_URL_LENGTH:
        return f"a client_id URL has at most {MAX_URL_LENGTH} characters"
    if not url.isascii() or any(ord(char) < 33 or char in '"<>\\^`{|}' for char in url):
        return "a client_id URL is ASCII without spaces or control characters"
    parts = urlsplit(url)
    if parts.scheme != "https" or not url.startswith("https://"):
        return "a client_id URL must be an https URL"
    if "@" in parts.netloc or not parts.hostname:
        return "a client_id URL has a host and no user info"
    try:
        parts.port  # noqa: B018  (raises on a malformed port)
    except ValueError:
        return "a client_id URL's port is a number from 1 to 65535"
    if "#" in url:
        return "a client_id URL has no fragment"
    if not parts.path or parts.path == "/":
        return "a client_id URL has a path (https://host/path/to/client.json)"
    if any(unquote(segment) in (".", "..") for segment in parts.path.split("/")):
        return "a client_id URL has no '.' or '..' path segments"
    return None


def _string(document: t.Mapping[str, t.Any], name: str, limit: int = 2000) -> str | None:
    value = document.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > limit:
        raise FetchError(f"{name} must be a string of at most {limit} characters")
    return value


def _strings(document: t.Mapping[str, t.Any], name: str) -> list[str] | None:
    value = document.get(name)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value) or len(value) > 20:
        raise FetchError(f"{name} must be a list of at most 20 strings")
    return list(value)


def validated_metadata(url: str, document: object) -> dict[str, t.Any]:
    """The client metadata of *document*, fetched from *url*, once it is checked.

    :raises FetchError: why the document cannot be this client's registration.
    """
    if not isinstance(document, dict):
        raise FetchError("the document must be a JSON object")
    if document.get("client_id") != url:
        raise FetchError("the document's client_id must be exactly the URL it was fetched from")
    for forbidden in ("client_secret", "client_secret_expires_at"):
        if forbidden in document:
            raise FetchError(f"a client metadata document must not hold {forbidden}")
    method = _string(document, "token_endpoint_auth_method", 64) or "none"
    if method == "private_key_jwt":
        raise FetchError("private_key_jwt is not supported by this server: publish token_endpoint_auth_method none")
    if method != "none":
        raise FetchError(f"token_endpoint_auth_method {method!r} cannot work without a registration: use none")
    name = _string(document, "client_name", 200)
    if not name or not name.strip():
        raise FetchError("the document must have a client_name")
    uris = _strings(document, "redirect_uris")
    if not uris:
        raise FetchError("the document must list its redirect_uris")
    for uri in uris:
        problem = redirect_problem(uri)
        if problem is not None:
            raise FetchError(f"redirect_uris: {problem}")
    grants = _strings(document, "grant_types") or ["authorization_code"]
    if not set(grants) <= _GRANTS or "authorization_code" not in grants:
        raise FetchError("grant_types of a public client are authorization_code and refresh_token")
    responses = _strings(document, "response_types") or ["code"]
    metadata: dict[str, t.Any] = {key: document[key] for key in _KEPT if key in document}
    for key in ("client_uri", "logo_uri", "tos_uri", "policy_uri", "scope", "software_id", "software_version"):
        value = _string(document, key)
        if key.endswith("_uri") and value is not None and urlsplit(value).scheme != "https":
            metadata.pop(key)  # shown or linked on the consent page: https only
    metadata.update(
        client_name=name.strip(),
        redirect_uris=uris,
        grant_types=grants,
        response_types=responses,
        token_endpoint_auth_method="none",
    )
    return metadata


class ClientDirectory:
    """Authlib's ``query_client``: registered clients from the database, URL client ids from their documents.

    :param store: the registered clients.
    :param settings: how documents are fetched and kept.
    :param cache: the app's ephemeral flask-caching cache (``None``: nothing is kept, every use fetches).
    :param limiter: counts fetches per client address (``None``: counted in this process).
    """

    def __init__(
        self,
        store: OAuthStore,
        settings: ClientDocumentSettings,
        cache: Cache | None,
        limiter: RateLimiter | None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.cache = cache
        self.limiter: RateLimiter = limiter or CacheRateLimiter.in_process()

    def __call__(self, client_id: object) -> Client | None:
        if self.settings.enabled and is_document_client_id(client_id):
            return self.document_client(t.cast(str, client_id))
        return self.store.client(client_id)

    def document_client(self, url: str) -> Client:
        """The client whose metadata document is at *url*.

        :raises DocumentProblem: the URL or the document cannot be used (the description says why).
        :raises OAuth2Error: ``slow_down``, too many fetches from this address.
        """
        problem = client_id_url_problem(url)
        if problem is not None:
            raise DocumentProblem(description=problem)
        key = _CACHE_KEY + hashlib.sha256(url.encode()).hexdigest()
        kept = self.cache.get(key) if self.cache is not None else None
        if isinstance(kept, dict) and kept.get("client_id") == url:
            return self._client(url, kept)
        self._count_fetch()
        policy = self.settings.policy
        if policy.allow_loopback and not current_app.testing:
            policy = dataclasses.replace(policy, allow_loopback=False)
        try:
            fetched = fetch_json(url, policy)
            metadata = validated_metadata(url, fetched.document)
        except FetchError as exc:
            raise DocumentProblem(description=f"the client metadata document at {url} cannot be used: {exc}") from exc
        lifetime = self._lifetime(fetched.max_age)
        if self.cache is not None and lifetime > 0:
            self.cache.set(key, metadata, timeout=lifetime)
        return self._client(url, metadata)

    def _lifetime(self, max_age: int | None) -> int:
        if max_age == 0:
            return 0  # no-store, no-cache, max-age=0: the document's owner asked for no copy
        wanted = self.settings.cache_min if max_age is None else max_age
        return min(max(wanted, self.settings.cache_min), self.settings.cache_max)

    def _count_fetch(self) -> None:
        limit = self.settings.rate_limit
        if limit is None:
            return
        address = request.remote_addr if has_request_context() else None
        wait = self.limiter.hit(f"oauth-cimd:{address}", limit)
        if wait is not None:
            raise _SlowDown(
                description=f"too many client metadata documents fetched for this address; retry in {math.ceil(wait)} s"
            )

    def _client(self, url: str, metadata: dict[str, t.Any]) -> Client:
        # Never added to a database session: the document is the registration.
        return Client(client_id=url, secret_hash=None, client_metadata=dict(metadata), issued_at=self.store.clock())


class _SlowDown(OAuth2Error):  # type: ignore[misc]
    error = "slow_down"
    status_code = 429
