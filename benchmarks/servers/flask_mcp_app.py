"""flask_mcp serving ``add(a, b)``; the mode comes from the environment.

``BENCH_MODE``: ``stateful`` (SimpleCache sessions, the default), ``stateless``,
``redis`` (RedisCache at ``BENCH_REDIS_URL``) or ``jwt`` (stateful, every call
signed in with :mod:`benchmarks.servers.signing`'s token, verified by a
``JWTBackend``) or ``static`` (stateful, signed in with its static token, a
``StaticTokenBackend``) or ``oauth`` (stateful, the app's own authorization
server issues the token: :mod:`benchmarks.servers.oauth_issued`). Beside
``add`` it serves ``progress``, which reports progress three times and
returns the same sum (the streamed scenarios). A 2026-07-28 request needs
no session: each mode serves its ``-modern`` scenarios as it is.
``BENCH_TOOLS``: extra filler tools to register (for the listing
benchmark). ``BENCHCFG_<KEY>`` sets any config key for one run
(``BENCHCFG_MCP_MAX_STREAMS=1000``).
"""

from __future__ import annotations

import os
import typing as t

from flask import Flask

from flask_mcp import MCP, Context

#: The tools every benchmark app serves (``add`` and ``progress``), before the fillers.
BASE_TOOLS = 2


def create_app(
    mode: str | None = None, extra_tools: int | None = None, config: dict[str, t.Any] | None = None
) -> Flask:
    """Build the benchmark app; *config* overrides settings (after the environment's)."""
    mode = mode or os.environ.get("BENCH_MODE", "stateful")
    extra_tools = int(os.environ.get("BENCH_TOOLS", "0")) if extra_tools is None else extra_tools
    auth = None
    if mode == "jwt":
        from flask_mcp.auth import JWTBackend

        from .signing import ISSUER, PUBLIC_PEM

        auth = JWTBackend(issuer=ISSUER, key=PUBLIC_PEM, algorithms=["RS256"])
    elif mode == "static":
        from flask_mcp.auth import StaticTokenBackend

        from .signing import STATIC_TOKEN

        auth = StaticTokenBackend({STATIC_TOKEN: "ada"})
    mcp = MCP(name="bench", version="1.0.0", auth=auth)
    oauth = mode == "oauth"  # the app's own authorization server: benchmarks/servers/oauth_issued.py

    @mcp.tool(permissions=[])
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @mcp.tool(permissions=[])
    def progress(a: int, b: int, ctx: Context) -> int:
        """Add two integers, reporting progress three times."""
        for step in (1, 2, 3):
            ctx.report_progress(step, 3)
        return a + b

    for index in range(extra_tools):
        mcp.tool(name=f"filler_{index}", description=f"Filler tool number {index}.")(_filler)

    app = Flask(__name__)
    app.config.update(MCP_STATELESS=mode == "stateless", MCP_PAGE_SIZE=None, MCP_ALLOWED_HOSTS=["*"])
    if mode == "jwt":
        from .signing import AUDIENCE

        app.config.update(MCP_AUTH_RESOURCE=AUDIENCE)
    if oauth:
        from .oauth_issued import RESOURCE

        app.config.update(SECRET_KEY="benchmark", MCP_AUTH_RESOURCE=RESOURCE, MCP_OAUTH_SCOPES={"notes": "Notes"})
    if mode == "redis":
        app.config.update(MCP_CACHE_TYPE="RedisCache", MCP_CACHE_REDIS_URL=os.environ["BENCH_REDIS_URL"])
    # Further settings for one run: BENCHCFG_MCP_MAX_STREAMS=1000 (values parsed as JSON).
    app.config.from_prefixed_env("BENCHCFG")
    app.config.update(config or {})
    if oauth:  # it sets the endpoint up with its token backend
        from flask_mcp.oauth import OAuthServer

        OAuthServer(mcp, app, user_loader=lambda: None, subject=str)
    else:
        mcp.init_app(app)
    return app


def _filler(text: str, count: int = 1, flag: bool = False) -> str:
    return text * count
