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

from sqlalchemy import delete, func, inspect, select, text, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from .models import AccessTokenRecord, AuthorizationCode, Base, Client, Consent, RefreshToken, TokenFamily, digest

__all__ = ["OAuthStore"]

#: ``Client.origin`` as added to a table made before it existed.
_ORIGIN_COLUMN = "origin VARCHAR(16) NOT NULL DEFAULT 'registered'"


class OAuthStore:
    """Reads and writes the tables of :mod:`flask_mcp.oauth.models` on *engine*.

    :param engine: the SQLAlchemy engine (Flask-SQLAlchemy's ``db.engine`` or the server's own).
    :param clock: seconds since the epoch; tests pass a fake one.
    """

    def __init__(self, engine: Engine, *, clock: t.Callable[[], float] = time.time) -> None:
        self.engine = engine
        self.clock = clock
        #: Revocations made by this process: a token checked before the last one is checked again.
        self.revocations = 0
        self._sessions = sessionmaker(engine, expire_on_commit=False)
        # Whether the tables are known to exist: a database away at start gets them at its first use,
        # and then what setting up wanted to write (after_tables).
        self._tables_made = False
        self._after_tables: list[t.Callable[[], None]] = []

    def create_tables(self) -> None:
        """Create the tables that do not exist yet, and the columns later versions added to existing ones.

        :raises sqlalchemy.exc.OperationalError: the database cannot be reached; the tables are then
            made by the first transaction that reaches it (:meth:`session`).
        """
        Base.metadata.create_all(self.engine)
        known = {column["name"] for column in inspect(self.engine).get_columns(Client.__tablename__)}
        if "origin" not in known:
            # Clients stored before operators could make them all registered themselves.
            try:
                with self.engine.begin() as connection:
                    connection.execute(text(f"ALTER TABLE {Client.__tablename__} ADD COLUMN {_ORIGIN_COLUMN}"))
            except DBAPIError:
                # Another process starting at the same moment added it first.
                if "origin" not in {
                    column["name"] for column in inspect(self.engine).get_columns(Client.__tablename__)
                }:
                    raise
        self._tables_made = True
        waiting, self._after_tables = self._after_tables, []
        for write in waiting:
            write()

    def after_tables(self, write: t.Callable[[], None]) -> None:
        """Run *write* now if the tables exist, else as soon as a transaction has made them."""
        if self._tables_made:
            write()
        else:
            self._after_tables.append(write)

    def row_counts(self) -> dict[str, int]:
        """How many rows each table holds, by table name (what the sweep keeps in check)."""
        with self.session() as session:
            return {
                table.name: int(session.execute(select(func.count()).select_from(table)).scalar_one())
                for table in Base.metadata.sorted_tables
            }

    @contextlib.contextmanager
    def session(self) -> t.Iterator[Session]:
        """One transaction: committed when the block ends, rolled back when it raises.

        :raises sqlalchemy.exc.OperationalError: the database cannot be reached (answered 503).
        """
        if not self._tables_made:
            self.create_tables()
        with self._sessions.begin() as session:
            yield session

    # -- clients ---------------------------------------------------------

    def add_client(
        self, client_id: str, secret: str | None, metadata: t.Mapping[str, t.Any], *, origin: str = "registered"
    ) -> Client:
        """Register a client; *secret* is kept as its digest.

        :param origin: ``"registered"`` (it registered itself) or ``"operator"`` (the app's operator made it).
        """
        client = Client(
            client_id=client_id,
            secret_hash=digest(secret) if secret else None,
            client_metadata=dict(metadata),
            issued_at=self.clock(),
            origin=origin,
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

    def remove_client(self, client_id: str) -> bool:
        """Delete a client with its consents, and revoke every token it holds; whether it existed."""
        with self.session() as session:
            families = session.scalars(select(TokenFamily.family_id).where(TokenFamily.client_id == client_id)).all()
            for family_id in families:
                self._revoke_family(session, family_id)
            # Its own tokens (client credentials have no family).
            session.execute(
                update(AccessTokenRecord).where(AccessTokenRecord.client_id == client_id).values(revoked=True)
            )
            self.revocations += 1
            session.execute(delete(Consent).where(Consent.client_id == client_id))
            result = session.execute(delete(Client).where(Client.client_id == client_id))
            return bool(getattr(result, "rowcount", 0))

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

    def rotate_refresh_token(self, token: object, client_id: str, *, grace: float = 0) -> RefreshToken | None:
        """The live refresh token *token* of *client_id*, marked used; else ``None``.

        A refresh token presented after it was rotated is a replay: one of the
        two holders is not the client, so its whole family is revoked. Except
        within *grace* seconds of its rotation, when the same client presenting
        it again (two tabs or workers refreshing at once, a retry after a lost
        answer) gets it back, still marked used, to be answered with a new pair
        of the same family.
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
            live_family = family is not None and not family.revoked
            session.refresh(row)  # as it is now: another request may have rotated it a moment ago
            if getattr(claimed, "rowcount", 0) == 1 and live_family:
                return row
            if row.used_at is None:
                return None  # expired or revoked, never rotated
            if live_family and not row.revoked and row.expires_at > now and now - row.used_at < grace:
                return row
            self._revoke_family(session, row.family_id)
            return None

    def live_access_token(self, jti: object) -> AccessTokenRecord | None:
        """What is kept of the access token *jti*, if it was issued here and is not revoked."""
        if not isinstance(jti, str) or not jti:
            return None
        with self.session() as session:
            record = session.get(AccessTokenRecord, jti)
            return record if record is not None and not record.revoked else None

    def access_token(self, jti: str) -> AccessTokenRecord | None:
        """What is kept of the access token *jti*."""
        with self.session() as session:
            return session.get(AccessTokenRecord, jti)

    def revoke_access_token(self, jti: str) -> None:
        """Revoke one access token."""
        with self.session() as session:
            session.execute(update(AccessTokenRecord).where(AccessTokenRecord.jti == jti).values(revoked=True))
        self.revocations += 1

    def revoke_family(self, family_id: str) -> None:
        """Revoke every token of a family."""
        with self.session() as session:
            self._revoke_family(session, family_id)

    def _revoke_family(self, session: Session, family_id: str) -> None:
        self.revocations += 1
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
