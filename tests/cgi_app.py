"""A small app for the CGI tests: ``flask --app tests.cgi_app mcp cgi``.

Settings come from ``FLASK_*`` environment variables (``FLASK_MCP_MASK_ERRORS``),
so a test can change them for one subprocess.
"""

from __future__ import annotations

from flask import Flask, request

from flask_mcp import MCP, ToolError
from flask_mcp.auth import current_principal

mcp = MCP(name="cgi-app", version="1.0.0")


@mcp.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool
def refuse(reason: str) -> str:
    """Fails with a message meant for the caller."""
    raise ToolError(f"refused: {reason}")


@mcp.tool
def crash() -> str:
    """Fails with a bug whose detail must stay masked."""
    raise RuntimeError("secret database password")


@mcp.tool
def chatty(word: str) -> str:
    """Prints, which must not reach the CGI response on stdout."""
    print(f"chatty says {word}")
    return f"{word} from {request.headers.get('User-Agent', 'nobody')}"


@mcp.tool
def whoami() -> str:
    """The authenticated caller's subject, or "anonymous" (for the authentication tests)."""
    principal = current_principal()
    return principal.subject if principal is not None else "anonymous"


@mcp.resource("config://motd", mime_type="text/plain")
def motd() -> str:
    return "not served over CGI"


app = Flask(__name__)
app.config.from_prefixed_env()
mcp.init_app(app)
