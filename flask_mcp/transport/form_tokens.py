"""The HTML forms flask_mcp serves (the consent and approval pages): their CSRF tokens, and their pages.

A token is signed with the app's ``SECRET_KEY`` (itsdangerous) and binds a
random nonce kept in the user's Flask session, the signed-in user and what
the form is for: a form posted from another site, for another user or for
another question is refused.
"""

from __future__ import annotations

import hmac
import secrets
import typing as t

from flask import Response, current_app, render_template, session
from itsdangerous import BadSignature, URLSafeTimedSerializer

__all__ = ["FormTokens", "form_page"]


def form_page(template: str, status: int, **context: t.Any) -> Response:
    """*template* rendered as a page where a person decides: never cached, never framed (clickjacking of
    its buttons)."""
    response = Response(render_template(template, **context), status=status, content_type="text/html; charset=utf-8")
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Content-Security-Policy"] = "frame-ancestors 'none'"
    return response


class FormTokens:
    """Makes and checks the tokens of one kind of form.

    :param salt: what kind of form (itsdangerous' salt): a token of one kind never passes for another.
    :param session_key: the Flask session key of the nonce (a random value, no credential).
    """

    def __init__(self, salt: str, session_key: str) -> None:
        self.salt = salt
        self.session_key = session_key

    def _serializer(self) -> URLSafeTimedSerializer:
        return URLSafeTimedSerializer(t.cast(str, current_app.secret_key), salt=self.salt)

    def _nonce(self) -> str:
        nonce = session.get(self.session_key)
        if not isinstance(nonce, str):
            nonce = session[self.session_key] = secrets.token_urlsafe(24)
        return nonce

    def token(self, subject: str, purpose: str) -> str:
        """A token binding this browser session, *subject* and *purpose*."""
        return self._serializer().dumps({"n": self._nonce(), "u": subject, "p": purpose})

    def valid(self, token: object, subject: str, purpose: str, max_age: int) -> bool:
        """Whether *token* was made by :meth:`token` for this session, *subject* and *purpose*, recently."""
        nonce = session.get(self.session_key)
        if not isinstance(token, str) or not isinstance(nonce, str):
            return False
        try:
            data = self._serializer().loads(token, max_age=max_age)
        except BadSignature:
            return False
        if not isinstance(data, dict):
            return False
        expected = {"n": nonce, "u": subject, "p": purpose}
        return all(
            isinstance(data.get(key), str) and hmac.compare_digest(data[key], value) for key, value in expected.items()
        )
