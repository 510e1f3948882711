"""Signing keys of the access tokens, and the JWKS that publishes their public halves.

Keys come from ``MCP_OAUTH_SIGNING_KEYS`` (private JWKs, the first signs),
or, when none is configured, one RSA key is generated on first use and kept
in the database, so every worker and restart signs with the same key.
Each generated key takes the next *generation* number, which the table keeps
unique: of several processes that find no key and generate one at once,
one insert wins and the others read the winner's key instead of signing
with their own; two concurrent rotations likewise make one new key.
Each process reads the stored keys again every :data:`RELOAD_INTERVAL`
seconds, and at once (at most every :data:`UNKNOWN_KID_INTERVAL` seconds,
whatever a flood of made-up ``kid`` values asks) when a token names a key
it does not know, so a key another process generated or rotated is trusted
here without waiting.
:meth:`SigningKeys.rotate` adds a new signing key; the retired ones stay in
the JWKS so tokens they signed verify until they expire.
"""

from __future__ import annotations

import json
import threading
import typing as t

from joserfc.jwk import KeySet, RSAKey, import_key
from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError

from .models import SigningKey

if t.TYPE_CHECKING:
    from .store import OAuthStore

__all__ = ["ALGORITHM", "RELOAD_INTERVAL", "UNKNOWN_KID_INTERVAL", "SigningKeys"]

#: The signing algorithm of the access tokens.
ALGORITHM = "RS256"
#: Seconds between two readings of the stored keys.
RELOAD_INTERVAL = 60.0
#: Least seconds between two readings forced by tokens naming a key this process does not know.
UNKNOWN_KID_INTERVAL = 5.0
#: Tries of a rotation that lost a race for its generation number to another process's.
_ROTATION_TRIES = 3


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
        # When an unknown kid last made this process read the stored keys.
        self._forced_at = float("-inf")
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
            for attempt in range(_ROTATION_TRIES):
                try:
                    with self.store.session() as session:
                        session.execute(update(SigningKey).values(retired=True))
                        latest = session.scalar(select(func.max(SigningKey.generation)))
                        kid = self._generate(session, (latest or 0) + 1)
                    break
                except IntegrityError:
                    # Another process took that generation in the meantime: number this key after it.
                    if attempt == _ROTATION_TRIES - 1:
                        raise
            self._cache = None
        return kid

    def knows(self, kid: object) -> bool:
        """Whether *kid* names a published key, reading the stored keys again first when it does not.

        That reading is what lets a token signed with a key another process
        has just generated verify here at once; it happens at most once every
        :data:`UNKNOWN_KID_INTERVAL` seconds, so tokens with made-up ``kid``
        values cost the database nothing more.
        """
        if not isinstance(kid, str) or not kid:
            return False
        if self._publishes(kid):
            return True
        if self._configured:
            return False
        now = self.store.clock()
        with self._lock:
            if now - self._forced_at < UNKNOWN_KID_INTERVAL:
                return self._publishes(kid)
            self._forced_at = now
            self._read_at = float("-inf")
        return self._publishes(kid)

    def _publishes(self, kid: str) -> bool:
        return any(jwk.get("kid") == kid for jwk in self.public_jwks()["keys"])

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
                private = self._stored()
                if not private:
                    self._create_first_key()
                    private = self._stored()
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

    def _stored(self) -> list[dict[str, t.Any]]:
        """The stored private keys, the signing one (newest unretired) first."""
        with self.store.session() as session:
            rows = session.scalars(select(SigningKey).order_by(SigningKey.retired, SigningKey.generation.desc())).all()
            return [row.jwk for row in rows]

    def _create_first_key(self) -> None:
        """Store a first key, unless another process stores its own first (generation 1 is unique)."""
        try:
            with self.store.session() as session:
                self._generate(session, 1)
        except IntegrityError:
            pass  # it did: the caller reads that one

    def _generate(self, session: t.Any, generation: int) -> str:
        key = RSAKey.generate_key(2048, private=True, auto_kid=True)
        jwk = key.as_dict(private=True)
        session.add(
            SigningKey(kid=key.kid, private_jwk=json.dumps(jwk), created_at=self.store.clock(), generation=generation)
        )
        session.flush()  # the uniqueness of the generation is checked here, inside the caller's try
        return str(key.kid)
