"""Signing keys of the access tokens, and the JWKS that publishes their public halves.

Keys come from ``MCP_OAUTH_SIGNING_KEYS`` (private JWKs, the first signs),
or, when none is configured, one RSA key is generated on first use and kept
in the database, so every worker and restart signs with the same key.
Each process reads the stored keys again every :data:`RELOAD_INTERVAL`
seconds, so a key another process generated or rotated is published and
trusted everywhere within that time.
:meth:`SigningKeys.rotate` adds a new signing key; the retired ones stay in
the JWKS so tokens they signed verify until they expire.
"""

from __future__ import annotations

import json
import threading
import typing as t

from joserfc.jwk import KeySet, RSAKey, import_key
from sqlalchemy import select, update

from .models import SigningKey

if t.TYPE_CHECKING:
    from .store import OAuthStore

__all__ = ["ALGORITHM", "RELOAD_INTERVAL", "SigningKeys"]

#: The signing algorithm of the access tokens.
ALGORITHM = "RS256"
#: Seconds between two readings of the stored keys.
RELOAD_INTERVAL = 60.0


class SigningKeys:
    """The keys of one authorization server.

    :param store: where generated keys are kept.
    :param configured: private JWKs from configuration; when given, nothing is generated.
    """

    def __init__(self, store: OAuthStore, configured: t.Sequence[t.Mapping[str, t.Any]] = ()) -> None:
        self.store = store
        self._configured = [self._with_kid(dict(jwk)) for jwk in configured]
        self._lock = threading.Lock()
        # (private JWKs, published JWKS), and when they were read.
        self._cache: tuple[list[dict[str, t.Any]], dict[str, t.Any]] | None = None
        self._read_at = 0.0
        # The signing key set, and the private keys it was made from.
        self._signer: tuple[list[dict[str, t.Any]], KeySet] | None = None

    @staticmethod
    def _with_kid(jwk: dict[str, t.Any]) -> dict[str, t.Any]:
        if "d" not in jwk:
            raise ValueError("MCP_OAUTH_SIGNING_KEYS holds private keys (JWKs with 'd')")
        if not jwk.get("kid"):
            jwk["kid"] = import_key(jwk).thumbprint()
        return jwk

    def private_keys(self) -> list[dict[str, t.Any]]:
        """Every private key, the signing one first."""
        return self._load()[0]

    def signing_key(self) -> KeySet:
        """The key set (one key) access tokens are signed with now."""
        private = self.private_keys()
        memo = self._signer
        if memo is None or memo[0] is not private:
            memo = self._signer = (private, KeySet([import_key(private[0])]))
        return memo[1]

    def public_jwks(self) -> dict[str, t.Any]:
        """The published JWKS: the public half of every key. The same object until the keys change."""
        return self._load()[1]

    def rotate(self) -> str:
        """Generate a new signing key, retire the others; returns its ``kid``.

        :raises RuntimeError: the keys come from configuration (rotate them there).
        """
        if self._configured:
            raise RuntimeError("the signing keys come from MCP_OAUTH_SIGNING_KEYS: rotate them there")
        with self._lock:
            with self.store.session() as session:
                session.execute(update(SigningKey).values(retired=True))
                kid = self._generate(session)
            self._cache = None
        return kid

    def _load(self) -> tuple[list[dict[str, t.Any]], dict[str, t.Any]]:
        cache = self._cache
        if cache is not None and (self._configured or self.store.clock() - self._read_at < RELOAD_INTERVAL):
            return cache
        with self._lock:
            if self._cache is not None and self._cache is not cache:
                return self._cache
            if self._configured:
                private = self._configured
            else:
                with self.store.session() as session:
                    rows = session.scalars(
                        select(SigningKey).order_by(SigningKey.retired, SigningKey.created_at.desc())
                    ).all()
                    if not rows:
                        self._generate(session)
                        rows = session.scalars(select(SigningKey)).all()
                    private = [row.jwk for row in rows]
            if cache is not None and private == cache[0]:
                # Unchanged: keep the same objects, which the resource side has parsed already.
                self._read_at = self.store.clock()
                return cache
            public = t.cast("dict[str, t.Any]", KeySet([import_key(jwk) for jwk in private]).as_dict(private=False))
            for jwk in public["keys"]:
                jwk.setdefault("use", "sig")
                jwk.setdefault("alg", ALGORITHM)
            cache = self._cache = (private, public)
            self._read_at = self.store.clock()
            return cache

    def _generate(self, session: t.Any) -> str:
        key = RSAKey.generate_key(2048, private=True, auto_kid=True)
        jwk = key.as_dict(private=True)
        session.add(SigningKey(kid=key.kid, private_jwk=json.dumps(jwk), created_at=self.store.clock()))
        return str(key.kid)
