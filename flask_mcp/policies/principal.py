"""Who is calling: the authenticated principal a transport hands the protocol core."""

from __future__ import annotations

import dataclasses
import typing as t

__all__ = ["Principal"]


@dataclasses.dataclass(frozen=True)
class Principal:
    """An authenticated caller, as an auth backend describes it.

    The protocol core only reads it (permissions, the ``user`` argument of
    tools); transports obtain it from the configured backend.
    """

    #: Stable identifier of the caller (a user id, a token's ``sub``, a key's name).
    subject: str
    #: OAuth scopes (or permissions) granted to the credential.
    scopes: frozenset[str] = frozenset()
    #: Claims of the token, or whatever the backend knows about the caller.
    claims: t.Mapping[str, t.Any] = dataclasses.field(default_factory=dict)
    #: When the credential expires (seconds since the epoch), if known.
    expires_at: float | None = None
    #: The app's own user object (Flask-Login's ``current_user``), if any.
    user: t.Any = None
    #: Whether a program acts for itself, with no user behind the call (an OAuth client's
    #: ``client_credentials`` token: :attr:`subject` is then the client's id).
    machine: bool = False

    def has_scopes(self, scopes: t.Iterable[str]) -> bool:
        """Whether every scope in *scopes* was granted."""
        return set(scopes) <= self.scopes
