"""The consent page's "Not you?": sign out, then come back to the same authorization request.

The form carries the authorization request's query and a CSRF token (the
consent page's own kind) bound to the signed-in user and that query, so a
page elsewhere cannot sign the user out, and the view redirects only to this
server's authorize endpoint: the query it appends is parsed and re-encoded,
never taken as a URL.
"""

from __future__ import annotations

import typing as t
from urllib.parse import parse_qsl, urlencode

from flask import Response, redirect, request, url_for

from .consent import _error_page, csrf_valid, switch_account_purpose
from .tokens import oauth_state

__all__ = ["switch_account_view"]


def switch_account_view() -> Response:
    """``POST /switch-account``: sign the user out and go back to the authorization request."""
    state = oauth_state()
    user = state.users.current_user()
    query = request.form.get("query", "")
    back = url_for("mcp_oauth.authorize")
    # Parsed and re-encoded: only a query of the authorize endpoint, whatever was posted.
    pairs = parse_qsl(query, keep_blank_values=True)
    target = back + ("?" + urlencode(pairs) if pairs else "")
    if user is None:
        return t.cast(Response, redirect(target, code=303))  # nobody to sign out
    subject = state.users.subject(user)
    if not state.users.can_log_out or not csrf_valid(
        request.form.get("switch_token"), subject, switch_account_purpose(query), state.settings.consent_max_age
    ):
        return _error_page(400, "invalid_request", "The form expired or was not sent from this site.")
    state.users.log_out()
    return t.cast(Response, redirect(target, code=303))
