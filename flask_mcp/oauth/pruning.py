"""Removing what the authorization server no longer needs, so its tables hold the live rows and no more.

What goes, each in batches of at most *batch* rows per table and sweep:

- authorization codes an hour after they expired (a used code is kept that
  long so that a replay still finds it and revokes what it issued);
- access-token records and refresh tokens once expired (a rotated refresh
  token is kept until then, so that a replay still revokes its family);
- token families none of whose tokens is left, a while after they started
  (a family is written a moment before its first tokens);
- consents given to a client that no longer exists (a Client ID Metadata
  Document client is never stored: its consents stay);
- registered clients that never obtained a token within
  ``MCP_OAUTH_UNUSED_CLIENT_TTL`` (an operator's clients are never removed
  here).

:class:`PruneSchedule` runs a sweep after an answer of the token,
registration or revocation endpoint, at most once per
``MCP_OAUTH_PRUNE_INTERVAL`` across every worker sharing the cache, and
again at once while the last one found full batches; ``flask mcp oauth
prune`` runs one to the end, for cron.
"""

from __future__ import annotations

import dataclasses
import logging
import time
import typing as t

from sqlalchemy import ColumnElement, delete, exists, select

from .models import AccessTokenRecord, AuthorizationCode, Client, Consent, RefreshToken, TokenFamily

if t.TYPE_CHECKING:
    from sqlalchemy.orm import InstrumentedAttribute, Session

    from .store import OAuthStore

__all__ = ["PruneReport", "PruneSchedule", "prune"]

logger = logging.getLogger("flask_mcp.oauth")

#: Seconds a used code is kept after it expired: a replay must still find it to revoke its family.
USED_CODE_RETENTION = 3600
#: Seconds a family with no token left is kept after it started: its first tokens are written just after it.
FAMILY_MIN_AGE = 300


@dataclasses.dataclass(frozen=True)
class PruneReport:
    """Rows deleted by one sweep, per table."""

    codes: int = 0
    access_tokens: int = 0
    refresh_tokens: int = 0
    families: int = 0
    consents: int = 0
    clients: int = 0

    def counts(self) -> tuple[int, ...]:
        """The rows deleted from each table, in field order."""
        return tuple(int(count) for count in dataclasses.astuple(self))

    @property
    def total(self) -> int:
        """Rows deleted in all."""
        return sum(self.counts())

    def full(self, batch: int) -> bool:
        """Whether some table gave a whole batch (more may be left)."""
        return max(self.counts()) >= batch

    def __add__(self, other: PruneReport) -> PruneReport:
        return PruneReport(*(a + b for a, b in zip(self.counts(), other.counts(), strict=True)))


def _delete_some(session: Session, key: InstrumentedAttribute[t.Any], where: ColumnElement[bool], batch: int) -> int:
    # Through the primary key, a batch at a time: one sweep's cost stays bounded on a large backlog.
    model = key.class_
    doomed = select(key).where(where).limit(batch).scalar_subquery()
    result = session.execute(delete(model).where(key.in_(doomed)).execution_options(synchronize_session=False))
    return int(getattr(result, "rowcount", 0) or 0)


def prune(store: OAuthStore, *, unused_client_ttl: int | None, batch: int) -> PruneReport:
    """One sweep: at most *batch* rows of each table, in one transaction.

    :param unused_client_ttl: seconds after which a registered client that never obtained a token goes (``None``: kept).
    """
    now = store.clock()
    with store.session() as session:
        codes = _delete_some(
            session, AuthorizationCode.code_hash, AuthorizationCode.expires_at < now - USED_CODE_RETENTION, batch
        )
        access = _delete_some(session, AccessTokenRecord.jti, AccessTokenRecord.expires_at < now, batch)
        refresh = _delete_some(session, RefreshToken.token_hash, RefreshToken.expires_at < now, batch)
        orphan = (
            ~exists().where(RefreshToken.family_id == TokenFamily.family_id)
            & ~exists().where(AccessTokenRecord.family_id == TokenFamily.family_id)
            & (TokenFamily.created_at < now - FAMILY_MIN_AGE)
        )
        families = _delete_some(session, TokenFamily.family_id, orphan, batch)
        clients = 0
        if unused_client_ttl is not None:
            unused = (
                Client.used_at.is_(None) & (Client.origin != "operator") & (Client.issued_at < now - unused_client_ttl)
            )
            clients = _delete_some(session, Client.client_id, unused, batch)
        # A document client's id is its https URL and it is never stored: its consents are not dangling.
        dangling = ~exists().where(Client.client_id == Consent.client_id) & ~Consent.client_id.startswith("https://")
        consents = _delete_some(session, Consent.id, dangling, batch)
    return PruneReport(codes, access, refresh, families, consents, clients)


class Elector(t.Protocol):
    """The part of a cache that elects one sweeper: ``add`` succeeds for one caller only."""

    def add(self, key: str, value: t.Any, timeout: int | None = None) -> bool: ...
    def delete(self, key: str) -> bool: ...


class PruneSchedule:
    """When the next automatic sweep runs, agreed by every worker through the app's cache.

    :param store: the tables.
    :param interval: seconds between sweeps.
    :param batch: rows per table and sweep.
    :param unused_client_ttl: as :func:`prune`.
    :param cache: the backend of the app's ephemeral cache, usable outside a request
        (``None``: this process decides alone).
    """

    KEY = "flask_mcp:oauth:prune"

    def __init__(
        self, store: OAuthStore, interval: int, batch: int, unused_client_ttl: int | None, cache: Elector | None
    ) -> None:
        self.store = store
        self.interval = interval
        self.batch = batch
        self.unused_client_ttl = unused_client_ttl
        self.cache = cache
        self._next_ask = 0.0

    def due(self) -> bool:
        """Whether this caller runs the sweep now (and no other caller will until the interval passes).

        Each process asks the cache at most once per interval (plus once after each full batch it
        swept), not on every answer: the election costs a round trip.
        """
        now = time.monotonic()
        if now < self._next_ask:
            return False
        self._next_ask = now + self.interval
        if self.cache is not None:
            try:
                return bool(self.cache.add(self.KEY, 1, timeout=self.interval))
            except Exception:  # a cache that fails must not fail the answer: fall back to this process
                logger.warning("the cache did not answer; deciding the OAuth sweep in this process")
        return True

    def sweep(self) -> PruneReport | None:
        """One sweep (call it when :meth:`due` said so); never raises: it runs after an answer was sent."""
        try:
            report = prune(self.store, unused_client_ttl=self.unused_client_ttl, batch=self.batch)
        except Exception:
            logger.exception("the OAuth sweep failed; the next one tries again")
            return None
        if report.full(self.batch):
            # More is left: the next answer sweeps again rather than waiting a whole interval.
            self._next_ask = 0.0
            if self.cache is not None:
                try:
                    self.cache.delete(self.KEY)
                except Exception:
                    logger.warning("the cache did not answer; the next OAuth sweep waits for its interval")
        return report
