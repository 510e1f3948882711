"""An MCP server protected by a static bearer token.

Run it with ``python examples/auth/app.py`` and call it with
``Authorization: Bearer demo-token`` (or the value of ``MCP_DEMO_TOKEN``).
The demo token has the ``notes`` scope only: ``whoami`` works, while
``reset_notes`` needs ``admin`` and is refused with 403 ``insufficient_scope``.
"""

from __future__ import annotations

import os
import typing as t

from flask import Flask

from flask_mcp import MCP, Authenticated, ScopeRequired, current_principal

#: The token the server accepts unless ``MCP_DEMO_TOKEN`` says otherwise.
DEFAULT_TOKEN = "demo-token"

NOTES: dict[str, str] = {"welcome": "Hello from a protected server."}

mcp = MCP(name="auth-demo", version="1.0.0")


@mcp.tool(permissions=[Authenticated])
def whoami() -> str:
    """Say which principal is calling (any authenticated caller may)."""
    principal = current_principal()
    return f"you are {principal.subject}" if principal is not None else "anonymous"


@mcp.tool(permissions=[ScopeRequired(["admin"])])
def reset_notes() -> int:
    """Delete every note (needs the ``admin`` scope, which the demo token lacks)."""
    count = len(NOTES)
    NOTES.clear()
    return count


def create_app(config: dict[str, t.Any] | None = None) -> Flask:
    """Build the app; the token comes from ``MCP_DEMO_TOKEN`` (default ``demo-token``)."""
    token = os.environ.get("MCP_DEMO_TOKEN", DEFAULT_TOKEN)
    app = Flask(__name__)
    # MCP_AUTH_TOKENS configures a StaticTokenBackend; MCP(auth=...) takes any other backend.
    app.config.update(
        # Only the digest would need to be configured; a plain token is hashed on load.
        MCP_AUTH_TOKENS={token: {"subject": "demo-user", "scopes": ["notes"]}},
        MCP_AUTH_SCOPES_SUPPORTED=["notes", "admin"],
        MCP_AUTH_REQUIRED_SCOPES=["notes"],
        # Where clients would obtain tokens; listed in the Protected Resource Metadata.
        MCP_AUTH_AUTHORIZATION_SERVERS=["https://auth.example.com"],
    )
    app.config.update(config or {})
    mcp.init_app(app)
    return app


app = create_app()

if __name__ == "__main__":
    app.run(port=5000)
