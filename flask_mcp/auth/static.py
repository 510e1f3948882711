"""Static bearer tokens and API keys from configuration."""

from __future__ import annotations

import hashlib
import hmac
import typing as t

from ..policies.principal import Principal
from .base import AuthBackend, bearer_token, parse_scopes

if t.TYPE_CHECKING:
    from flask import Request

__all__ = ["HASH_PREFIX", "StaticTokenBackend", "hash_token"]

#: A configured token starting with this is the SHA-256 hex digest of the real one.
HASH_PREFIX = "sha256:"

TokenEntry = t.Union[str, t.Mapping[str, t.Any]]


def hash_token(token: str) -> str:
    """``"sha256:<hex digest>"`` of *token*: what to put in configuration instead of the token itself."""
    return HASH_PREFIX + hashlib.sha256(token.encode()).hexdigest()


class StaticTokenBackend(AuthBackend):
    """A fixed set of bearer tokens (or API keys), each mapped to a subject and scopes.

    ::

        StaticTokenBackend({
            "s3cr3t": "ci-bot",                                   # subject only
            hash_token("other"): {"subject": "ada", "scopes": ["read", "admin"]},
        })

    Only SHA-256 digests are kept in memory; a presented token is hashed and
    compared with every digest using :func:`hmac.compare_digest`, so the time
    taken does not tell how close a guess was, nor which entry matched.

    :param tokens: token (or ``"sha256:<hex>"``) to a subject string, or to a
        mapping with ``subject`` and ``scopes`` (a list or a space-separated
        string). This is the shape of ``MCP_AUTH_TOKENS``.
    :param api_key_header: also accept the token in this header (for example
        ``"X-API-Key"``); ``None`` accepts ``Authorization: Bearer`` only.
    """

    def __init__(self, tokens: t.Mapping[str, TokenEntry], *, api_key_header: str | None = None) -> None:
        if not tokens:
            raise ValueError("StaticTokenBackend needs at least one token")
        self.api_key_header = api_key_header
        if api_key_header is not None:
            self.credential_hint = f"{self.credential_hint}, or the key in a {api_key_header!r} header"
        self._entries: list[tuple[bytes, Principal]] = []
        for token, entry in tokens.items():
            digest = (
                token[len(HASH_PREFIX) :] if token.startswith(HASH_PREFIX) else hash_token(token)[len(HASH_PREFIX) :]
            )
            try:
                raw = bytes.fromhex(digest)
            except ValueError:
                raise ValueError(f"{token[:12]}...: not a SHA-256 hex digest") from None
            if len(raw) != hashlib.sha256().digest_size:
                raise ValueError(f"{token[:12]}...: not a SHA-256 hex digest")
            self._entries.append((raw, _principal(entry)))

    def _presented(self, request: Request) -> str | None:
        token = bearer_token(request)
        if token is None and self.api_key_header is not None:
            token = request.headers.get(self.api_key_header) or None
        return token

    def has_credentials(self, request: Request) -> bool:
        """An ``Authorization`` header, or the API key header when one is configured."""
        return super().has_credentials(request) or bool(
            self.api_key_header is not None and request.headers.get(self.api_key_header)
        )

    def authenticate(self, request: Request) -> Principal | None:
        """The principal of the matching token, if any."""
        token = self._presented(request)
        if token is None:
            return None
        digest = hashlib.sha256(token.encode()).digest()
        found = None
        # Every entry is compared, without stopping at a match.
        for stored, principal in self._entries:
            if hmac.compare_digest(stored, digest):
                found = principal
        return found


def _principal(entry: TokenEntry) -> Principal:
    if isinstance(entry, str):
        return Principal(subject=entry)
    subject = entry.get("subject")
    if not subject:
        raise ValueError(f"a token entry needs a 'subject': {sorted(entry)}")
    claims = {key: value for key, value in entry.items() if key not in ("subject", "scopes")}
    return Principal(subject=str(subject), scopes=parse_scopes(entry.get("scopes")), claims=claims)
