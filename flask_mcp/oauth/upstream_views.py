"""The pages of upstream identity provider mode: the redirect to the provider and its callback.

``GET <prefix>/upstream/login?next=<path>`` sends the browser to the
provider; ``GET <prefix>/upstream/callback`` checks ``state`` (and ``iss``
when the provider sends it, RFC 9207), exchanges the code with the PKCE
verifier, validates the ID token, keeps who signed in in the Flask session,
and goes back to ``next`` (a path on this site: the authorization request
that sent the user away). Every failure is an error page, 4xx (502 when the
provider cannot be reached), never a traceback.
"""

from __future__ import annotations

import dataclasses
import logging
import time
import typing as t
from urllib.parse import urlsplit

from flask import Blueprint, Flask, Response, current_app, redirect, request, session, url_for

from ..policies.tool import ConfigurationError
from .settings import OAuthSettings
from .upstream import USER_KEY, UpstreamError, UpstreamSettings, UpstreamSignIn, UpstreamUser
from .users import UserHooks

__all__ = [
    "UPSTREAM_KEY",
    "UpstreamUserHooks",
    "make_upstream_blueprint",
    "set_up_upstream",
    "signed_in_user",
    "upstream_sign_in",
]

logger = logging.getLogger("flask_mcp.oauth")

#: Where the app keeps its :class:`~flask_mcp.oauth.upstream.UpstreamSignIn`.
UPSTREAM_KEY = "flask_mcp.oauth.upstream"
_NEXT = "mcp_next"
#: Sign-ins a browser may have started and not finished; older ones are forgotten.
MAX_PENDING_SIGN_INS = 3


def upstream_sign_in() -> UpstreamSignIn:
    """The provider sign-in of the current app.

    :raises RuntimeError: the app is not in upstream mode.
    """
    sign_in = current_app.extensions.get(UPSTREAM_KEY)
    if sign_in is None:
        raise RuntimeError("no upstream identity provider is configured on this app")
    return t.cast(UpstreamSignIn, sign_in)


def signed_in_user() -> UpstreamUser | None:
    """The user the provider signed in during this browser session, or ``None``."""
    data = session.get(USER_KEY)
    if not isinstance(data, dict):
        return None
    issuer, subject, name = data.get("iss"), data.get("sub"), data.get("name")
    if not isinstance(issuer, str) or not isinstance(subject, str) or not subject:
        return None
    return UpstreamUser(issuer, subject, name if isinstance(name, str) and name else subject)


class UpstreamUserHooks:
    """The user loader, subject and name of upstream mode, for :class:`~flask_mcp.oauth.users.UserHooks`."""

    @staticmethod
    def current_user() -> UpstreamUser | None:
        """The signed-in upstream user, if any."""
        return signed_in_user()

    @staticmethod
    def subject(user: UpstreamUser) -> str:
        """The local subject: issuer and ``sub``."""
        return user.get_id()

    @staticmethod
    def display_name(user: UpstreamUser) -> str:
        """The name the provider gave."""
        return user.name

    @staticmethod
    def log_out() -> None:
        """Forget the signed-in user here (the provider's own session is the provider's)."""
        session.pop(USER_KEY, None)


def _local_path(target: object) -> str | None:
    # Only a path on this site: the login redirect must never lead elsewhere.
    if not isinstance(target, str) or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return None
    parts = urlsplit(target)
    return target if not parts.scheme and not parts.netloc and len(target) <= 8192 else None


def _error(error: UpstreamError) -> Response:
    from .consent import _error_page

    if error.status >= 500:
        logger.warning("upstream sign-in failed: %s", error, exc_info=error.__cause__ is not None)
    return _error_page(error.status, error.error, error.description)


def _callback_url(sign_in: UpstreamSignIn) -> str:
    # The callback registered at the provider is on the issuer's origin: from configuration, never the Host header.
    from .tokens import oauth_state

    parts = urlsplit(oauth_state().settings.issuer)
    return f"{parts.scheme}://{parts.netloc}" + url_for("mcp_oauth_upstream.callback")


def login_view() -> Response:
    """``GET /upstream/login``: to the provider, with PKCE, ``state`` and ``nonce`` kept for the callback."""
    sign_in = upstream_sign_in()
    target = _local_path(request.args.get("next")) or "/"
    try:
        sign_in.metadata()
        client = sign_in.client
        callback = _callback_url(sign_in)
        answer = client.create_authorization_url(callback)
    except UpstreamError as error:
        return _error(error)
    # Authlib's state data (in the Flask session until the callback): verifier, nonce, redirect URI, and our next.
    _forget_old_sign_ins(client.framework.name)
    pending = {key: value for key, value in answer.items() if key != "url"}
    client.save_authorize_data(redirect_uri=callback, **{_NEXT: target}, **pending)
    response = t.cast(Response, redirect(answer["url"]))
    response.headers["Cache-Control"] = "no-store"
    return response


def _state_key(name: str, state: str) -> str:
    return f"_state_{name}_{state}"  # Authlib's session key of a sign-in's state data


def _forget_old_sign_ins(name: str) -> None:
    # Each sign-in started keeps its state data in the cookie until its answer comes: keep the
    # newest few, so a user who starts many never outgrows the cookie (nor an attacker who makes them).
    prefix = _state_key(name, "")
    pending = sorted(
        (key for key in session if key.startswith(prefix)),
        key=lambda key: _expiry(session.get(key)),
    )
    for key in pending[: max(0, len(pending) - (MAX_PENDING_SIGN_INS - 1))]:
        session.pop(key, None)


def _expiry(entry: object) -> float:
    value = entry.get("exp") if isinstance(entry, dict) else None
    return float(value) if isinstance(value, int | float) else 0.0


def callback_view() -> Response:
    """``GET /upstream/callback``: validate the answer and the ID token, sign the user in, go back."""
    try:
        user, target = _complete_sign_in(upstream_sign_in())
    except UpstreamError as error:
        return _error(error)
    session[USER_KEY] = {"iss": user.issuer, "sub": user.subject, "name": user.name}
    response = t.cast(Response, redirect(target))
    response.headers["Cache-Control"] = "no-store"
    return response


def _complete_sign_in(sign_in: UpstreamSignIn) -> tuple[UpstreamUser, str]:
    import requests
    from authlib.common.errors import AuthlibBaseError
    from joserfc.errors import JoseError

    client = sign_in.client
    state = request.args.get("state")
    data = None
    if isinstance(state, str) and state:
        # Authlib does not look at the expiry it wrote: a sign-in answered too late is refused here.
        live = _expiry(session.get(_state_key(client.framework.name, state))) > time.time()
        data = client.framework.get_state_data(session, state) if live else None
        # One answer per sign-in: whatever happens next, this state is spent.
        client.framework.clear_state_data(session, state)
    if not isinstance(data, dict) or not data.get("nonce") or not data.get("code_verifier"):
        raise UpstreamError("invalid_state", "This sign-in answer does not belong to a sign-in started here.")
    error = request.args.get("error")
    if error:
        raise UpstreamError(
            "access_denied" if error == "access_denied" else "upstream_error",
            "The sign-in provider did not sign you in"
            + (" (you or it refused)." if error == "access_denied" else f" ({error[:64]})."),
            403 if error == "access_denied" else 400,
        )
    metadata = sign_in.metadata()
    issuer = request.args.get("iss")
    if issuer is not None and issuer != metadata["issuer"]:
        raise UpstreamError("invalid_request", "The sign-in answer comes from another issuer.")
    if issuer is None and metadata.get("authorization_response_iss_parameter_supported") is True:
        # RFC 9207: a provider that says it names itself in every answer must; one that does not is a mix-up.
        raise UpstreamError("invalid_request", "The sign-in answer does not name its issuer.")
    code = request.args.get("code")
    if not code:
        raise UpstreamError("invalid_request", "The sign-in answer holds no code.")
    try:
        token = client.fetch_access_token(
            code=code, code_verifier=data["code_verifier"], redirect_uri=data.get("redirect_uri")
        )
    except requests.RequestException as failure:
        raise UpstreamError("temporarily_unavailable", "The sign-in provider cannot be reached.", 502) from failure
    except (AuthlibBaseError, ValueError) as failure:
        raise UpstreamError("invalid_grant", "The sign-in provider refused to complete the sign-in.") from failure
    if not isinstance(token, dict) or not isinstance(token.get("id_token"), str):
        raise UpstreamError("invalid_token", "The sign-in provider sent no ID token.")
    try:
        # Authlib checks aud only through azp: the client id must be in aud itself (OpenID Connect Core 3.1.3.7).
        options = {
            "iss": {"essential": True, "value": metadata["issuer"]},
            "aud": {"essential": True, "value": sign_in.settings.client_id},
            "sub": {"essential": True},
        }
        claims = client.parse_id_token(token, nonce=data["nonce"], claims_options=options)
    except requests.RequestException as failure:
        raise UpstreamError("temporarily_unavailable", "The sign-in provider's keys cannot be read.", 502) from failure
    except (AuthlibBaseError, JoseError, ValueError, TypeError, KeyError) as failure:
        logger.info("upstream ID token refused: %s: %s", type(failure).__name__, failure)
        raise UpstreamError("invalid_token", "The sign-in provider's ID token is not valid here.") from failure
    finally:
        # The provider's tokens are not this server's to keep or pass on (Authlib also kept them in g).
        token.clear()
        client.token = None
    subject = claims.get("sub") if claims is not None else None
    if not isinstance(subject, str) or not subject or len(subject) > 255:
        raise UpstreamError("invalid_token", "The sign-in provider's ID token names no subject.")
    name = next(
        (
            str(claims[key])[:200]
            for key in ("name", "preferred_username", "email")
            if isinstance(claims.get(key), str) and claims[key]
        ),
        subject,
    )
    target = _local_path(data.get(_NEXT)) or "/"
    return UpstreamUser(str(metadata["issuer"]), subject, name), target


def make_upstream_blueprint() -> Blueprint:
    """The blueprint of the provider sign-in (``mcp_oauth_upstream``)."""
    blueprint = Blueprint("mcp_oauth_upstream", __name__)
    blueprint.add_url_rule("/login", "login", login_view, methods=["GET"])
    blueprint.add_url_rule("/callback", "callback", callback_view, methods=["GET"])
    return blueprint


def set_up_upstream(
    app: Flask, prefix: str, settings: OAuthSettings, users: UserHooks
) -> tuple[OAuthSettings, UserHooks]:
    """Turn on upstream mode on *app* when ``MCP_OAUTH_UPSTREAM_DISCOVERY_URL`` is set.

    Returns the settings and user hooks the authorization server then uses:
    its login view is the provider sign-in, its user the one the provider signed in.

    :raises ~flask_mcp.ConfigurationError: the app also gives its own ``user_loader`` or ``subject``.
    """
    upstream = UpstreamSettings.from_app(app, prefix)
    if upstream is None:
        return settings, users
    if users.user_loader is not None or users.has_subject:
        raise ConfigurationError(
            "MCP_OAUTH_UPSTREAM_DISCOVERY_URL signs users in through the provider: "
            "do not pass user_loader= or subject= to OAuthServer as well"
        )
    app.extensions[UPSTREAM_KEY] = UpstreamSignIn(upstream, app)
    app.register_blueprint(make_upstream_blueprint(), url_prefix=settings.url_prefix + "/upstream")
    hooks = UserHooks(
        UpstreamUserHooks.current_user,
        UpstreamUserHooks.subject,
        users.allowed_scopes_hook,
        UpstreamUserHooks.display_name,
        UpstreamUserHooks.log_out,
    )
    return dataclasses.replace(settings, login_view="mcp_oauth_upstream.login"), hooks
