"""``flask mcp dev``: run the app for development, and say how to open its endpoint in the MCP Inspector.

::

    flask --app app.py mcp dev                 # http://127.0.0.1:5000/mcp
    flask --app app.py mcp dev --port 8000

It is ``flask run --debug``: Flask's own ``run`` command, with the reloader
(the server restarts when a source file changes) and the interactive
debugger on, and the app in debug mode (``FLASK_DEBUG=1``, as ``--debug``
sets it, so the process the reloader starts loads the app in debug mode
too). Before the server starts it prints the MCP endpoint's URL and the
command that opens the MCP Inspector on it, with the transport and URL
filled in; for an app that requires a token, how to give the Inspector one,
or that the Inspector signs in by itself (:mod:`flask_mcp.cli.protection`).
The reloader runs the command again in a new process: only the first prints.
"""

from __future__ import annotations

import ipaddress
import os
import typing as t

import click
from flask.cli import ScriptInfo, run_command
from werkzeug.serving import is_running_from_reloader

from ..auth.local import TOKEN_ENV
from ..globals import state_of
from . import output
from .protection import protection_of

if t.TYPE_CHECKING:
    from flask import Flask

__all__ = ["INSPECTOR", "dev_command", "endpoint_url", "inspector_command"]

#: The MCP Inspector's npm package.
INSPECTOR = "@modelcontextprotocol/inspector"
#: The addresses that listen on every interface, and the loopback address a local client reaches them on.
_WILDCARDS = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}
#: The options of ``flask run`` that ``dev`` takes as they are.
_RUN_OPTIONS = ("host", "port", "extra_files", "exclude_patterns")


def endpoint_url(app: Flask, host: str, port: int) -> str:
    """The URL of *app*'s MCP endpoint served on *host*:*port*, as a client on this machine reaches it.

    A wildcard address (``0.0.0.0``, ``::``) listens on every interface; a
    client reaches it on loopback.
    """
    state = state_of(app)
    path = state.endpoint_path or state.settings.url_prefix or "/"
    name = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)
    try:
        if ipaddress.ip_address(name).version == 6:
            name = f"[{name}]"
    except ValueError:
        pass  # a host name
    return f"http://{name}:{port}{path}"


def inspector_command(url: str) -> str:
    """The command that opens the MCP Inspector on the Streamable HTTP endpoint *url*."""
    return f"npx {INSPECTOR} --transport http --server-url {url}"


def _banner(app: Flask, url: str) -> list[str]:
    """What ``dev`` prints before the server starts: the endpoint, the Inspector, and what a client needs."""
    colour = output.colour_wanted(output.stdout_is_terminal())

    def bold(text: str) -> str:
        return click.style(text, bold=True) if colour else text

    lines = [
        f"{bold('MCP endpoint:')} {url} (Streamable HTTP)",
        f"{bold('Open it in the MCP Inspector:')}",
        f"  {inspector_command(url)}",
    ]
    protection = protection_of(app)
    if protection.oauth:
        servers = ", ".join(protection.authorization_servers)
        lines += [
            f"  This app signs clients in with OAuth ({servers}):",
            "  the Inspector opens the sign-in page when it connects.",
        ]
    elif protection.token_required:
        lines += [
            "  This app requires a bearer token: give the Inspector one it accepts,",
            f'  adding --header "Authorization: Bearer ${TOKEN_ENV}" (or in its authentication settings).',
        ]
    return lines


@click.command(
    "dev",
    params=[param for param in run_command.params if param.name in _RUN_OPTIONS],
    short_help="Run the app for development, ready for the MCP Inspector.",
)
@click.pass_context
def dev_command(ctx: click.Context, /, host: str, port: int, **options: t.Any) -> None:
    """Run the app on a development server with the reloader and debugger, as flask run --debug does.

    Prints the MCP endpoint's URL and the npx command that opens the MCP
    Inspector on it (and, for an app that requires a token, how to give it
    one), then serves. For development only: use a production WSGI server to
    deploy.
    """
    if port == 0:
        # The banner names the URL before the server binds: a port the system picks is not known yet.
        raise click.BadParameter(
            "give a port to listen on (the Inspector needs the endpoint's URL)", param_hint="--port"
        )
    info = ctx.ensure_object(ScriptInfo)
    app = info.load_app()
    # What flask --debug does: the reloaded process inherits it and loads the app in debug mode.
    os.environ["FLASK_DEBUG"] = "1"
    app.debug = True
    if not is_running_from_reloader():
        for line in _banner(app, endpoint_url(app, host, port)):
            click.echo(line)
        click.echo()
    ctx.invoke(run_command, host=host, port=port, reload=True, debugger=True, **options)
