"""``flask mcp``: inspect and call the app's MCP server from the command line.

The extension adds the group to every app it is set up on::

    flask --app app.py mcp list                    # tools, resources, templates, prompts
    flask --app app.py mcp call add '{"a": 1, "b": 2}'
    flask --app app.py mcp read notes://1
    flask --app app.py mcp stdio                   # serve MCP on stdin/stdout
    flask --app app.py mcp openapi --format yaml   # the REST routes' OpenAPI document
    flask --app app.py mcp cgi                     # answer one CGI request

``list``, ``call`` and ``read`` talk to the protocol core directly (no HTTP):
each sends one request, handled in the same kind of request context as over stdio (see
:func:`flask_mcp.transport.stdio.message_context`).
"""

from __future__ import annotations

import base64
import json
import sys
import typing as t

import click
from flask import current_app
from flask.cli import AppGroup

from .core.client import ClientState
from .globals import state_of
from .protocol import jsonrpc
from .protocol.jsonrpc import MCPError
from .transport.cgi import serve_cgi
from .transport.rest import EXTENSION_KEY as REST_KEY
from .transport.rest import RestSite
from .transport.stdio import message_context, serve_stdio

if t.TYPE_CHECKING:
    from flask import Flask


__all__ = ["mcp_group"]

#: Longest description shown by ``flask mcp list``.
DESCRIPTION_WIDTH = 60

mcp_group = AppGroup("mcp", help="Inspect, call and serve the app's MCP server.")


class _ConsoleChannel:
    """Lets a handler that takes a Context run: its notifications go to stderr."""

    def notify(self, method: str, params: dict[str, t.Any]) -> None:
        """Echo the notification on stderr."""
        click.echo(f"{method}: {jsonrpc.dumps(params)}", err=True)

    def request(self, method: str, params: dict[str, t.Any], timeout: float) -> dict[str, t.Any]:
        """Never called: :meth:`unavailable` refuses first."""
        raise MCPError(jsonrpc.INTERNAL_ERROR, f"{method} needs a connected client")

    def cancelled(self) -> bool:
        """Nothing cancels a command-line call."""
        return False

    def close_stream(self) -> None:
        """No stream to close."""

    def unavailable(self) -> str | None:
        """No client can answer sampling, elicitation or roots requests here."""
        return "a connected client (not available from the command line)"


def _request(app: Flask, method: str, params: dict[str, t.Any]) -> dict[str, t.Any]:
    """Send one request through the protocol core; return its result or raise ``ClickException``."""
    state = state_of(app)
    message = jsonrpc.Request(id=1, method=method, params=params)
    channel = _ConsoleChannel() if state.server.needs_channel(message) else None
    with message_context(app):
        response = t.cast(dict[str, t.Any], state.server.handle(message, ClientState(), channel))
    # Through the wire encoding, so the output is exactly what a client would see.
    response = json.loads(state.server.serialize(response))
    if "error" in response:
        error = response["error"]
        detail = f" ({jsonrpc.dumps(error['data'])})" if error.get("data") is not None else ""
        raise click.ClickException(f"{error['message']} [{error['code']}]{detail}")
    return t.cast(dict[str, t.Any], response["result"])


def _list_all(app: Flask, method: str, key: str) -> list[dict[str, t.Any]]:
    items: list[dict[str, t.Any]] = []
    params: dict[str, t.Any] = {}
    while True:
        result = _request(app, method, params)
        items.extend(result[key])
        if "nextCursor" not in result:
            return items
        params = {"cursor": result["nextCursor"]}


def _summary(text: str | None) -> str:
    first = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return first if len(first) <= DESCRIPTION_WIDTH else first[: DESCRIPTION_WIDTH - 3] + "..."


def _table(title: str, headers: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    """A titled plain-text table with aligned columns."""
    if not rows:
        return f"{title}: none"
    widths = [max(len(row[i]) for row in [headers, *rows]) for i in range(len(headers))]
    lines = [f"{title} ({len(rows)})"]
    for row in [headers, *rows]:
        lines.append("  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    return "\n".join(lines)


@mcp_group.command("list")
def list_command() -> None:
    """List the tools, resources, resource templates and prompts."""
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    tools = _list_all(app, "tools/list", "tools")
    resources = _list_all(app, "resources/list", "resources")
    templates = _list_all(app, "resources/templates/list", "resourceTemplates")
    prompts = _list_all(app, "prompts/list", "prompts")
    sections = [
        _table("Tools", ("NAME", "DESCRIPTION"), [(x["name"], _summary(x.get("description"))) for x in tools]),
        _table(
            "Resources",
            ("URI", "NAME", "MIME TYPE"),
            [(x["uri"], x["name"], x.get("mimeType", "")) for x in resources],
        ),
        _table(
            "Resource templates",
            ("URI TEMPLATE", "NAME", "MIME TYPE"),
            [(x["uriTemplate"], x["name"], x.get("mimeType", "")) for x in templates],
        ),
        _table(
            "Prompts",
            ("NAME", "ARGUMENTS", "DESCRIPTION"),
            [
                (
                    x["name"],
                    ", ".join(a["name"] + ("" if a.get("required") else "?") for a in x.get("arguments", [])),
                    _summary(x.get("description")),
                )
                for x in prompts
            ],
        ),
    ]
    click.echo("\n\n".join(sections))


@mcp_group.command("call")
@click.argument("name")
@click.argument("arguments", required=False, default="{}", metavar="[JSON]")
def call_command(name: str, arguments: str) -> None:
    """Call the tool NAME with JSON arguments and print the result.

    The exit code is 1 when the tool reports an error (``isError``).
    """
    try:
        parsed = json.loads(arguments)
    except ValueError as exc:
        raise click.BadParameter(f"not valid JSON: {exc}", param_hint="JSON") from None
    if not isinstance(parsed, dict):
        raise click.BadParameter("must be a JSON object", param_hint="JSON")
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    result = _request(app, "tools/call", {"name": name, "arguments": parsed})
    click.echo(json.dumps(result, indent=2, ensure_ascii=False))
    if result.get("isError"):
        sys.exit(1)


@mcp_group.command("read")
@click.argument("uri")
def read_command(uri: str) -> None:
    """Read the resource URI and print its contents.

    Text is printed as is; binary contents are written as raw bytes.
    """
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    result = _request(app, "resources/read", {"uri": uri})
    for content in result["contents"]:
        if "text" in content:
            click.echo(content["text"])
        else:
            click.echo(base64.b64decode(content.get("blob", "")), nl=False)  # bytes go to the binary stream


@mcp_group.command("stdio")
def stdio_command() -> None:
    """Serve MCP over stdin and stdout (how desktop clients launch local servers)."""
    serve_stdio(current_app._get_current_object())  # type: ignore[attr-defined]


@mcp_group.command("openapi")
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
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    site: RestSite | None = app.extensions.get(REST_KEY)
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


@mcp_group.command("cgi")
def cgi_command() -> None:
    """Answer one CGI request: run by a web server, per request (see flask_mcp.transport.cgi)."""
    serve_cgi(current_app._get_current_object())  # type: ignore[attr-defined]
