"""``flask mcp prompt NAME``: render a prompt's messages, as a client would receive them.

::

    flask mcp prompt review code='print(1)' language=python
    flask mcp prompt review '{"code": "print(1)"}'
    flask mcp prompt review code='print(1)' --json      # the whole GetPromptResult

Prompt arguments are strings (the protocol says so), so ``KEY=VALUE`` takes
the value as text, whatever it looks like. The arguments are checked against
the prompt's descriptor first, as the caller of ``--token`` lists it: an
unknown prompt fails with exit code 1 (as an unknown tool does for
``call``), a missing required argument or an argument the prompt does not
take with exit code 2 (a usage error), each saying what the prompt takes.

In a terminal the messages are drawn by rich, a rule per message naming its
role; piped, each message is a ``[role]`` line followed by its content, for
``less``, ``grep`` and files.
"""

from __future__ import annotations

import base64
import binascii
import json
import sys
import typing as t

import click
from flask import current_app
from flask.cli import with_appcontext
from rich.console import Console
from rich.text import Text

from . import output
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

if t.TYPE_CHECKING:
    from flask import Flask

__all__ = ["content_text", "prompt_command", "signature"]

#: The rich style of each message's role.
ROLE_STYLES = {"user": "bold cyan", "assistant": "bold green"}


def signature(descriptor: dict[str, t.Any]) -> str:
    """The arguments of a prompt descriptor on one line, optional ones ending in ``?``: ``code, language?``."""
    names = [a["name"] + ("" if a.get("required") else "?") for a in descriptor.get("arguments") or []]
    return ", ".join(names) or "no arguments"


def _arguments(values: tuple[str, ...], descriptor: dict[str, t.Any]) -> dict[str, str]:
    """The prompt arguments *values* spell, checked against the descriptor; a usage error otherwise."""
    # Every value is text: type each key given (known or not) as a string.
    keys = {pair.partition("=")[0] for pair in values}
    try:
        parsed = parse_arguments(values, {"properties": {key: {"type": "string"} for key in keys}})
    except ArgumentError as exc:
        raise click.BadParameter(str(exc), param_hint="ARGUMENTS") from None
    takes = f"prompt {descriptor['name']!r} takes: {signature(descriptor)}"
    not_text = sorted(key for key, value in parsed.items() if not isinstance(value, str))
    if not_text:
        raise click.BadParameter(
            f"prompt arguments are strings: give {', '.join(not_text)} as text", param_hint="ARGUMENTS"
        )
    known = {a["name"]: a for a in descriptor.get("arguments") or []}
    unknown = sorted(set(parsed) - set(known))
    if unknown:
        raise click.BadParameter(f"unknown argument {', '.join(unknown)}; {takes}", param_hint="ARGUMENTS")
    missing = [key for key, a in known.items() if a.get("required") and key not in parsed]
    if missing:
        raise click.BadParameter(f"missing required argument {', '.join(missing)}; {takes}", param_hint="ARGUMENTS")
    return t.cast(dict[str, str], parsed)


def _size(data: t.Any) -> str:
    try:
        return f"{len(base64.b64decode(str(data), validate=True))} bytes"
    except (binascii.Error, ValueError):
        return "undecodable base64"


def content_text(block: dict[str, t.Any]) -> str:
    """One content block as text: text as is, media and links as a bracketed line, embedded text after its URI."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        return f"[{kind} {block.get('mimeType', '')}, {_size(block.get('data', ''))}]"
    if kind == "resource_link":
        title = block.get("title") or block.get("name")
        return f"[link {block.get('uri', '')}{f' ({title})' if title else ''}]"
    if kind == "resource":
        resource = block.get("resource") or {}
        head = f"[resource {resource.get('uri', '')}{' ' + resource['mimeType'] if resource.get('mimeType') else ''}"
        if "text" in resource:
            return f"{head}]\n{resource['text']}"
        return f"{head}, {_size(resource.get('blob', ''))}]"
    return json.dumps(block, ensure_ascii=False)


def _show(result: dict[str, t.Any], terminal: bool) -> None:
    messages = result.get("messages") or []
    if not terminal:
        click.echo("\n\n".join(f"[{m.get('role', '')}]\n{content_text(m.get('content') or {})}" for m in messages))
        return
    console = Console(
        file=sys.stdout, highlight=False, markup=False, emoji=False, no_color=not output.colour_wanted(True)
    )
    if result.get("description"):
        console.print(Text(str(result["description"]), style="italic dim"))
    for message in messages:
        role = str(message.get("role", ""))
        console.rule(Text(role, style=ROLE_STYLES.get(role, "bold")), align="left")
        console.print(Text(content_text(message.get("content") or {})))


@click.command("prompt", short_help="Render a prompt's messages.")
@with_appcontext
@click.argument("name")
@click.argument("arguments", nargs=-1, metavar="[JSON | KEY=VALUE...]")
@click.option("--json", "as_json", is_flag=True, help="Print the whole result as JSON, as a client receives it.")
@era_option
@log_level_option
@answers_option
@token_option
def prompt_command(
    name: str,
    arguments: tuple[str, ...],
    as_json: bool,
    era: str,
    log_level: str,
    answers: str | None,
    token: str | None,
) -> None:
    """Render the prompt NAME with its arguments and print its messages.

    The arguments are one JSON object of strings ('{"code": "x = 1"}') or
    KEY=VALUE pairs, each value taken as text. The messages are drawn by rich
    in a terminal, as [role] lines and text otherwise; --json prints the
    whole result. The exit code is 1 for an unknown prompt or a refused
    request, 2 for a missing or unknown argument.
    """
    app: Flask = current_app._get_current_object()  # type: ignore[attr-defined]
    who = caller(app, token)
    prompts = list_all(app, "prompts/list", "prompts", era, who)
    descriptor = next((p for p in prompts if p.get("name") == name), None)
    if descriptor is None:
        known = ", ".join(sorted(p["name"] for p in prompts)) or "none"
        raise click.ClickException(f"no prompt is named {name!r} (the prompts: {known})")
    params = {"name": name, "arguments": _arguments(arguments, descriptor)}
    given = {} if answers is None else json_object(answers, "--answers", "a JSON object of answers by key")
    printer = output.NotificationPrinter(label=name)
    result = request_with_rounds(app, "prompts/get", params, era, given, who, printer, log_level)
    if as_json:
        click.echo(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        _show(result, output.stdout_is_terminal())
