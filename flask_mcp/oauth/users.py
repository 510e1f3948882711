"""Who is signed in: the app's own users, through Flask-Login or a hook the developer gives."""

from __future__ import annotations

import typing as t

from flask import current_app, url_for

__all__ = ["OAuthSignIn", "UserHooks"]

UserLoader = t.Callable[[], t.Any]


class UserHooks:
    """How the authorization server asks the app about its users.

    :param user_loader: returns the signed-in user, or ``None``; without it,
        Flask-Login's ``current_user`` (when it is installed and set up).
    :param subject: the user's stable id, which becomes the tokens' ``sub``;
        by default ``user.get_id()`` (Flask-Login's), else ``user.id``.
    :param allowed_scopes: the scopes *user* may grant at all (``None``: every scope).
    :param display_name: how the consent page names the user; by default ``str(user)``.
    :param logout: signs the current user out (the consent page's "Not you?"); by default
        Flask-Login's ``logout_user`` when the signed-in user comes from Flask-Login, else none
        (and the page offers no way to switch accounts).
    """

    def __init__(
        self,
        user_loader: UserLoader | None = None,
        subject: t.Callable[[t.Any], str] | None = None,
        allowed_scopes: t.Callable[[t.Any], t.Iterable[str] | None] | None = None,
        display_name: t.Callable[[t.Any], str] | None = None,
        logout: t.Callable[[], t.Any] | None = None,
    ) -> None:
        self.user_loader = user_loader
        self._subject = subject
        self._allowed_scopes = allowed_scopes
        self._display_name = display_name
        self._logout = logout

    @property
    def has_subject(self) -> bool:
        """Whether the app gave its own ``subject`` hook."""
        return self._subject is not None

    @property
    def allowed_scopes_hook(self) -> t.Callable[[t.Any], t.Iterable[str] | None] | None:
        """The app's ``allowed_scopes`` hook, if any."""
        return self._allowed_scopes

    def current_user(self) -> t.Any:
        """The signed-in user of this request, or ``None``."""
        if self.user_loader is not None:
            return self.user_loader()
        if "login_manager" not in current_app.extensions and not hasattr(current_app, "login_manager"):
            raise RuntimeError(
                "OAuthServer needs to know who is signed in: set up Flask-Login, or pass user_loader=..."
            )
        from flask_login import current_user  # type: ignore[import-untyped]

        user = current_user._get_current_object()
        return user if getattr(user, "is_authenticated", False) else None

    @property
    def can_log_out(self) -> bool:
        """Whether :meth:`log_out` can sign a user out (the app gave a hook, or Flask-Login is in use)."""
        return self._logout is not None or self.user_loader is None

    def log_out(self) -> None:
        """Sign the current user out.

        :raises RuntimeError: :attr:`can_log_out` is false.
        """
        if self._logout is not None:
            self._logout()
            return
        if self.user_loader is not None:
            raise RuntimeError("OAuthServer cannot sign users out: pass logout=... along with user_loader=...")
        from flask_login import logout_user

        logout_user()

    def subject(self, user: t.Any) -> str:
        """The user's stable id."""
        if self._subject is not None:
            return str(self._subject(user))
        get_id = getattr(user, "get_id", None)
        value = get_id() if callable(get_id) else getattr(user, "id", None)
        if value is None or value == "":
            raise RuntimeError("cannot tell the signed-in user's id: pass OAuthServer(subject=...)")
        return str(value)

    def allowed_scopes(self, user: t.Any, requested: t.Iterable[str]) -> list[str]:
        """The requested scopes *user* may grant."""
        wanted = list(dict.fromkeys(requested))
        if self._allowed_scopes is None:
            return wanted
        allowed = self._allowed_scopes(user)
        if allowed is None:
            return wanted
        permitted = set(allowed)
        return [scope for scope in wanted if scope in permitted]

    def display_name(self, user: t.Any) -> str:
        """The user's name on the consent page."""
        if self._display_name is not None:
            return str(self._display_name(user))
        return str(getattr(user, "name", None) or getattr(user, "username", None) or self.subject(user))

    def login_url(self, view: str | None, next_url: str) -> str | None:
        """The app's login page, coming back to *next_url* (a path on this site); ``None``: no login view known."""
        if view is None:
            manager = getattr(current_app, "login_manager", None)
            view = getattr(manager, "login_view", None) if manager is not None else None
        if not view:
            return None
        return url_for(view, next=next_url)


class OAuthSignIn:
    """Who is signed in, as the authorization server sees users: what the approval page asks.

    The subject is the one its tokens carry, so the user a token was issued to is the one
    who may approve that token's calls (:mod:`flask_mcp.transport.sign_in`).
    """

    def __init__(self, users: UserHooks, login_view: str | None) -> None:
        self.users = users
        self.login_view = login_view

    def subject(self) -> str | None:
        """The signed-in user's ``sub``, or ``None``."""
        user = self.users.current_user()
        return None if user is None else self.users.subject(user)

    def login_url(self, next_url: str) -> str | None:
        """The app's login page, coming back to *next_url*."""
        return self.users.login_url(self.login_view, next_url)
