"""What hostile traffic leaves in the authorization server's tables, and what the sweep costs to remove it.

::

    python benchmarks/oauth_storage.py --requests 10000
    python benchmarks/oauth_storage.py --database postgresql+psycopg://...   # another database

One app, in process, sends *requests* token-endpoint requests of the kinds a
stranger can make and one a compromised machine client can, spread over many
client addresses so that the rate limits (which would stop most of it from
one address) do not hide the storage:

- a quarter are registrations that never obtain a token;
- half are ``client_credentials`` tokens of one operator-made client (each
  leaves an access-token record until it expires);
- a quarter are refused (wrong secrets, made-up codes and refresh tokens),
  which leave nothing.

Then the store's clock moves past every expiry and the sweep runs as it
does after an endpoint's answer, batch after batch, until nothing is left.
It prints the rows per table at each step and the cost of one sweep.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import typing as t
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flask import Flask, session

from flask_mcp import MCP, ScopeRequired
from flask_mcp.oauth import OAuthServer
from flask_mcp.oauth.pruning import prune

RESOURCE = "http://localhost/mcp"


def build(database: str) -> Flask:
    """An app with one MCP tool behind a scope and an authorization server, limits as deployed."""
    app = Flask(__name__)
    app.config.update(
        SECRET_KEY="benchmark",
        MCP_AUTH_RESOURCE=RESOURCE,
        MCP_OAUTH_DATABASE_URI=database,
        MCP_OAUTH_SCOPES={"notes:read": "Read notes"},
        # The sweep is run by hand below, to measure it; the limits stay as deployed.
        MCP_OAUTH_PRUNE_INTERVAL=None,
    )
    mcp = MCP(name="bench")

    @mcp.tool(permissions=[ScopeRequired("notes:read")])
    def whoami() -> str:
        return "x"

    OAuthServer(mcp, app, user_loader=lambda: session.get("user"), subject=str)
    return app


def flood(app: Flask, requests: int) -> dict[str, int]:
    """Send the requests; returns how many got each status."""
    runner = app.test_cli_runner()
    made = runner.invoke(args=["mcp", "oauth", "add-client", "robot", "--scope", "notes:read"]).output
    machine = dict(line.split(": ", 1) for line in made.strip().splitlines())
    client = app.test_client()
    statuses: dict[str, int] = {}
    for index in range(requests):
        address = {"REMOTE_ADDR": f"10.{index // 65536 % 256}.{index // 256 % 256}.{index % 256}"}
        kind = index % 4
        if kind == 0:
            answer = client.post(
                "/oauth/register",
                json={"redirect_uris": ["http://127.0.0.1:9/cb"], "token_endpoint_auth_method": "none"},
                environ_base=address,
            )
        elif kind == 3:
            refused = [
                {"grant_type": "client_credentials", "client_id": machine["client_id"], "client_secret": "guess"},
                {"grant_type": "authorization_code", "code": f"made-up-{index}", "client_id": "nobody"},
                {"grant_type": "refresh_token", "refresh_token": f"made-up-{index}", "client_id": "nobody"},
            ][index % 3]
            answer = client.post("/oauth/token", data=refused, environ_base=address)
        else:
            answer = client.post(
                "/oauth/token",
                data={"grant_type": "client_credentials", "resource": RESOURCE},
                auth=(machine["client_id"], machine["client_secret"]),
                environ_base=address,
            )
        statuses[str(answer.status_code)] = statuses.get(str(answer.status_code), 0) + 1
    return statuses


def main(argv: list[str] | None = None) -> dict[str, t.Any]:
    """Run the measurement; prints and returns its report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--database", default=None, help="SQLAlchemy URL (default: SQLite in a temporary folder)")
    parser.add_argument("--json", default=None, help="also write the report to this file")
    arguments = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        app = build(arguments.database or f"sqlite:///{folder}/oauth.sqlite3")
        # The machine client's budget of successes is per client: raised here, since one client sends them all.
        app.extensions["flask_mcp.oauth"].limits.per_client = None
        state = app.extensions["flask_mcp.oauth"]
        store, settings = state.store, state.settings
        started = time.perf_counter()
        statuses = flood(app, arguments.requests)
        flood_seconds = time.perf_counter() - started
        grown = store.row_counts()
        now = store.clock()
        store.clock = lambda: now + settings.refresh_token_ttl + 2 * 86400
        sweeps: list[float] = []
        while True:
            began = time.perf_counter()
            report = prune(store, unused_client_ttl=settings.unused_client_ttl, batch=settings.prune_batch)
            sweeps.append(time.perf_counter() - began)
            if not report.full(settings.prune_batch):
                break
        after = store.row_counts()
    result = {
        "requests": arguments.requests,
        "statuses": statuses,
        "requests_per_second": round(arguments.requests / flood_seconds),
        "rows_after_flood": grown,
        "rows_after_expiry_and_sweeps": after,
        "sweeps": len(sweeps),
        "batch": settings.prune_batch,
        "sweep_ms_median": round(statistics.median(sweeps) * 1000, 1),
        "sweep_ms_max": round(max(sweeps) * 1000, 1),
    }
    print(json.dumps(result, indent=2))
    if arguments.json:
        Path(arguments.json).write_text(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
