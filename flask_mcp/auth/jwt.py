"""JWT access tokens verified locally with PyJWT (the ``jwt`` extra).

Keys come from configuration only: a PEM key, a JWK, or a JWKS document
given as a dict or a JSON file. Nothing is fetched over the network.

A token verified once is answered from memory until its ``exp``
(:mod:`flask_mcp.auth.verified`), as long as the key that verified it is
still one of the backend's.
"""

from __future__ import annotations

import json
import time
import typing as t
from pathlib import Path

from ..policies.principal import Principal
from .base import AuthBackend, bearer_token, parse_scopes
from .verified import VerifiedTokens

if t.TYPE_CHECKING:
    from flask import Request

__all__ = ["DEFAULT_ALGORITHMS", "JWTBackend"]

#: Asymmetric algorithms accepted unless told otherwise.
DEFAULT_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")

Key = t.Union[str, bytes, t.Mapping[str, t.Any]]


class JWTBackend(AuthBackend):
    """Verify ``Authorization: Bearer <JWT>`` access tokens.

    ::

        JWTBackend(issuer="https://auth.example.com", jwks="jwks.json")

    A token is accepted when its signature verifies with a configured key,
    its ``alg`` is in *algorithms*, ``iss`` is *issuer*, ``aud`` contains the
    audience (``MCP_AUTH_RESOURCE`` unless given, as RFC 8707 resource
    indicators make the authorization server write it), and ``exp`` has not
    passed (give or take *leeway*). The audience never comes from the
    request: without *audience*, the extension refuses to start unless
    ``MCP_AUTH_RESOURCE`` is set. The principal's subject is ``sub``; its
    scopes come from ``scope`` (space separated) or ``scp`` (a list).

    :param issuer: the expected ``iss``.
    :param audience: the expected ``aud``; ``None`` means ``MCP_AUTH_RESOURCE``.
    :param key: a public key as PEM text, or a JWK dict.
    :param jwks: a JWKS document (``{"keys": [...]}``), the path of a JSON
        file holding one, or a function returning one (asked for each token,
        so keys rotated at run time are taken up; it should cache); the
        token's ``kid`` picks the key.
    :param secret: a shared secret, which enables HS256/384/512; those are
        refused otherwise, since a public key must never be used as an HMAC secret.
    :param algorithms: the allowlist; ``none`` is always refused.
    :param leeway: seconds of clock skew tolerated on ``exp``, ``nbf`` and ``iat``.
    :raises ValueError: no key, ``none`` in the allowlist, or HS* without *secret*.
    :raises ImportError: PyJWT is not installed (``pip install flask-mcp[jwt]``).
    """

    def __init__(
        self,
        *,
        issuer: str | None,
        audience: str | t.Sequence[str] | None = None,
        key: Key | None = None,
        jwks: t.Mapping[str, t.Any] | str | Path | t.Callable[[], t.Mapping[str, t.Any]] | None = None,
        secret: str | bytes | None = None,
        algorithms: t.Sequence[str] | None = None,
        leeway: float = 0,
    ) -> None:
        try:
            import jwt  # noqa: F401  (checked here, so a missing extra fails at setup, not per request)
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("JWTBackend needs PyJWT: pip install 'flask-mcp[jwt]'") from exc
        if algorithms is None:
            algorithms = (*DEFAULT_ALGORITHMS, "HS256", "HS384", "HS512") if secret is not None else DEFAULT_ALGORITHMS
        algorithms = tuple(algorithms)
        if any(alg.lower() == "none" for alg in algorithms):
            raise ValueError('the "none" algorithm can never be allowed')
        if secret is None and any(alg.upper().startswith("HS") for alg in algorithms):
            raise ValueError("HS* algorithms need an explicit shared secret (secret=...)")
        if key is None and jwks is None and secret is None:
            raise ValueError("JWTBackend needs a key, a JWKS document or a shared secret")
        self.issuer = issuer
        self.audience = audience
        #: ``MCP_AUTH_RESOURCE``, the audience when none is given (set by :meth:`configure`).
        self.resource: str | None = None
        self.algorithms = algorithms
        self.leeway = leeway
        self._secret = secret
        self._key = _load_key(key) if key is not None else None
        self._jwks_source = jwks if callable(jwks) else None
        # The last document the function returned and its parsed keys: parsed again only when it changes.
        self._jwks_memo: tuple[t.Any, dict[str | None, t.Any]] | None = None
        self._jwks = _load_jwks(jwks) if jwks is not None and not callable(jwks) else None
        #: Tokens this process verified, with the algorithm, ``kid`` and audience that verified each.
        self.verified = VerifiedTokens(leeway=leeway)
        #: Seconds since the epoch: what a token's ``exp`` is compared with (tests pass a fake one).
        self.clock: t.Callable[[], float] = time.time

    @property
    def checks_audience(self) -> bool:  # type: ignore[override]
        """True unless an explicit *audience* was given: then ``MCP_AUTH_RESOURCE`` is the audience."""
        return self.audience is None

    def configure(self, resource: str | None) -> None:
        """Take ``MCP_AUTH_RESOURCE`` as the audience when none was given."""
        self.resource = resource

    def authenticate(self, request: Request) -> Principal | None:
        """The principal of a valid token, ``None`` for a missing or invalid one."""
        token = bearer_token(request)
        audience = self.audience if self.audience is not None else self.resource
        if token is None or audience is None:
            return None
        known = self.verified.get(token, self.clock())
        if known is not None:
            principal, (algorithm, kid, checked_for) = known
            try:
                still_keyed = self._key_for(algorithm, kid) is not None
            except ValueError:  # the key source no longer reads (an empty JWKS): nothing verifies it now
                still_keyed = False
            if checked_for == audience and still_keyed:
                return principal
            # Its key is no longer one of ours, or it was checked for another audience: verify it again.
            self.verified.drop(token)
        return self._verify(token, audience)

    def _verify(self, token: str, audience: str | t.Sequence[str]) -> Principal | None:
        import jwt

        try:
            header = jwt.get_unverified_header(token)
            algorithm = header.get("alg")
            if algorithm not in self.algorithms:
                return None
            key = self._key_for(algorithm, header.get("kid"))
            if key is None:
                return None
            claims = jwt.decode(
                token,
                key=key,
                algorithms=[algorithm],
                audience=audience,
                issuer=self.issuer,
                leeway=self.leeway,
                options={"require": ["exp", "sub"] + (["iss"] if self.issuer is not None else [])},
            )
            scopes = parse_scopes(claims["scope"] if claims.get("scope") is not None else claims.get("scp"))
        except (jwt.PyJWTError, ValueError, TypeError, KeyError):
            return None
        if float(claims["exp"]) + self.leeway <= self.clock():
            return None  # PyJWT compares with the system's time; this backend's clock decides too
        principal = Principal(
            subject=str(claims["sub"]),
            scopes=scopes,
            claims=claims,
            expires_at=float(claims["exp"]),
        )
        self.verified.put(token, principal, (algorithm, header.get("kid"), audience))
        return principal

    def _key_for(self, algorithm: str, kid: t.Any) -> t.Any:
        if algorithm.upper().startswith("HS"):
            return self._secret
        keys = self._jwks
        if self._jwks_source is not None:
            document = self._jwks_source()
            memo = self._jwks_memo
            if memo is None or memo[0] is not document:
                memo = self._jwks_memo = (document, _load_jwks(document))
            keys = memo[1]
        if keys is not None:
            if kid is not None:
                return keys.get(kid)
            # No kid: only an unambiguous one-key set can tell which key.
            return next(iter(keys.values())) if len(keys) == 1 else None
        return self._key


def _load_key(key: Key) -> t.Any:
    import jwt

    if isinstance(key, t.Mapping):
        return jwt.PyJWK(dict(key)).key
    return key


def _load_jwks(jwks: t.Mapping[str, t.Any] | str | Path) -> dict[str | None, t.Any]:
    import jwt

    document = jwks if isinstance(jwks, t.Mapping) else json.loads(Path(jwks).read_text())
    keys = document.get("keys")
    if not isinstance(keys, list) or not keys:
        raise ValueError('a JWKS document is {"keys": [...]} with at least one key')
    found: dict[str | None, t.Any] = {}
    for jwk in keys:
        if jwk.get("use", "sig") != "sig":
            continue
        found[jwk.get("kid")] = jwt.PyJWK(jwk).key
    return found
