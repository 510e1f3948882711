"""``flask mcp``: inspect, call, serve and install the app's MCP server from the command line.

The extension adds the group to every app it is set up on::

    flask --app app.py mcp list                    # tools, resources, templates, prompts
    flask --app app.py mcp inspect                 # the same, with their schemas
    flask --app app.py mcp call add a=1 b=2        # or one JSON object: '{"a": 1, "b": 2}'
    flask --app app.py mcp read notes://1
    flask --app app.py mcp prompt review code='x = 1'   # render a prompt's messages
    flask --app app.py mcp stdio                   # serve MCP on stdin/stdout
    flask --app app.py mcp dev                     # run with reload and debugger; how to open the Inspector
    flask --app app.py mcp install claude-desktop  # the client entry that launches it
    flask --app app.py mcp openapi --format yaml   # the REST routes' OpenAPI document
    flask --app app.py mcp cgi                     # answer one CGI request

``list``, ``inspect``, ``call``, ``read`` and ``prompt`` talk to the protocol core
directly, without HTTP (:mod:`flask_mcp.cli.client`); a running handler's
progress and log messages are drawn on stderr (:mod:`flask_mcp.cli.output`).
"""

from __future__ import annotations

import base64
import json
import sys
import typing as t

import click
from flask import current_app
from flask.cli import AppGroup, NoAppException, ScriptInfo

from ..core.approval import APPROVAL_KEY
from ..globals import servers_of, state_of, use_server
from ..transport.cgi import serve_cgi
from ..transport.rest import RestSite
from ..transport.stdio import serve_stdio
from .arguments import ArgumentError, parse_arguments
from .client import (
    answers_option,
    caller,
    era_option,
    json_object,
    list_all,
    log_level_option,
    request_with_rounds,
    token_option,
)
from .dev import dev_command
from .inspect import inspect_command
from .install import install_command
from .output import NotificationPrinter, output_choice, output_options, plain_table, print_result, summary
from .output import strip_help_markup as _strip_help_markup
from .prompt import prompt_command

if t.TYPE_CHECKING:
    from flask import Flask

__all__ = ["EXTRA_COMMANDS", "MCPGroup", "mcp_group"]


#: Where an app keeps ``flask mcp`` subcommands of its own, by name (the OAuth server's ``oauth``).
EXTRA_COMMANDS = "flask_mcp.commands"


class MCPGroup(AppGroup):
    """The ``mcp`` group: its own commands, and those the loaded app's extensions add.

    They are read from ``app.extensions[EXTRA_COMMANDS]`` of the app being run, so one
    app's commands never show up on another's.
    """

    def _extra(self, ctx: click.Context) -> dict[str, click.Command]:
        try:
            app = ctx.ensure_object(ScriptInfo).load_app()
        except NoAppException:
            return {}
        return t.cast("dict[str, click.Command]", app.extensions.get(EXTRA_COMMANDS, {}))

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self._extra(ctx)})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return super().get_command(ctx, cmd_name) or self._extra(ctx).get(cmd_name)


@click.group("mcp", cls=MCPGroup)
@click.option(
    "--server",
    envvar="FLASK_MCP_SERVER",
    default=None,
    metavar="NAME",
    help="Which of the app's MCP servers, by blueprint name (env FLASK_MCP_SERVER); default: the first set up.",
)
@click.pass_context
def mcp_group(ctx: click.Context, server: str | None) -> None:
    """Inspect, call, serve and install the app's MCP server."""
    if server is None:
        return
    app = ctx.ensure_object(ScriptInfo).load_app()
    try:
        servers_of(app).named(server)
    except RuntimeError as exc:
        raise click.BadParameter(str(exc), param_hint="--server") from None
    ctx.with_resource(use_server(server))


def _app() -> Flask:
    return t.cast("Flask", current_app._get_current_object())  # type: ignore[attr-defined]


@mcp_group.command("list")
@era_option
@token_option
def list_command(era: str, token: str | None) -> None:
    """List the tools, resources, resource templates and prompts."""
    app = _app()
    who = caller(app, token)
    tools = list_all(app, "tools/list", "tools", era, who)
    resources = list_all(app, "resources/list", "resources", era, who)
    templates = list_all(app, "resources/templates/list", "resourceTemplates", era, who)
    prompts = list_all(app, "prompts/list", "prompts", era, who)
    sections = [
        plain_table("Tools", ("NAME", "DESCRIPTION"), [(x["name"], summary(x.get("description"))) for x in tools]),
        plain_table(
            "Resources",
            ("URI", "NAME", "MIME TYPE"),
            [(x["uri"], x["name"], x.get("mimeType", "")) for x in resources],
        ),
        plain_table(
            "Resource templates",
            ("URI TEMPLATE", "NAME", "MIME TYPE"),
            [(x["uriTemplate"], x["name"], x.get("mimeType", "")) for x in templates],
        ),
        plain_table(
            "Prompts",
            ("NAME", "ARGUMENTS", "DESCRIPTION"),
            [
                (
                    x["name"],
                    ", ".join(a["name"] + ("" if a.get("required") else "?") for a in x.get("arguments", [])),
                    summary(x.get("description")),
                )
                for x in prompts
            ],
        ),
    ]
    click.echo("\n\n".join(sections))


@mcp_group.command("call")
@click.argument("name")
@click.argument("arguments", nargs=-1, metavar="[JSON | KEY=VALUE...]")
@output_options
@era_option
@log_level_option
@answers_option
@token_option
@click.option("--yes", is_flag=True, help="Approve the call of a tool that asks for approval (confirm=) unasked.")
@click.pass_context
def call_command(
    ctx: click.Context,
    name: str,
    arguments: tuple[str, ...],
    era: str,
    log_level: str,
    answers: str | None,
    token: str | None,
    yes: bool,
) -> None:
    """Call the tool NAME and print the result.

    The arguments are one JSON object ('{"a": 1}') or KEY=VALUE pairs (a=1 b=2),
    each value read as the tool's input schema types it. The tool's progress
    (a bar in a terminal) and log messages go to stderr, the result to stdout.
    The exit code is 1 when the tool reports an error (isError). A tool that
    needs approval asks y/N in a terminal; without one, --yes approves.
    """
    choice = output_choice(ctx)
    app = _app()
    tool = state_of(app).server.registry.tools.get(name)
    try:
        parsed = parse_arguments(arguments, tool.descriptor["inputSchema"] if tool is not None else {})
    except ArgumentError as exc:
        raise click.BadParameter(str(exc), param_hint="ARGUMENTS") from None
    given = {} if answers is None else json_object(answers, "--answers", "a JSON object of answers by key")
    if yes:
        given.setdefault(APPROVAL_KEY, {"action": "accept"})
    params = {"name": name, "arguments": parsed}
    printer = NotificationPrinter(label=name)
    result = request_with_rounds(app, "tools/call", params, era, given, caller(app, token), printer, log_level)
    print_result(result, choice)
    if result.get("isError"):
        sys.exit(1)


@mcp_group.command("read")
@click.argument("uri")
@era_option
@log_level_option
@answers_option
@token_option
def read_command(uri: str, era: str, log_level: str, answers: str | None, token: str | None) -> None:
    """Read the resource URI and print its contents.

    Text is printed as is; binary contents are written as raw bytes.
    """
    given = {} if answers is None else json_object(answers, "--answers", "a JSON object of answers by key")
    app = _app()
    printer = NotificationPrinter(label=uri)
    result = request_with_rounds(
        app, "resources/read", {"uri": uri}, era, given, caller(app, token), printer, log_level
    )
    for content in result["contents"]:
        if "text" in content:
            click.echo(content["text"])
        else:
            click.echo(base64.b64decode(content.get("blob", "")), nl=False)  # bytes go to the binary stream


@mcp_group.command("stdio", short_help="Serve MCP over stdin and stdout.")
@token_option
def stdio_command(token: str | None) -> None:
    """Serve MCP over stdin and stdout (how desktop clients launch local servers).

    Every message is handled as the caller of --token (or $FLASK_MCP_TOKEN,
    or MCP_LOCAL_PRINCIPAL), checked once at start.
    """
    app = _app()
    serve_stdio(app, principal=caller(app, token))


@mcp_group.command("openapi", short_help="Print the OpenAPI document of the REST routes.")
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, writable=True),
    help="Write the document to this file instead of stdout.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["json", "yaml"]),
    default="json",
    show_default=True,
    help="YAML needs PyYAML (the flask-mcp[yaml] extra).",
)
def openapi_command(output: str | None, fmt: str) -> None:
    """Print the OpenAPI document of the REST routes (as served at <prefix>/openapi.json)."""
    app = _app()
    site: RestSite | None = state_of(app).rest_site
    if site is None:
        raise click.ClickException("the REST routes are disabled (MCP_REST_ENABLED), so there is no OpenAPI document")
    # Through the wire encoding, so the output holds exactly what the route serves.
    document = json.loads(site.document.encoded())
    if fmt == "yaml":
        try:
            import yaml
        except ImportError:
            raise click.ClickException(
                "--format yaml needs PyYAML: pip install 'flask-mcp[yaml]' (or pip install PyYAML)"
            ) from None
        text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
    else:
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    if output is None:
        click.echo(text, nl=False)
    else:
        with open(output, "w", encoding="utf-8") as file:
            file.write(text)


@mcp_group.command("cgi", short_help="Answer one CGI request.")
def cgi_command() -> None:
    """Answer one CGI request: run by a web server, per request (see :mod:`flask_mcp.transport.cgi`)."""
    serve_cgi(_app())


mcp_group.add_command(dev_command)
mcp_group.add_command(inspect_command)
mcp_group.add_command(install_command)
mcp_group.add_command(prompt_command)
# Docstrings are reST for the API documentation; --help shows them as plain text.
_strip_help_markup(mcp_group)
