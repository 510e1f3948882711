"""Who is signed in to the app in this browser: what the approval page asks before it shows a call.

The app's ``OAuthServer`` registers its own :class:`SignIn` (its
``user_loader`` and ``subject`` hooks); without one, Flask-Login's
``current_user`` is asked when Flask-Login is set up. An app with neither
cannot sign users in, and its tools are approved by form elicitation only.
"""

from __future__ import annotations

import typing as t

from flask import Flask, current_app, url_for

__all__ = ["SIGN_IN", "FlaskLoginSignIn", "SignIn", "sign_in_of"]

#: Where an app keeps its :class:`SignIn` (``app.extensions[SIGN_IN]``).
SIGN_IN = "flask_mcp.sign_in"


class SignIn(t.Protocol):
    """The app's users, as the approval page needs them."""

    def subject(self) -> str | None:
        """The signed-in user's id, as the access tokens' ``sub`` (or Flask-Login's principal) names them;
        ``None`` when nobody is signed in."""
        ...

    def login_url(self, next_url: str) -> str | None:
        """The app's login page, coming back to *next_url* (a path on this site); ``None``: none known."""
        ...


class FlaskLoginSignIn:
    """:class:`SignIn` through Flask-Login's ``current_user`` and ``login_manager.login_view``."""

    def subject(self) -> str | None:
        """``current_user.get_id()`` of an authenticated user."""
        from flask_login import current_user  # type: ignore[import-untyped]

        user = current_user._get_current_object()
        if not getattr(user, "is_authenticated", False):
            return None
        value = user.get_id()
        return None if value is None else str(value)

    def login_url(self, next_url: str) -> str | None:
        """``login_manager.login_view``, with ``next``."""
        view = getattr(getattr(current_app, "login_manager", None), "login_view", None)
        return url_for(view, next=next_url) if view else None


def sign_in_of(app: Flask) -> SignIn | None:
    """How *app* tells who is signed in, or ``None`` when it cannot sign users in."""
    registered = app.extensions.get(SIGN_IN)
    if registered is not None:
        return t.cast(SignIn, registered)
    if getattr(app, "login_manager", None) is not None:
        return FlaskLoginSignIn()
    return None
