"""The caller of the local surfaces: stdio and the ``flask mcp`` commands.

Over HTTP every request brings its credential. A local process has no
request to read one from, so it is given explicitly, and never implied:

1. a token, from ``--token`` or the ``FLASK_MCP_TOKEN`` environment variable
   (which a desktop client's server configuration can set), verified by the
   app's own authentication backend exactly as an ``Authorization: Bearer``
   header would be;
2. else the principal named by ``MCP_LOCAL_PRINCIPAL``: a subject, or
   ``{"subject": ..., "scopes": [...]}``, for a trusted local process (the
   person who can start the process can read the config anyway);
3. else nobody: an app with authentication then refuses what its permissions
   protect, as over HTTP.
"""

from __future__ import annotations

import os
import typing as t

from flask import request

from ..globals import state_of
from .base import to_principal
from .gate import Unauthorized

if t.TYPE_CHECKING:
    from flask import Flask

    from ..policies.principal import Principal

__all__ = ["TOKEN_ENV", "LocalAuthError", "local_principal"]

#: The environment variable a local process takes its token from.
TOKEN_ENV = "FLASK_MCP_TOKEN"


class LocalAuthError(Exception):
    """The local caller could not be established; the message says why and what to do."""


def local_principal(app: Flask, token: str | None = None) -> Principal | None:
    """The principal of a local surface of *app* (see the module docstring).

    :param token: given on the command line; ``None`` looks at :data:`TOKEN_ENV`.
    :raises LocalAuthError: a token the backend refuses, a token for an app
        without authentication, or a ``MCP_LOCAL_PRINCIPAL`` without a subject.
    """
    state = state_of(app)
    if token is None:
        token = os.environ.get(TOKEN_ENV) or None
    if token is not None:
        if state.auth is None:
            raise LocalAuthError("a token was given, but the app has no authentication configured (MCP_AUTH_*)")
        headers = {"Authorization": f"Bearer {token}"}
        with app.test_request_context(state.settings.url_prefix or "/", method="POST", headers=headers):
            try:
                return state.auth.authenticate(request)
            except Unauthorized as exc:
                raise LocalAuthError(f"the token was refused: {exc.message}") from None
    configured = state.settings.local_principal
    if configured is None:
        return None
    try:
        return to_principal({"subject": configured} if isinstance(configured, str) else configured)
    except ValueError as exc:
        raise LocalAuthError(f"MCP_LOCAL_PRINCIPAL: {exc}") from None
