"""An MCP server that is also the OAuth authorization server of its own users.

Run it with ``python examples/oauth_app/app.py --port 5000`` and add
``http://127.0.0.1:5000/mcp`` as a connector in an MCP client: the client
registers itself, sends you to this app's login page (``alice``/``alice``
or ``bob``/``bob``), then to a consent page, and calls the tools as you.

``whoami`` needs ``notes:read``; ``write_note`` needs ``notes:write``, which
alice may grant and bob may not; ``delete_note`` needs it too, and runs only
once the signed-in user approves that exact call on the app's approval page
(docs/approval.rst). The database (SQLite) lives in a temporary
folder removed when the process ends; the secret key is random per process.

The login page is one to copy: a CSRF token on its form, no framing, a
SameSite session cookie, wrong passwords throttled per user and per address
(see "Your login page" in docs/oauth.rst).
"""

from __future__ import annotations

import argparse
import math
import secrets
import tempfile
import typing as t
from pathlib import Path
from urllib.parse import urlsplit

from flask import Flask, Response, redirect, render_template_string, request, url_for
from flask_login import LoginManager, UserMixin, login_user, logout_user  # type: ignore[import-untyped]
from flask_wtf.csrf import generate_csrf, validate_csrf  # type: ignore[import-untyped]
from werkzeug.security import check_password_hash, generate_password_hash
from wtforms import ValidationError  # type: ignore[import-untyped]

from flask_mcp import MCP, ScopeRequired, ToolError, current_principal
from flask_mcp.oauth import OAuthServer
from flask_mcp.policies.ratelimit import CacheRateLimiter, FixedWindow


class User(UserMixin):  # type: ignore[misc]
    """A demo user: a name, a password (kept as a hash, as a real app keeps it), and the scopes they may grant."""

    def __init__(self, name: str, password: str, scopes: set[str]) -> None:
        self.id = name
        self.name = name
        self.password_hash = generate_password_hash(password)
        self.scopes = scopes


USERS = {
    "alice": User("alice", "alice", {"notes:read", "notes:write"}),
    "bob": User("bob", "bob", {"notes:read"}),
}
NOTES: dict[str, list[str]] = {}

mcp = MCP(name="oauth-notes", version="1.0.0")


@mcp.tool(permissions=[ScopeRequired("notes:read")])
def whoami() -> str:
    """The name of the signed-in user the client acts for."""
    principal = current_principal()
    return principal.subject if principal is not None else "anonymous"


@mcp.tool(permissions=[ScopeRequired("notes:write")])
def write_note(text: str) -> str:
    """Keep a note for the signed-in user (needs ``notes:write``)."""
    principal = current_principal()
    owner = principal.subject if principal is not None else "anonymous"
    NOTES.setdefault(owner, []).append(text)
    return f"{owner} has {len(NOTES[owner])} note(s)"


@mcp.tool(
    permissions=[ScopeRequired("notes:write")],
    annotations={"destructiveHint": True},
    # Nothing is deleted until the signed-in user approves this exact call on the app's own page
    # (or, for a client that cannot open one, answers the question in the client).
    confirm="Delete your note number {number}?",
)
def delete_note(number: int) -> str:
    """Delete one of the signed-in user's notes, counted from 1 (needs ``notes:write`` and the user's yes)."""
    principal = current_principal()
    notes = NOTES.get(principal.subject if principal is not None else "anonymous", [])
    if not 1 <= number <= len(notes):
        raise ToolError(f"there is no note number {number}: you have {len(notes)}")
    removed = notes.pop(number - 1)
    return f"deleted {removed!r}; {len(notes)} left"


# The authorization pages' layout (flask_mcp's ``mcp_oauth/base.html``) serves the login page too.
LOGIN_PAGE = """{% extends "mcp_oauth/base.html" %}
{% block title %}Sign in{% endblock %}
{% block content %}
<h1>Sign in to Notes</h1>
<p class="muted">Demo users: alice and bob.</p>
{% if error %}<p id="login-error" class="error">{{ error }}</p>{% endif %}
<form method="post">
  <input type="hidden" name="csrf_token" value="{{ csrf_token() }}">
  <label for="username">User</label><input name="username" id="username" autocomplete="username">
  <label for="password">Password</label><input name="password" id="password" type="password">
  <div class="actions"><button type="submit" id="login-submit" class="primary">Sign in</button></div>
</form>
{% endblock %}"""

INDEX_PAGE = """{% extends "mcp_oauth/base.html" %}
{% block title %}Notes{% endblock %}
{% block content %}
{% if current_user.is_authenticated %}
<h1>Signed in as {{ current_user.name }}.</h1>
<p><a href="{{ url_for('mcp_oauth.connections') }}">Connected clients</a></p>
<form method="post" action="{{ url_for('logout') }}">
  <input type="hidden" name="csrf_token" value="{{ csrf_token() }}">
  <div class="actions"><button type="submit" id="logout-submit">Sign out</button></div>
</form>
{% else %}
<h1>Signed in as nobody.</h1>
<p><a href="{{ url_for('login') }}">Sign in</a></p>
{% endif %}
{% endblock %}"""


def _local(target: str | None) -> str:
    """*target* if it is a path on this site, else ``/``: the login page must not redirect elsewhere."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    parts = urlsplit(target)
    return target if not parts.scheme and not parts.netloc else "/"


#: Wrong passwords allowed before sign-in waits: 5 per user name in 15 minutes (someone guessing
#: one account's password) and 20 per client address (someone trying many accounts). Past either,
#: every attempt, the right password included, is answered 429 until the window ends.
WRONG_PASSWORDS_PER_USER = FixedWindow(limit=5, period=15 * 60)
WRONG_PASSWORDS_PER_ADDRESS = FixedWindow(limit=20, period=15 * 60)
#: Checked against when the user is unknown, so an unknown name costs the same time as a wrong password.
_NOBODY = generate_password_hash(secrets.token_hex(16))


def _no_framing(response: Response) -> Response:
    """No page of this app may be framed (clickjacking of the sign-in and consent buttons)."""
    response.headers.setdefault("X-Frame-Options", "DENY")
    response.headers.setdefault("Content-Security-Policy", "frame-ancestors 'none'")
    return response


def _posted_from_this_site() -> bool:
    """Whether the form posted carries this session's CSRF token (Flask-WTF's), which no other site can read."""
    try:
        validate_csrf(request.form.get("csrf_token"))
    except ValidationError:
        return False
    return True


def create_app(config: dict[str, t.Any] | None = None, *, port: int = 5000) -> Flask:
    """Build the app; the canonical MCP URL is ``http://127.0.0.1:<port>/mcp``."""
    app = Flask(__name__)
    folder = tempfile.TemporaryDirectory(prefix="flask-mcp-oauth-")
    app.config.update(
        SECRET_KEY=secrets.token_hex(32),
        MCP_AUTH_RESOURCE=f"http://127.0.0.1:{port}/mcp",
        MCP_ALLOWED_HOSTS=[f"127.0.0.1:{port}", "127.0.0.1", "localhost"],
        MCP_AUTH_REQUIRED_SCOPES=["notes:read"],
        MCP_OAUTH_DATABASE_URI="sqlite:///" + str(Path(folder.name) / "oauth.sqlite3"),
        MCP_OAUTH_SCOPES={"notes:read": "See who you are", "notes:write": "Write notes in your name"},
        MCP_OAUTH_SERVICE_NAME="Notes",
    )
    # The session cookie goes with top-level navigations only (the login redirect), never with a
    # form posted from another site; and only over https when the app is served over https.
    app.config["SESSION_COOKIE_SAMESITE"] = "Lax"
    app.config.update(config or {})
    if "SESSION_COOKIE_SECURE" not in (config or {}):
        app.config["SESSION_COOKIE_SECURE"] = urlsplit(app.config["MCP_AUTH_RESOURCE"]).scheme == "https"
    app.extensions["oauth_example_folder"] = folder  # removed with the app
    app.after_request(_no_framing)
    # Flask-WTF's CSRF token on the login and logout forms only: the MCP and OAuth endpoints are
    # called by programs with no cookies, and the consent form has its own signed token.
    app.jinja_env.globals["csrf_token"] = generate_csrf
    # Counted in this process; with several workers, count in the app's shared cache instead
    # (CacheRateLimiter(cache) with a flask-caching Cache on Redis).
    limiter = app.extensions["oauth_example_login_limiter"] = CacheRateLimiter.in_process()

    login_manager = LoginManager(app)
    login_manager.login_view = "login"
    login_manager.user_loader(USERS.get)

    def page(error: str | None = None, status: int = 200, headers: dict[str, str] | None = None) -> t.Any:
        return render_template_string(LOGIN_PAGE, error=error), status, headers or {}

    def forged() -> t.Any:
        return page("The form expired or was not sent from this site: try again.", 400)

    @app.route("/login", methods=["GET", "POST"])
    def login() -> t.Any:
        if request.method == "GET":
            return page()
        if not _posted_from_this_site():
            return forged()  # a login posted from another site would sign this browser in as someone else
        name = request.form.get("username", "")[:64]
        # Behind a reverse proxy, remote_addr is the proxy's unless the app trusts its
        # X-Forwarded-For (werkzeug's ProxyFix): else every user shares one address budget.
        keys = [
            (f"login-user:{name}", WRONG_PASSWORDS_PER_USER),
            (f"login-address:{request.remote_addr}", WRONG_PASSWORDS_PER_ADDRESS),
        ]
        # Checked before the password: while throttled, the right password waits too.
        waits = [wait for key, rule in keys if (wait := limiter.spent(key, rule)) is not None]
        if waits:
            minutes = math.ceil(max(waits) / 60)
            retry = {"Retry-After": str(math.ceil(max(waits)))}
            return page(f"Too many wrong passwords: try again in {minutes} minute(s).", 429, retry)
        user = USERS.get(name)
        # The same work and the same answer for an unknown user and a wrong password.
        matches = check_password_hash(user.password_hash if user else _NOBODY, request.form.get("password", ""))
        if user is not None and matches:
            login_user(user)
            return redirect(_local(request.args.get("next")))
        for key, rule in keys:
            limiter.hit(key, rule)
        # 200 with the form again, as for any form to correct (a 401 would need a WWW-Authenticate challenge).
        return page("Unknown user or wrong password.")

    @app.route("/logout", methods=["POST"])
    def logout() -> t.Any:
        if not _posted_from_this_site():
            return forged()  # another site must not sign the user out either
        logout_user()
        return redirect(url_for("login"))

    @app.route("/")
    def index() -> str:
        return render_template_string(INDEX_PAGE)

    OAuthServer(mcp, app, allowed_scopes=lambda user: user.scopes)
    return app


app = create_app()


def main(argv: list[str] | None = None) -> None:
    """``python examples/oauth_app/app.py --port N``: serve on 127.0.0.1."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=5000)
    arguments = parser.parse_args(argv)
    served = create_app(port=arguments.port)
    print(f"MCP endpoint: http://127.0.0.1:{arguments.port}/mcp  (users: alice, bob)", flush=True)
    served.run(host="127.0.0.1", port=arguments.port)


if __name__ == "__main__":
    main()
