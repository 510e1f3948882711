"""State the client carries for us: the sealed ``requestState`` of input rounds.

Between the rounds of a modern ``input_required`` exchange the server keeps
nothing; the answers gathered so far travel with the client instead,
signed with itsdangerous and timestamped, so that any process or host that
shares the key can open them, and nobody else can forge or alter them.

The key is ``MCP_REQUEST_STATE_SECRET``, else the app's ``SECRET_KEY``,
else a random key kept in the shared store: every process that shares the
store (Redis for several workers or hosts) shares the key, with nothing to
configure.
"""

from __future__ import annotations

import secrets
import typing as t

from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer

from ..core.rounds import StateRejected

if t.TYPE_CHECKING:
    from flask_caching import Cache

__all__ = ["KEY_CACHE_KEY", "SignedState", "shared_key"]

#: Where the generated key lives in the store when no secret is configured.
KEY_CACHE_KEY = "request-state-key"
_SALT = "flask_mcp.request-state"


class SignedState:
    """A :class:`~flask_mcp.core.rounds.Sealer` built on itsdangerous.

    :param secret: the signing key, several (newest first, to rotate keys),
        or a function that returns the key when it is first needed (so that
        a key kept in the store is not read before the store is up).
    :param max_age: seconds a sealed state stays valid (``MCP_REQUEST_STATE_TTL``).
    """

    def __init__(self, secret: str | bytes | t.Sequence[str | bytes] | t.Callable[[], str], max_age: int) -> None:
        self._secret = secret
        self._serializer: URLSafeTimedSerializer | None = None
        self.max_age = max_age

    @property
    def serializer(self) -> URLSafeTimedSerializer:
        """The signing serializer, made on first use."""
        if self._serializer is None:
            secret = self._secret() if callable(self._secret) else self._secret
            keys = list(secret) if isinstance(secret, (list, tuple)) else [secret]
            # itsdangerous signs with the last key and accepts every one of them.
            self._serializer = URLSafeTimedSerializer(list(reversed(keys)), salt=_SALT)
        return self._serializer

    def seal(self, payload: dict[str, t.Any]) -> str:
        """*payload*, compressed when that is shorter, signed and timestamped."""
        return self.serializer.dumps(payload)

    def open(self, token: str) -> dict[str, t.Any]:
        """The payload of *token*.

        :raises StateRejected: expired, or forged or altered.
        """
        try:
            payload = self.serializer.loads(token, max_age=self.max_age)
        except SignatureExpired:
            raise StateRejected(
                f"requestState has expired (it is valid for {self.max_age} seconds); send the request again without it"
            ) from None
        except BadSignature:
            raise StateRejected("requestState failed its integrity check") from None
        if not isinstance(payload, dict):
            raise StateRejected("requestState failed its integrity check")
        return payload


def shared_key(cache: Cache) -> str:
    """The signing key kept in *cache*, made on first use by whichever process comes first."""
    key = cache.get(KEY_CACHE_KEY)
    if isinstance(key, str):
        return key
    # add() keeps the first writer's key when two processes race.
    cache.add(KEY_CACHE_KEY, secrets.token_urlsafe(32), timeout=0)
    key = cache.get(KEY_CACHE_KEY)
    if not isinstance(key, str):
        raise RuntimeError("the store did not keep the request-state key; set MCP_REQUEST_STATE_SECRET")
    return key
