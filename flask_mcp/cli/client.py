"""The ``flask mcp`` commands as a client of the app's protocol core.

Each request goes straight to :meth:`~flask_mcp.core.server.Server.handle`
(no HTTP), in the same kind of request context as a message over stdio
(:func:`~flask_mcp.transport.stdio.message_context`), and in the current
revision (2026-07-28) unless the handshake era is asked for. A handler that
takes a :class:`~flask_mcp.Context` gets a channel whose notifications are
handed to a listener as the handler sends them (the commands draw them on
stderr, :class:`~flask_mcp.cli.output.NotificationPrinter`). Calls ask for
progress (a ``progressToken``) and for log messages from a level on.

A tool that asks the user something (an ``input_required`` round) is
answered from ``--answers`` or, for a form in a terminal, by prompting for
each field.
"""

from __future__ import annotations

import json
import sys
import typing as t

import click

from ..auth.local import TOKEN_ENV, LocalAuthError, local_principal
from ..core.approval import APPROVAL_KEY
from ..core.client import ClientState
from ..globals import state_of
from ..protocol import jsonrpc
from ..protocol.envelope import CLIENT_CAPABILITIES, CLIENT_INFO, LOG_LEVEL, PROTOCOL_VERSION
from ..protocol.jsonrpc import MCPError
from ..protocol.versions import LOG_LEVELS, MODERN_PROTOCOL_VERSIONS
from ..transport.stdio import message_context
from .output import NotificationPrinter

if t.TYPE_CHECKING:
    from flask import Flask

    from ..policies.principal import Principal

__all__ = [
    "CLI_CAPABILITIES",
    "MAX_ROUNDS",
    "Listener",
    "answers_option",
    "caller",
    "era_option",
    "json_object",
    "list_all",
    "log_level_option",
    "on_terminal",
    "request",
    "request_with_rounds",
    "token_option",
]

#: Rounds of input a call may take before the command gives up.
MAX_ROUNDS = 10
#: What the command line can answer: forms (prompted or given), and anything given with --answers.
CLI_CAPABILITIES: dict[str, t.Any] = {"elicitation": {}, "sampling": {}, "roots": {}}
#: The progress token of every command-line request: one request runs at a time.
PROGRESS_TOKEN = "flask-mcp-cli"

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
log_level_option = click.option(
    "--log-level",
    type=click.Choice(list(LOG_LEVELS)),
    default="info",
    show_default=True,
    help="The least severe log message of the handler to show on stderr.",
)


class Listener(t.Protocol):
    """What receives the notifications of a running handler."""

    def notify(self, method: str, params: dict[str, t.Any]) -> None:
        """One notification, as the handler sent it."""

    def finish(self) -> None:
        """The request ended."""


class _ConsoleChannel:
    """Lets a handler that takes a Context run: its notifications go to the listener."""

    def __init__(self, listener: Listener) -> None:
        self.listener = listener

    def notify(self, method: str, params: dict[str, t.Any]) -> None:
        """Hand the notification on, while the handler runs."""
        self.listener.notify(method, params)

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


def caller(app: Flask, token: str | None) -> Principal | None:
    """The principal of this command (:mod:`flask_mcp.auth.local`), or a usage error saying why not."""
    try:
        return local_principal(app, token)
    except LocalAuthError as exc:
        raise click.ClickException(str(exc)) from None


def request(
    app: Flask,
    method: str,
    params: dict[str, t.Any],
    era: str = "handshake",
    principal: Principal | None = None,
    listener: Listener | None = None,
    log_level: str = "info",
) -> dict[str, t.Any]:
    """Send one request through the protocol core; return its result or raise ``ClickException``.

    :param listener: receives the handler's notifications as they are sent
        (default: a :class:`~flask_mcp.cli.output.NotificationPrinter`).
    :param log_level: the least severe log message the handler should send.
    """
    state = state_of(app)
    listener = listener if listener is not None else NotificationPrinter()
    meta: dict[str, t.Any] = {"progressToken": PROGRESS_TOKEN}
    client = ClientState(surface="cli")
    if era == "modern":
        meta.update(
            {
                PROTOCOL_VERSION: MODERN_PROTOCOL_VERSIONS[0],
                CLIENT_CAPABILITIES: CLI_CAPABILITIES,
                CLIENT_INFO: {"name": "flask mcp", "version": "1"},
                LOG_LEVEL: log_level,
            }
        )
    else:
        client.log_level = log_level  # as a logging/setLevel would have set it
    message = jsonrpc.Request(id=1, method=method, params={**params, "_meta": meta})
    channel = _ConsoleChannel(listener) if state.server.needs_channel(message) else None
    try:
        with message_context(app):
            response = t.cast(dict[str, t.Any], state.server.handle(message, client, channel, principal))
    finally:
        listener.finish()
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


def json_object(text: str, hint: str, what: str = "a JSON object") -> dict[str, t.Any]:
    """*text* parsed as a JSON object, or a usage error naming the option or argument *hint*."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise click.BadParameter(f"not valid JSON: {exc}", param_hint=hint) from None
    if not isinstance(value, dict):
        raise click.BadParameter(f"must be {what}", param_hint=hint)
    return value


def on_terminal() -> bool:
    """Whether a person can be asked: standard input is a terminal."""
    return sys.stdin.isatty()


def _answer(key: str, input_request: dict[str, t.Any], given: dict[str, t.Any]) -> t.Any:
    """The answer to one input request: given, or prompted for (a form, in a terminal)."""
    if key in given:
        return given[key]
    params = input_request.get("params") or {}
    if key == APPROVAL_KEY:
        return _approve(params)
    schema = params.get("requestedSchema")
    if input_request.get("method") != "elicitation/create" or not isinstance(schema, dict) or not on_terminal():
        raise click.ClickException(
            f"the tool asks for {input_request.get('method')} (key {key!r}); "
            f"answer it with --answers '{{\"{key}\": ...}}'"
        )
    click.echo(params.get("message", ""), err=True)
    content: dict[str, t.Any] = {}
    for name, field in (schema.get("properties") or {}).items():
        kind = {"integer": int, "number": float, "boolean": bool}.get(field.get("type"), str)
        content[name] = click.prompt(field.get("title") or name, type=kind, default=field.get("default"), err=True)
    return {"action": "accept", "content": content}


def request_with_rounds(
    app: Flask,
    method: str,
    params: dict[str, t.Any],
    era: str,
    answers: dict[str, t.Any],
    principal: Principal | None,
    listener: Listener | None = None,
    log_level: str = "info",
) -> dict[str, t.Any]:
    """:func:`request`, answering ``input_required`` rounds and sending the request again."""
    result = request(app, method, params, era, principal, listener, log_level)
    for _ in range(MAX_ROUNDS):
        if result.get("resultType") != "input_required":
            return result
        responses = {key: _answer(key, asked, answers) for key, asked in result["inputRequests"].items()}
        retry = {**params, "inputResponses": responses, "requestState": result["requestState"]}
        result = request(app, method, retry, era, principal, listener, log_level)
    raise click.ClickException(f"the request still asked for input after {MAX_ROUNDS} rounds")


def list_all(
    app: Flask, method: str, key: str, era: str = "handshake", principal: Principal | None = None
) -> list[dict[str, t.Any]]:
    """Every item of a paged ``*/list`` method, following ``nextCursor``."""
    items: list[dict[str, t.Any]] = []
    params: dict[str, t.Any] = {}
    while True:
        result = request(app, method, params, era, principal)
        items.extend(result[key])
        if "nextCursor" not in result:
            return items
        params = {"cursor": result["nextCursor"]}


def _approve(params: dict[str, t.Any]) -> dict[str, t.Any]:
    """The human's answer to a tool's approval question: y/N in a terminal, else a usage error."""
    if not on_terminal():
        raise click.ClickException(
            "the tool runs only once you approve it: run the command in a terminal to be asked, "
            "or pass --yes to approve this call"
        )
    click.echo(params.get("message", ""), err=True)
    approved = click.confirm("Run it?", default=False, err=True)
    return {"action": "accept" if approved else "decline"}
