"""The authorization endpoint: sign-in through the app, the consent page, remembered consents, connected clients.

The consent form is protected by a token signed with the app's
``SECRET_KEY`` (itsdangerous) that binds a random nonce kept in the user's
Flask session, the signed-in user and the exact authorization request: a
form posted from elsewhere, for someone else, or for another request is
refused. Redirects go only to a redirect URI the client registered (after
the client and URI were validated) or to the app's own login view with a
``next`` that is a path on this site.
"""

from __future__ import annotations

import datetime
import hashlib
import typing as t
from urllib.parse import urlsplit

from authlib.common.urls import add_params_to_uri
from authlib.oauth2.rfc6749 import OAuth2Error
from flask import Response, current_app, redirect, request, url_for

from ..audit.installed import audit_log_of
from ..audit.reading import read_records
from ..transport.form_tokens import FormTokens, form_page
from .client_documents import is_document_client_id
from .grants import GrantedUser
from .tokens import oauth_state

if t.TYPE_CHECKING:
    from .server import OAuthState

__all__ = [
    "RECENT_CALLS",
    "authorize_view",
    "connections_view",
    "recent_calls",
    "revoke_connection_view",
    "service_name",
]

#: The Flask session key of the CSRF nonce (a random value, no credential).
NONCE_KEY = "_mcp_oauth_nonce"
_TOKENS = FormTokens("flask-mcp.oauth.consent", NONCE_KEY)


def csrf_token(subject: str, purpose: str) -> str:
    """A token binding this browser session, *subject* and *purpose* (a digest of the request)."""
    return _TOKENS.token(subject, purpose)


def csrf_valid(token: object, subject: str, purpose: str, max_age: int) -> bool:
    """Whether *token* was made by :func:`csrf_token` for this session, *subject* and *purpose*, recently."""
    return _TOKENS.valid(token, subject, purpose, max_age)


def _request_digest() -> str:
    # The consent form posts back to the same URL: its query string is the authorization request.
    return hashlib.sha256(request.query_string).hexdigest()


def _page(template: str, status: int, **context: t.Any) -> Response:
    return form_page(template, status, **context)


def _error_page(status: int, error: str, description: str) -> Response:
    return _page("mcp_oauth/error.html", status, error=error, description=description)


def _with_issuer(state: OAuthState, response: Response) -> Response:
    # RFC 9207: every authorization response redirected to the client names the issuer.
    location = response.headers.get("Location")
    if location and "iss=" not in (urlsplit(location).query or ""):
        response.headers["Location"] = add_params_to_uri(location, [("iss", state.settings.issuer)])
    response.headers["Cache-Control"] = "no-store"
    return response


def _oauth_error(state: OAuthState, error: OAuth2Error) -> Response:
    if getattr(error, "redirect_uri", None):
        # The client and its redirect URI were validated: the error goes back to the client.
        return _with_issuer(state, state.server.handle_error_response(None, error))
    return _error_page(400, error.error or "invalid_request", error.get_error_description() or "")


def authorize_view() -> Response:
    """``GET /authorize`` validates, signs in, and shows the consent page; ``POST`` is the user's answer."""
    state = oauth_state()
    server = state.server
    try:
        grant = server.get_consent_grant(end_user=None)
    except OAuth2Error as error:
        return _oauth_error(state, error)
    except ValueError:
        # Authlib refuses to echo some characters of the input in an error description.
        return _error_page(400, "invalid_request", "The request holds characters that are not allowed.")
    user = state.users.current_user()
    if user is None:
        # Back to this very request after sign-in: a path on this site, never a URL from the request.
        next_url = request.path + ("?" + request.query_string.decode("latin-1") if request.query_string else "")
        login = state.users.login_url(state.settings.login_view, next_url)
        if login is None:
            return _error_page(401, "login_required", "Sign in to this site first.")
        return t.cast(Response, redirect(login))
    subject = state.users.subject(user)
    client = grant.client
    requested = (grant.request.scope or "").split()
    grantable = state.users.allowed_scopes(user, requested)
    refused = [scope for scope in requested if scope not in grantable]

    def answer(granted: bool) -> Response:
        owner = GrantedUser(subject, " ".join(grantable)) if granted else None
        return _with_issuer(state, server.create_authorization_response(grant_user=owner, grant=grant))

    if requested and not grantable:
        return answer(False)  # nothing asked for may be granted to this user
    if request.method == "POST":
        if not csrf_valid(request.form.get("csrf_token"), subject, _request_digest(), state.settings.consent_max_age):
            return _error_page(400, "invalid_request", "The consent form expired or was not sent from this site.")
        if request.form.get("decision") != "approve":
            return answer(False)
        state.store.remember_consent(subject, client.client_id, grantable)
        return answer(True)
    consent = state.store.consent(subject, client.client_id)
    if consent is not None and set(grantable) <= consent.scopes and request.args.get("prompt") != "consent":
        return answer(True)
    return _page(
        "mcp_oauth/consent.html",
        200,
        **switch_account_form(state, subject),
        service_name=service_name(state),
        unverified=not client.operator_made,
        connections_url=url_for("mcp_oauth.connections"),
        client_name=client.client_name,
        client_uri=_https(client.client_metadata.get("client_uri")),
        logo_uri=_https(client.client_metadata.get("logo_uri")),
        redirect_host=urlsplit(grant.redirect_uri or "").netloc or urlsplit(grant.redirect_uri or "").scheme,
        client_host=urlsplit(client.client_id).netloc if is_document_client_id(client.client_id) else None,
        local_redirect=is_document_client_id(client.client_id) and _local_only(client.redirect_uris),
        scopes=[(scope, state.scopes.describe(scope)) for scope in grantable],
        refused=[(scope, state.scopes.describe(scope)) for scope in refused],
        user_name=state.users.display_name(user),
        csrf_token=csrf_token(subject, _request_digest()),
        action=request.full_path if request.query_string else request.path,
    )


def switch_account_purpose(query: str) -> str:
    """What the "Not you?" form's CSRF token is bound to: signing out for this authorization request."""
    return "switch-account:" + hashlib.sha256(query.encode("utf-8", "surrogatepass")).hexdigest()


def switch_account_form(state: OAuthState, subject: str) -> dict[str, t.Any]:
    """What the consent template needs for its "Not you?" form (``switch_account_action`` ``None``: no form).

    The form posts the authorization request's query and a token bound to the user and that query to
    :func:`~flask_mcp.oauth.switch_account.switch_account_view`, which signs the user out and comes back.
    """
    if not state.users.can_log_out:
        return {"switch_account_action": None, "switch_account_query": "", "switch_account_token": ""}
    query = request.query_string.decode("latin-1")
    return {
        "switch_account_action": url_for("mcp_oauth.switch_account"),
        "switch_account_query": query,
        "switch_account_token": csrf_token(subject, switch_account_purpose(query)),
    }


def service_name(state: OAuthState) -> str:
    """The name of the service users connect clients to (``MCP_OAUTH_SERVICE_NAME``, else the MCP server's)."""
    return state.settings.service_name or state.scopes.mcp.name or "this site"


def _local_only(uris: list[str]) -> bool:
    # A document's loopback redirects can be answered by any program on the user's machine claiming to be it.
    hosts = {urlsplit(uri).hostname for uri in uris}
    return bool(hosts) and hosts <= {"127.0.0.1", "::1", "localhost"}


def _https(value: object) -> str | None:
    return value if isinstance(value, str) and urlsplit(value).scheme == "https" else None


def connections_view() -> Response:
    """``GET /connections``: the clients the signed-in user approved, each with a revoke button."""
    state = oauth_state()
    user = state.users.current_user()
    if user is None:
        login = state.users.login_url(state.settings.login_view, request.path)
        return t.cast(Response, redirect(login)) if login else _error_page(401, "login_required", "Sign in first.")
    subject = state.users.subject(user)
    calls = recent_calls(subject)
    rows = [
        {
            "client_id": consent.client_id,
            "client_name": client.client_name if client is not None else consent.client_id,
            "scopes": [(scope, state.scopes.describe(scope)) for scope in sorted(consent.scopes)],
            "granted_at": consent.granted_at,
            "calls": calls(consent.client_id),
        }
        for consent, client in state.store.connections(subject)
    ]
    return _page(
        "mcp_oauth/connections.html",
        200,
        connections=rows,
        service_name=service_name(state),
        user_name=state.users.display_name(user),
        csrf_token=csrf_token(subject, "connections"),
        action=url_for("mcp_oauth.revoke_connection"),
    )


def revoke_connection_view() -> Response:
    """``POST /connections/revoke``: forget a consent and revoke every token of that client for this user."""
    state = oauth_state()
    user = state.users.current_user()
    if user is None:
        return _error_page(401, "login_required", "Sign in first.")
    subject = state.users.subject(user)
    if not csrf_valid(request.form.get("csrf_token"), subject, "connections", state.settings.consent_max_age):
        return _error_page(400, "invalid_request", "The form expired or was not sent from this site.")
    client_id = request.form.get("client_id")
    if isinstance(client_id, str) and client_id:
        state.store.revoke_connection(subject, client_id)
    return t.cast(Response, redirect(url_for("mcp_oauth.connections"), code=303))


#: The calls of each connected client the connections page shows, newest first.
RECENT_CALLS = 5


def recent_calls(subject: str) -> t.Callable[[str], list[dict[str, str]]]:
    """The recent calls a client made as *subject*, from the audit trail (none when it is off)."""
    log = audit_log_of(current_app)
    if log is None:
        return lambda client_id: []
    log.writer.flush(1.0)  # this process's own calls are shown too

    def of(client_id: str) -> list[dict[str, str]]:
        found = read_records(log.engine, principal=subject, client=client_id, limit=RECENT_CALLS)
        return [
            {
                "time": datetime.datetime.fromtimestamp(call.time, tz=datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
                "tool": call.tool,
                "outcome": call.outcome,
                "approval": call.approval,
            }
            for call in found
        ]

    return of
