"""Backends that reuse an authentication the app already has.

A token-verifier callable, Flask-Login's ``current_user``, a Flask-HTTPAuth
object, or any function that finds the user of a request.
"""

from __future__ import annotations

import typing as t

from ..policies.principal import Principal
from .base import AuthBackend, bearer_token, to_principal
from .static import hash_token

if t.TYPE_CHECKING:
    from flask import Request

__all__ = ["FlaskLoginBackend", "HTTPAuthBackend", "TokenVerifierBackend", "UserFunctionBackend"]

ScopesOf = t.Callable[[t.Any], t.Iterable[str]]
Verified = t.Union[Principal, t.Mapping[str, t.Any], None]


class TokenVerifierBackend(AuthBackend):
    """Bearer tokens checked by your own function (introspection, a database lookup, ...).

    :param verify: takes the token, returns a :class:`~flask_mcp.Principal`,
        a claims mapping (``sub``/``subject``, ``scope``/``scp``/``scopes``,
        ``exp``) or ``None`` for an invalid token.
    :param checks_audience: set it when *verify* checks the token's audience
        (an introspection answer's ``aud``) against ``MCP_AUTH_RESOURCE``:
        the extension then refuses to start without that key, and the value
        is in :attr:`resource`.
    """

    def __init__(self, verify: t.Callable[[str], Verified], *, checks_audience: bool = False) -> None:
        self.verify = verify
        self.checks_audience = checks_audience
        #: ``MCP_AUTH_RESOURCE``, the audience *verify* compares with.
        self.resource: str | None = None

    def configure(self, resource: str | None) -> None:
        """Keep ``MCP_AUTH_RESOURCE`` for the verifier."""
        self.resource = resource

    def authenticate(self, request: Request) -> Principal | None:
        """Hand the bearer token to the verifier."""
        token = bearer_token(request)
        return to_principal(self.verify(token)) if token is not None else None


def _subject_of(user: t.Any) -> str:
    get_id = getattr(user, "get_id", None)
    if callable(get_id):
        return str(get_id())
    for name in ("id", "username", "name"):
        value = user.get(name) if isinstance(user, t.Mapping) else getattr(user, name, None)
        if value is not None:
            return str(value)
    return str(user)


class UserFunctionBackend(AuthBackend):
    """Whatever user your own function finds for a request.

    :param func: takes the request and returns a user object, a
        :class:`~flask_mcp.Principal`, a claims mapping (one with ``sub`` or
        ``subject``), or ``None``.
    :param subject: the subject of a user object; by default its
        ``get_id()``, ``id``, ``username`` or ``name``.
    :param scopes: the scopes of a user object; none by default.
    """

    def __init__(
        self,
        func: t.Callable[[Request], t.Any],
        *,
        subject: t.Callable[[t.Any], str] = _subject_of,
        scopes: ScopesOf | None = None,
    ) -> None:
        self.func = func
        self.subject = subject
        self.scopes = scopes

    def authenticate(self, request: Request) -> Principal | None:
        """Call the function and describe the user it found."""
        return self._principal(self.func(request))

    def _principal(self, user: t.Any) -> Principal | None:
        if user is None or user is False:
            return None
        if isinstance(user, Principal) or (isinstance(user, t.Mapping) and ("sub" in user or "subject" in user)):
            return to_principal(user)
        scopes = frozenset(self.scopes(user)) if self.scopes is not None else frozenset()
        return Principal(subject=self.subject(user), scopes=scopes, user=user)


class FlaskLoginBackend(UserFunctionBackend):
    """Flask-Login's ``current_user``: its session cookie, or its ``request_loader``.

    The subject is ``current_user.get_id()``; anonymous users are refused.

    :param scopes: the scopes of a user (``lambda user: user.permissions``); none by default.
    """

    credential_hint = "sign in first: the app's session cookie (or its Flask-Login request loader) identifies you"

    def __init__(self, scopes: ScopesOf | None = None) -> None:
        super().__init__(self._current_user, scopes=scopes)

    @staticmethod
    def _current_user(request: Request) -> t.Any:
        from flask_login import current_user  # type: ignore[import-untyped]

        user = current_user._get_current_object()
        return user if user is not None and user.is_authenticated else None


class HTTPAuthBackend(UserFunctionBackend):
    """A Flask-HTTPAuth object (``HTTPBasicAuth``, ``HTTPTokenAuth``, ``HTTPDigestAuth``).

    Runs its ``get_auth()`` and ``authenticate()`` as ``login_required``
    would, so its ``verify_password`` / ``verify_token`` callbacks decide,
    and its ``current_user()`` then works inside tools too. The challenge
    uses the object's scheme (``Basic``, ``Bearer``, ...).

    :param auth: the Flask-HTTPAuth object.
    :param scopes: the scopes of a user; by default its ``get_user_roles``
        callback, if it has one.
    """

    def __init__(self, auth: t.Any, scopes: ScopesOf | None = None) -> None:
        roles = getattr(auth, "get_user_roles_callback", None)
        if scopes is None and roles is not None:
            scopes = _roles(roles)
        super().__init__(self._user, scopes=scopes)
        self.auth = auth
        self.scheme = str(getattr(auth, "scheme", None) or "Bearer")
        header = getattr(auth, "header", None) or "Authorization"
        self.credential_hint = f"send your credentials in an '{header}: {self.scheme} ...' header"

    def has_credentials(self, request: Request) -> bool:
        """Whether the object finds credentials of its scheme (or custom header)."""
        return self.auth.get_auth() is not None

    def _user(self, request: Request) -> t.Any:
        from flask import g

        credentials = self.auth.get_auth()
        if credentials is None:
            return None
        user = self.auth.authenticate(credentials, self.auth.get_auth_password(credentials))
        if user is None or user is False:
            return None
        if user is True:
            # No user object: the username, or a digest standing for the token
            # (the subject is stored with sessions; the token itself never is).
            token = getattr(credentials, "token", None)
            user = credentials.username or (hash_token(token) if token else None)
        g.flask_httpauth_user = user  # what auth.current_user() reads
        return user


def _roles(callback: t.Callable[[t.Any], t.Any]) -> ScopesOf:
    def scopes(user: t.Any) -> t.Iterable[str]:
        roles = callback(user)
        if roles is None:
            return ()
        return (roles,) if isinstance(roles, str) else tuple(roles)

    return scopes
