"""The authorization server's database: clients, codes, token families, consents.

Each operation is one short transaction. The ones a race could double
(redeeming a code, rotating a refresh token) are a single conditional
``UPDATE ... WHERE used_at IS NULL``: of two requests presenting the same
code or refresh token, exactly one sees its row change.
"""

from __future__ import annotations

import contextlib
import secrets
import time
import typing as t

from sqlalchemy import delete, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

from .models import AccessTokenRecord, AuthorizationCode, Base, Client, Consent, RefreshToken, TokenFamily, digest

__all__ = ["OAuthStore"]


class OAuthStore:
    """Reads and writes the tables of :mod:`flask_mcp.oauth.models` on *engine*.

    :param engine: the SQLAlchemy engine (Flask-SQLAlchemy's ``db.engine`` or the server's own).
    :param clock: seconds since the epoch; tests pass a fake one.
    """

    def __init__(self, engine: Engine, *, clock: t.Callable[[], float] = time.time) -> None:
        self.engine = engine
        self.clock = clock
        self._sessions = sessionmaker(engine, expire_on_commit=False)

    def create_tables(self) -> None:
        """Create the tables that do not exist yet."""
        Base.metadata.create_all(self.engine)

    @contextlib.contextmanager
    def session(self) -> t.Iterator[Session]:
        """One transaction: committed when the block ends, rolled back when it raises."""
        with self._sessions.begin() as session:
            yield session

    # -- clients ---------------------------------------------------------

    def add_client(self, client_id: str, secret: str | None, metadata: t.Mapping[str, t.Any]) -> Client:
        """Register a client; *secret* is kept as its digest."""
        client = Client(
            client_id=client_id,
            secret_hash=digest(secret) if secret else None,
            client_metadata=dict(metadata),
            issued_at=self.clock(),
        )
        with self.session() as session:
            session.add(client)
        return client

    def client(self, client_id: object) -> Client | None:
        """The client registered as *client_id*, if any."""
        if not isinstance(client_id, str) or not client_id or len(client_id) > 128:
            return None
        with self.session() as session:
            return session.get(Client, client_id)

    def forget_unused_clients(self, older_than: float) -> int:
        """Delete clients registered more than *older_than* seconds ago that never obtained a token."""
        with self.session() as session:
            result = session.execute(
                delete(Client).where(Client.used_at.is_(None), Client.issued_at < self.clock() - older_than)
            )
            return int(getattr(result, "rowcount", 0) or 0)

    # -- codes -----------------------------------------------------------

    def save_code(self, code: str, **fields: t.Any) -> None:
        """Keep a new authorization code (its digest) with what it is bound to."""
        with self.session() as session:
            session.add(AuthorizationCode(code_hash=digest(code), **fields))

    def redeem_code(self, code: object, client_id: str) -> AuthorizationCode | None:
        """The code, marked used, if it is unused, unexpired and *client_id*'s; else ``None``.

        A code presented again after its redemption revokes the tokens that
        redemption issued (RFC 6749 section 4.1.2): someone else holds it.
        """
        if not isinstance(code, str) or not code:
            return None
        key, now = digest(code), self.clock()
        with self.session() as session:
            claimed = session.execute(
                update(AuthorizationCode)
                .where(
                    AuthorizationCode.code_hash == key,
                    AuthorizationCode.client_id == client_id,
                    AuthorizationCode.used_at.is_(None),
                    AuthorizationCode.expires_at > now,
                )
                .values(used_at=now)
            )
            row = session.get(AuthorizationCode, key)
            if getattr(claimed, "rowcount", 0) == 1 and row is not None:
                return row
            if row is not None and row.used_at is not None and row.family_id is not None:
                self._revoke_family(session, row.family_id)
            return None

    def link_code(self, code: AuthorizationCode, family_id: str) -> None:
        """Remember the family the redemption of *code* started (to revoke it if the code comes back)."""
        with self.session() as session:
            session.execute(
                update(AuthorizationCode)
                .where(AuthorizationCode.code_hash == code.code_hash)
                .values(family_id=family_id)
            )

    def forget_expired(self) -> None:
        """Delete expired codes and refresh tokens, and the records of expired access tokens."""
        now = self.clock()
        with self.session() as session:
            # Used codes are kept a while longer: a replay must still find them to revoke their family.
            session.execute(delete(AuthorizationCode).where(AuthorizationCode.expires_at < now - 3600))
            session.execute(delete(RefreshToken).where(RefreshToken.expires_at < now))
            session.execute(delete(AccessTokenRecord).where(AccessTokenRecord.expires_at < now))

    # -- token families --------------------------------------------------

    def new_family(self, client_id: str, user_id: str | None, scope: str, resource: str) -> str:
        """Start a family of tokens; returns its id."""
        family_id = secrets.token_urlsafe(24)
        with self.session() as session:
            session.add(
                TokenFamily(
                    family_id=family_id,
                    client_id=client_id,
                    user_id=user_id,
                    scope=scope,
                    resource=resource,
                    created_at=self.clock(),
                )
            )
            session.execute(update(Client).where(Client.client_id == client_id).values(used_at=self.clock()))
        return family_id

    def family(self, family_id: str) -> TokenFamily | None:
        """The family *family_id*."""
        with self.session() as session:
            return session.get(TokenFamily, family_id)

    def save_refresh_token(
        self, token: str, family_id: str, client_id: str, user_id: str | None, **fields: t.Any
    ) -> None:
        """Keep a refresh token (its digest) in *family_id*."""
        with self.session() as session:
            session.add(
                RefreshToken(
                    token_hash=digest(token), family_id=family_id, client_id=client_id, user_id=user_id, **fields
                )
            )

    def save_access_token(
        self, jti: str, family_id: str | None, client_id: str, user_id: str | None, expires_at: float
    ) -> None:
        """Remember an issued access token's ``jti``."""
        with self.session() as session:
            session.add(
                AccessTokenRecord(
                    jti=jti, family_id=family_id, client_id=client_id, user_id=user_id, expires_at=expires_at
                )
            )
            session.execute(update(Client).where(Client.client_id == client_id).values(used_at=self.clock()))

    def refresh_token(self, token: object) -> RefreshToken | None:
        """The refresh token *token*, used or not."""
        if not isinstance(token, str) or not token:
            return None
        with self.session() as session:
            return session.get(RefreshToken, digest(token))

    def rotate_refresh_token(self, token: object, client_id: str) -> RefreshToken | None:
        """The live refresh token *token* of *client_id*, marked used; else ``None``.

        A refresh token presented after it was rotated is a replay: one of
        the two holders is not the client, so its whole family is revoked.
        """
        if not isinstance(token, str) or not token:
            return None
        key, now = digest(token), self.clock()
        with self.session() as session:
            row = session.get(RefreshToken, key)
            if row is None or row.client_id != client_id:
                return None
            family = session.get(TokenFamily, row.family_id)
            claimed = session.execute(
                update(RefreshToken)
                .where(
                    RefreshToken.token_hash == key,
                    RefreshToken.used_at.is_(None),
                    RefreshToken.revoked.is_(False),
                    RefreshToken.expires_at > now,
                )
                .values(used_at=now)
            )
            if getattr(claimed, "rowcount", 0) == 1 and family is not None and not family.revoked:
                session.refresh(row)
                return row
            if row.used_at is not None:
                self._revoke_family(session, row.family_id)
            return None

    def access_token_active(self, jti: object) -> bool:
        """Whether the access token *jti* was issued here and is not revoked."""
        if not isinstance(jti, str) or not jti:
            return False
        with self.session() as session:
            record = session.get(AccessTokenRecord, jti)
            return record is not None and not record.revoked

    def access_token(self, jti: str) -> AccessTokenRecord | None:
        """What is kept of the access token *jti*."""
        with self.session() as session:
            return session.get(AccessTokenRecord, jti)

    def revoke_access_token(self, jti: str) -> None:
        """Revoke one access token."""
        with self.session() as session:
            session.execute(update(AccessTokenRecord).where(AccessTokenRecord.jti == jti).values(revoked=True))

    def revoke_family(self, family_id: str) -> None:
        """Revoke every token of a family."""
        with self.session() as session:
            self._revoke_family(session, family_id)

    @staticmethod
    def _revoke_family(session: Session, family_id: str) -> None:
        session.execute(update(TokenFamily).where(TokenFamily.family_id == family_id).values(revoked=True))
        session.execute(update(RefreshToken).where(RefreshToken.family_id == family_id).values(revoked=True))
        session.execute(update(AccessTokenRecord).where(AccessTokenRecord.family_id == family_id).values(revoked=True))

    # -- consents --------------------------------------------------------

    def consent(self, user_id: str, client_id: str) -> Consent | None:
        """What *user_id* approved for *client_id*."""
        with self.session() as session:
            return session.scalars(
                select(Consent).where(Consent.user_id == user_id, Consent.client_id == client_id)
            ).first()

    def remember_consent(self, user_id: str, client_id: str, scopes: t.Iterable[str]) -> None:
        """Add *scopes* to what *user_id* approved for *client_id*."""
        with self.session() as session:
            row = session.scalars(
                select(Consent).where(Consent.user_id == user_id, Consent.client_id == client_id)
            ).first()
            if row is None:
                row = Consent(user_id=user_id, client_id=client_id, scope="", granted_at=self.clock())
                session.add(row)
            row.scope = " ".join(sorted(set(row.scope.split()) | set(scopes)))
            row.granted_at = self.clock()

    def connections(self, user_id: str) -> list[tuple[Consent, Client | None]]:
        """The clients *user_id* approved, newest first, with their registrations."""
        with self.session() as session:
            rows = session.scalars(
                select(Consent).where(Consent.user_id == user_id).order_by(Consent.granted_at.desc())
            ).all()
            return [(row, session.get(Client, row.client_id)) for row in rows]

    def revoke_connection(self, user_id: str, client_id: str) -> None:
        """Forget *user_id*'s consent to *client_id* and revoke every token it holds for that user."""
        with self.session() as session:
            session.execute(delete(Consent).where(Consent.user_id == user_id, Consent.client_id == client_id))
            families = session.scalars(
                select(TokenFamily.family_id).where(TokenFamily.user_id == user_id, TokenFamily.client_id == client_id)
            ).all()
            for family_id in families:
                self._revoke_family(session, family_id)
