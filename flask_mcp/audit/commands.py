"""``flask mcp audit``: the audit trail, filtered, as a table or one JSON object a line."""

from __future__ import annotations

import datetime
import json
import sys
import time

import click
from flask import current_app
from flask.cli import with_appcontext

from ..cli.output import print_table
from ..core.audit import OUTCOMES
from .installed import audit_log_of

__all__ = ["audit_command"]

_HEADERS = ("time", "principal", "client", "surface", "tool", "approval", "outcome", "ms")


@click.command("audit")
@click.option("--tool", default=None, metavar="NAME", help="Only calls of this tool (or prompt, or URI read).")
@click.option("--principal", default=None, metavar="ID", help="Only calls of this caller (its subject).")
@click.option("--client", default=None, metavar="ID", help="Only calls through this client (OAuth client id or name).")
@click.option(
    "--since", default=None, metavar="WHEN", help="Only calls since: an age (45s, 30m, 1h, 2d, 1w) or an ISO date."
)
@click.option("--outcome", type=click.Choice(OUTCOMES), default=None, help="Only calls that ended this way.")
@click.option(
    "--limit", type=click.IntRange(1, 10_000), default=50, show_default=True, help="The newest N calls at most."
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object a line instead of a table.")
@with_appcontext
def audit_command(
    tool: str | None,
    principal: str | None,
    client: str | None,
    since: str | None,
    outcome: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """Show the calls the audit trail recorded (MCP_AUDIT), newest first."""
    log = audit_log_of(current_app)
    if log is None:
        raise click.UsageError("the audit trail is off: set MCP_AUDIT = True in the app's config")
    from .reading import as_json_ready, parse_since, read_records  # SQLAlchemy, there with the trail

    try:
        after = None if since is None else parse_since(since, time.time())
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--since") from None
    log.writer.flush()  # what this process has buffered is written before it is read
    records = read_records(
        log.engine, tool=tool, principal=principal, client=client, outcome=outcome, since=after, limit=limit
    )
    if as_json:
        for record in records:
            click.echo(json.dumps(as_json_ready(record), sort_keys=True))
        return
    rows = [
        (
            datetime.datetime.fromtimestamp(record.time, tz=datetime.UTC).strftime("%Y-%m-%d %H:%M:%S"),
            record.principal or "-",
            record.client or "-",
            record.surface,
            record.tool,
            record.approval if record.approval_mode is None else f"{record.approval} ({record.approval_mode})",
            record.outcome if record.error_code is None else f"{record.outcome} ({record.error_code})",
            f"{record.duration_ms:.1f}",
        )
        for record in records
    ]
    print_table("Calls", _HEADERS, rows, sys.stdout.isatty(), first=True)
