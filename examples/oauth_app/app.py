"""An MCP server that is also the OAuth authorization server of its own users.

Run it with ``python examples/oauth_app/app.py --port 5000`` and add
``http://127.0.0.1:5000/mcp`` as a connector in an MCP client: the client
registers itself, sends you to this app's login page (``alice``/``alice``
or ``bob``/``bob``), then to a consent page, and calls the tools as you.

``whoami`` needs ``notes:read``; ``write_note`` needs ``notes:write``, which
alice may grant and bob may not. The database (SQLite) lives in a temporary
folder removed when the process ends; the secret key is random per process.
"""

from __future__ import annotations

import argparse
import secrets
import tempfile
import typing as t
from pathlib import Path
from urllib.parse import urlsplit

from flask import Flask, redirect, render_template_string, request, url_for
from flask_login import LoginManager, UserMixin, current_user, login_user, logout_user

from flask_mcp import MCP, ScopeRequired, current_principal
from flask_mcp.oauth import OAuthServer


class User(UserMixin):  # type: ignore[misc]
    """A demo user: a name, a password, and the scopes they may grant."""

    def __init__(self, name: str, password: str, scopes: set[str]) -> None:
        self.id = name
        self.name = name
        self.password = password
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


# The authorization pages' layout (flask_mcp's ``mcp_oauth/base.html``) serves the login page too.
LOGIN_PAGE = """{% extends "mcp_oauth/base.html" %}
{% block title %}Sign in{% endblock %}
{% block content %}
<h1>Sign in to Notes</h1>
<p class="muted">Demo users: alice and bob.</p>
{% if error %}<p id="login-error" class="error">{{ error }}</p>{% endif %}
<form method="post">
  <label for="username">User</label><input name="username" id="username" autocomplete="username">
  <label for="password">Password</label><input name="password" id="password" type="password">
  <div class="actions"><button type="submit" id="login-submit" class="primary">Sign in</button></div>
</form>
{% endblock %}"""


def _local(target: str | None) -> str:
    """*target* if it is a path on this site, else ``/``: the login page must not redirect elsewhere."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    parts = urlsplit(target)
    return target if not parts.scheme and not parts.netloc else "/"


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
    app.config.update(config or {})
    app.extensions["oauth_example_folder"] = folder  # removed with the app

    login_manager = LoginManager(app)
    login_manager.login_view = "login"
    login_manager.user_loader(USERS.get)

    @app.route("/login", methods=["GET", "POST"])
    def login() -> t.Any:
        error = None
        if request.method == "POST":
            user = USERS.get(request.form.get("username", ""))
            if user is not None and secrets.compare_digest(user.password, request.form.get("password", "")):
                login_user(user)
                return redirect(_local(request.args.get("next")))
            error = "Unknown user or wrong password."
        return render_template_string(LOGIN_PAGE, error=error)

    @app.route("/logout", methods=["POST"])
    def logout() -> t.Any:
        logout_user()
        return redirect(url_for("login"))

    @app.route("/")
    def index() -> str:
        who = current_user.name if current_user.is_authenticated else "nobody"
        return f"Signed in as {who}. Connected clients: /oauth/connections"

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
