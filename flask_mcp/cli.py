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
:func:`flask_mcp.transport.stdio.message_context`), in the current revision
(2026-07-28) unless ``--era handshake`` is given. A tool that asks the
user something (an ``input_required`` round) is answered from ``--answers``
or, for a form in a terminal, by prompting for each field.
"""

from __future__ import annotations

import base64
import json
import sys
import typing as t

import click
from flask import current_app
from flask.cli import AppGroup

from .auth.local import TOKEN_ENV, LocalAuthError, local_principal
from .cli_arguments import ArgumentError, parse_arguments
from .core.client import ClientState
from .globals import state_of
from .protocol import jsonrpc
from .protocol.envelope import CLIENT_CAPABILITIES, CLIENT_INFO, LOG_LEVEL, PROTOCOL_VERSION
from .protocol.jsonrpc import MCPError
from .protocol.versions import MODERN_PROTOCOL_VERSIONS
from .transport.cgi import serve_cgi
from .transport.rest import EXTENSION_KEY as REST_KEY
from .transport.rest import RestSite
from .transport.stdio import message_context, serve_stdio

if t.TYPE_CHECKING:
    from flask import Flask

    from .policies.principal import Principal


__all__ = ["mcp_group"]

#: Longest description shown by ``flask mcp list``.
DESCRIPTION_WIDTH = 60
#: Rounds of input a call may take before the command gives up.
MAX_ROUNDS = 10
#: What the command line can answer: forms (prompted or given), and anything given with --answers.
CLI_CAPABILITIES: dict[str, t.Any] = {"elicitation": {}, "sampling": {}, "roots": {}}

era_option = click.option(
    "--era",
    type=click.Choice(["modern", "handshake"]),
    default="modern",
    show_default=True,
    help="The protocol era of the request: 2026-07-28 (modern) or the handshake era's.",
)
token_option = click.option(
    "--token",
    default=None,
    metavar="TOKEN",
    help=f"The caller's access token, checked by the app's auth backend (default: ${TOKEN_ENV}; "
    "without one, MCP_LOCAL_PRINCIPAL or nobody).",
)
answers_option = click.option(
    "--answers",
    default=None,
    metavar="JSON",
    help='Answers to the tool\'s questions by key, e.g. \'{"user_name": {"action": "accept", "content": {...}}}\'.',
)

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


def _caller(app: Flask, token: str | None) -> Principal | None:
    """The principal of this command (:mod:`flask_mcp.auth.local`), or a usage error saying why not."""
    try:
        return local_principal(app, token)
    except LocalAuthError as exc:
        raise click.ClickException(str(exc)) from None


def _request(
    app: Flask, method: str, params: dict[str, t.Any], era: str = "handshake", principal: Principal | None = None
) -> dict[str, t.Any]:
    """Send one request through the protocol core; return its result or raise ``ClickException``."""
    state = state_of(app)
    if era == "modern":
        meta = {
            PROTOCOL_VERSION: MODERN_PROTOCOL_VERSIONS[0],
            CLIENT_CAPABILITIES: CLI_CAPABILITIES,
            CLIENT_INFO: {"name": "flask mcp", "version": "1"},
            LOG_LEVEL: "debug",  # every log message goes to stderr, as in the handshake era
        }
        params = {**params, "_meta": meta}
    message = jsonrpc.Request(id=1, method=method, params=params)
    channel = _ConsoleChannel() if state.server.needs_channel(message) else None
    with message_context(app):
        response = t.cast(dict[str, t.Any], state.server.handle(message, ClientState(), channel, principal))
    # Through the wire encoding, so the output is exactly what a client would see.
    response = json.loads(state.server.serialize(response))
    if "error" in response:
        error = response["error"]
        detail = f" ({jsonrpc.dumps(error['data'])})" if error.get("data") is not None else ""
        hint = ""
        if error["code"] == jsonrpc.PERMISSION_DENIED and principal is None and state.auth is not None:
            hint = f"; give the caller's token with --token or ${TOKEN_ENV}, or set MCP_LOCAL_PRINCIPAL"
        raise click.ClickException(f"{error['message']} [{error['code']}]{detail}{hint}")
    return t.cast(dict[str, t.Any], response["result"])


def _json_object(text: str, hint: str, what: str = "a JSON object") -> dict[str, t.Any]:
    """*text* parsed as a JSON object, or a usage error naming the option or argument *hint*."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise click.BadParameter(f"not valid JSON: {exc}", param_hint=hint) from None
    if not isinstance(value, dict):
        raise click.BadParameter(f"must be {what}", param_hint=hint)
    return value


def _answer(key: str, request: dict[str, t.Any], given: dict[str, t.Any]) -> t.Any:
    """The answer to one input request: given, or prompted for (a form, in a terminal)."""
    if key in given:
        return given[key]
    params = request.get("params") or {}
    schema = params.get("requestedSchema")
    if request.get("method") != "elicitation/create" or not isinstance(schema, dict) or not sys.stdin.isatty():
        raise click.ClickException(
            f"the tool asks for {request.get('method')} (key {key!r}); answer it with --answers '{{\"{key}\": ...}}'"
        )
    click.echo(params.get("message", ""), err=True)
    content: dict[str, t.Any] = {}
    for name, field in (schema.get("properties") or {}).items():
        kind = {"integer": int, "number": float, "boolean": bool}.get(field.get("type"), str)
        content[name] = click.prompt(field.get("title") or name, type=kind, default=field.get("default"), err=True)
    return {"action": "accept", "content": content}


def _request_with_rounds(
    app: Flask, method: str, params: dict[str, t.Any], era: str, answers: dict[str, t.Any], principal: Principal | None
) -> dict[str, t.Any]:
    """:func:`_request`, answering ``input_required`` rounds and sending the request again."""
    result = _request(app, method, params, era, principal)
    for _ in range(MAX_ROUNDS):
        if result.get("resultType") != "input_required":
            return result
        responses = {key: _answer(key, request, answers) for key, request in result["inputRequests"].items()}
        retry = {**params, "inputResponses": responses, "requestState": result["requestState"]}
        result = _request(app, method, retry, era, principal)
    raise click.ClickException(f"the request still asked for input after {MAX_ROUNDS} rounds")


def _list_all(
    app: Flask, method: str, key: str, era: str = "handshake", principal: Principal | None = None
) -> list[dict[str, t.Any]]:
    items: list[dict[str, t.Any]] = []
    params: dict[str, t.Any] = {}
    while True:
        result = _request(app, method, params, era, principal)
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
@era_option
@token_option
def list_command(era: str, token: str | None) -> None:
    """List the tools, resources, resource templates and prompts."""
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    caller = _caller(app, token)
    tools = _list_all(app, "tools/list", "tools", era, caller)
    resources = _list_all(app, "resources/list", "resources", era, caller)
    templates = _list_all(app, "resources/templates/list", "resourceTemplates", era, caller)
    prompts = _list_all(app, "prompts/list", "prompts", era, caller)
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
@click.argument("arguments", nargs=-1, metavar="[JSON | KEY=VALUE...]")
@click.option(
    "--output",
    type=click.Choice(["result", "text", "structured"]),
    default="result",
    show_default=True,
    help="The whole result as JSON, the text of its content blocks, or its structuredContent as JSON.",
)
@era_option
@answers_option
@token_option
def call_command(
    name: str, arguments: tuple[str, ...], output: str, era: str, answers: str | None, token: str | None
) -> None:
    """Call the tool NAME and print the result.

    The arguments are one JSON object ('{"a": 1}') or KEY=VALUE pairs (a=1 b=2),
    each value read as the tool's input schema types it. The exit code is 1
    when the tool reports an error (isError).
    """
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    tool = state_of(app).server.registry.tools.get(name)
    try:
        parsed = parse_arguments(arguments, tool.descriptor["inputSchema"] if tool is not None else {})
    except ArgumentError as exc:
        raise click.BadParameter(str(exc), param_hint="ARGUMENTS") from None
    given = {} if answers is None else _json_object(answers, "--answers", "a JSON object of answers by key")
    result = _request_with_rounds(
        app, "tools/call", {"name": name, "arguments": parsed}, era, given, _caller(app, token)
    )
    if output == "text":
        click.echo(
            "\n".join(block.get("text", "") for block in result.get("content", []) if block.get("type") == "text")
        )
    elif output == "structured":
        click.echo(json.dumps(result.get("structuredContent"), indent=2, ensure_ascii=False))
    else:
        click.echo(json.dumps(result, indent=2, ensure_ascii=False))
    if result.get("isError"):
        sys.exit(1)


@mcp_group.command("read")
@click.argument("uri")
@era_option
@answers_option
@token_option
def read_command(uri: str, era: str, answers: str | None, token: str | None) -> None:
    """Read the resource URI and print its contents.

    Text is printed as is; binary contents are written as raw bytes.
    """
    given = {} if answers is None else _json_object(answers, "--answers", "a JSON object of answers by key")
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    result = _request_with_rounds(app, "resources/read", {"uri": uri}, era, given, _caller(app, token))
    for content in result["contents"]:
        if "text" in content:
            click.echo(content["text"])
        else:
            click.echo(base64.b64decode(content.get("blob", "")), nl=False)  # bytes go to the binary stream


@mcp_group.command("stdio")
@token_option
def stdio_command(token: str | None) -> None:
    """Serve MCP over stdin and stdout (how desktop clients launch local servers).

    Every message is handled as the caller of --token (or $FLASK_MCP_TOKEN,
    or MCP_LOCAL_PRINCIPAL), checked once at start.
    """
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    serve_stdio(app, principal=_caller(app, token))


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
