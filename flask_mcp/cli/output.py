"""How the ``flask mcp`` commands show things: results, notifications, tables and help.

stdout carries the command's output only (a result, a listing, a client
entry), so it can be piped; everything that happens on the way, progress
and log notifications of a running handler, goes to stderr as it arrives.
In a terminal, progress is a bar and log lines are coloured by level; piped
or redirected, both are plain lines, and colours are also off when
``NO_COLOR`` is set (https://no-color.org).
"""

from __future__ import annotations

import json
import os
import re
import sys
import typing as t

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn
from rich.table import Table
from rich.text import Text

__all__ = [
    "LEVEL_STYLES",
    "NotificationPrinter",
    "advise",
    "colour_wanted",
    "output_choice",
    "output_options",
    "plain_help",
    "print_result",
    "print_table",
    "stderr_is_terminal",
    "stdout_is_terminal",
    "strip_help_markup",
    "summary",
    "warn",
]

#: Longest description shown in a table cell.
DESCRIPTION_WIDTH = 60
#: The rich style of each MCP log level (RFC 5424 severities, least severe first).
LEVEL_STYLES: dict[str, str] = {
    "debug": "dim",
    "info": "blue",
    "notice": "cyan",
    "warning": "yellow",
    "error": "red",
    "critical": "bold red",
    "alert": "bold red",
    "emergency": "bold white on red",
}


def _isatty(stream: t.Any) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty()) if callable(isatty) else False


def stderr_is_terminal() -> bool:
    """Whether stderr is a terminal: progress bars and colours are drawn only then."""
    return _isatty(sys.stderr)


def stdout_is_terminal() -> bool:
    """Whether stdout is a terminal: tables are drawn with rich only then."""
    return _isatty(sys.stdout)


def colour_wanted(terminal: bool) -> bool:
    """Colours for a terminal, unless ``NO_COLOR`` is set to anything but the empty string."""
    return terminal and not os.environ.get("NO_COLOR")


# -- warnings and advice -----------------------------------------------------------


def _on_stderr(label: str, style: dict[str, t.Any], text: str) -> None:
    head = click.style(label, **style) if colour_wanted(stderr_is_terminal()) else label
    click.echo(f"{head} {text}", err=True)


def warn(text: str) -> None:
    """Tell the user on stderr that what the command did will not work as it stands (``Warning:``, yellow)."""
    _on_stderr("Warning:", {"fg": "yellow", "bold": True}, text)


def advise(text: str) -> None:
    """Tell the user on stderr what to do next (``Note:``, cyan)."""
    _on_stderr("Note:", {"fg": "cyan", "bold": True}, text)


# -- call output choices -------------------------------------------------------------

#: Where the output options record what was asked (in ``click.Context.meta``).
_CHOSEN = "flask_mcp.output"
#: Each flag's parameter name, and the output it stands for.
_FLAGS = {"as_json": "result", "as_text": "text", "as_structured": "structured"}


def _remember(ctx: click.Context, param: click.Parameter, value: t.Any) -> None:
    # The flags are spellings of --output values. Each records itself here rather
    # than sharing --output's destination, whose arbitration differs between click
    # versions; output_choice() then refuses spellings that disagree.
    choice = value if param.name == "output" else (_FLAGS[str(param.name)] if value else None)
    if choice is not None:
        label = "/".join(param.opts) if param.name != "output" else f"--output {choice}"
        ctx.meta.setdefault(_CHOSEN, {})[label] = choice


def output_options(func: t.Callable[..., t.Any]) -> t.Callable[..., t.Any]:
    """Add ``--output result|text|structured`` and its flag spellings to a command.

    ``--json`` is ``--output result``, ``--raw`` (or ``--text``) is ``--output
    text``, ``--structured`` is ``--output structured``; read the choice with
    :func:`output_choice`.
    """
    options = [
        click.option(
            "--output",
            type=click.Choice(["result", "text", "structured"]),
            default=None,
            expose_value=False,
            callback=_remember,
            help="The whole result as JSON (the default), the text of its content blocks, "
            "or its structuredContent as JSON.",
        ),
        click.option(
            "--json", "as_json", is_flag=True, expose_value=False, callback=_remember, help="Same as --output result."
        ),
        click.option(
            "--raw",
            "--text",
            "as_text",
            is_flag=True,
            expose_value=False,
            callback=_remember,
            help="Same as --output text.",
        ),
        click.option(
            "--structured",
            "as_structured",
            is_flag=True,
            expose_value=False,
            callback=_remember,
            help="Same as --output structured.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def output_choice(ctx: click.Context) -> str:
    """The output the options of :func:`output_options` chose: ``result`` unless told otherwise.

    :raises click.UsageError: two options that ask for different outputs.
    """
    chosen: dict[str, str] = ctx.meta.get(_CHOSEN, {})
    if len(set(chosen.values())) > 1:
        raise click.UsageError(f"{' and '.join(sorted(chosen))} ask for different outputs; give one")
    return next(iter(chosen.values()), "result")


def print_result(result: dict[str, t.Any], choice: str) -> None:
    """Print a ``CallToolResult`` on stdout as *choice* says."""
    if choice == "text":
        blocks = result.get("content", [])
        click.echo("\n".join(block.get("text", "") for block in blocks if block.get("type") == "text"))
    elif choice == "structured":
        click.echo(json.dumps(result.get("structuredContent"), indent=2, ensure_ascii=False))
    else:
        click.echo(json.dumps(result, indent=2, ensure_ascii=False))


# -- notifications -------------------------------------------------------------------


def _text(data: t.Any) -> str:
    return data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _number(value: t.Any) -> str:
    return f"{value:g}" if isinstance(value, (int, float)) else str(value)


class NotificationPrinter:
    """Shows the notifications of a running handler on stderr, as they arrive.

    ``notifications/progress`` draws a bar in a terminal and a line otherwise;
    ``notifications/message`` prints ``level: data`` (coloured by level in a
    terminal); anything else prints ``method: params``.

    :param label: what the bar is labelled with (the tool's name).
    :param terminal: draw for a terminal; default: whether stderr is one.
    :param colour: use colours; default: in a terminal, unless ``NO_COLOR`` is set.
    """

    def __init__(self, label: str = "", terminal: bool | None = None, colour: bool | None = None) -> None:
        self.label = label
        self.terminal = stderr_is_terminal() if terminal is None else terminal
        self.colour = colour_wanted(self.terminal) if colour is None else colour
        self._console: Console | None = None
        self._progress: Progress | None = None
        self._task: TaskID | None = None

    @property
    def console(self) -> Console:
        """The rich console on stderr (terminal mode)."""
        if self._console is None:
            self._console = Console(
                file=sys.stderr,
                force_terminal=True,
                no_color=not self.colour,
                highlight=False,
                markup=False,
                emoji=False,
            )
        return self._console

    def notify(self, method: str, params: dict[str, t.Any]) -> None:
        """Show one notification."""
        if method == "notifications/progress":
            self._show_progress(params)
        elif method == "notifications/message":
            self._show_log(params)
        else:
            self._line(Text(f"{method}: {_text(params)}"))

    def finish(self) -> None:
        """The request ended: leave the bar as it stands, so prompts and output come after it."""
        if self._progress is not None:
            self._progress.stop()
        self._progress = self._task = None

    def _line(self, text: Text) -> None:
        if self.terminal:
            self.console.print(text)  # above the live bar, when there is one
        else:
            click.echo(text.plain, err=True)

    def _show_log(self, params: dict[str, t.Any]) -> None:
        level = str(params.get("level", "info"))
        logger = params.get("logger")
        label = f"{level} [{logger}]" if logger else level
        self._line(Text.assemble((label, LEVEL_STYLES.get(level, "")), ": ", _text(params.get("data"))))

    def _show_progress(self, params: dict[str, t.Any]) -> None:
        done, total, message = params.get("progress", 0), params.get("total"), params.get("message") or ""
        count = _number(done) if total is None else f"{_number(done)}/{_number(total)}"
        if not self.terminal:
            percent = f" ({100 * done / total:.0f}%)" if isinstance(total, (int, float)) and total > 0 else ""
            click.echo(f"progress: {count}{percent}{' ' + message if message else ''}", err=True)
            return
        if self._progress is None or self._task is None:
            self._progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TextColumn("{task.fields[count]}"),
                TextColumn("{task.fields[message]}"),
                console=self.console,
                auto_refresh=False,  # redrawn on each notification: no refresh thread to stop
                # What the handler prints stays on stdout, terminal or not; its stderr goes above the bar.
                redirect_stdout=False,
            )
            self._task = self._progress.add_task(self.label or "progress", total=total, count="", message="")
            self._progress.start()
        self._progress.update(self._task, completed=done, total=total, count=count, message=message)
        self._progress.refresh()


# -- tables --------------------------------------------------------------------------


def summary(text: str | None) -> str:
    """The first line of *text*, cut to :data:`DESCRIPTION_WIDTH`."""
    first = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return first if len(first) <= DESCRIPTION_WIDTH else first[: DESCRIPTION_WIDTH - 3] + "..."


def plain_table(title: str, headers: t.Sequence[str], rows: t.Sequence[t.Sequence[str]]) -> str:
    """A titled plain-text table with aligned columns, or ``title: none``."""
    if not rows:
        return f"{title}: none"
    widths = [max(len(row[i]) for row in [headers, *rows]) for i in range(len(headers))]
    lines = [f"{title} ({len(rows)})"]
    for row in [headers, *rows]:
        lines.append("  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    return "\n".join(lines)


def print_table(
    title: str, headers: t.Sequence[str], rows: t.Sequence[t.Sequence[str]], terminal: bool, first: bool = False
) -> None:
    """Print a table on stdout: drawn by rich in a terminal, as :func:`plain_table` text otherwise.

    :param first: no blank line before it.
    """
    if not terminal:
        click.echo(("" if first else "\n") + plain_table(title, headers, rows))
        return
    console = Console(file=sys.stdout, highlight=False, markup=False, no_color=not colour_wanted(True))
    if not first:
        console.print()
    if not rows:
        console.print(f"{title}: none")
        return
    table = Table(title=f"{title} ({len(rows)})", title_justify="left", header_style="bold")
    for header in headers:
        table.add_column(header, overflow="fold")
    for row in rows:
        table.add_row(*row)
    console.print(table)


# -- help text -----------------------------------------------------------------------

_ROLE = re.compile(r":(?:[a-z]+:)?[a-z]+:`([^`]+)`")
_EXPLICIT_TITLE = re.compile(r"(.*?)\s*<[^>]*>", re.DOTALL)


def _role_text(match: re.Match[str]) -> str:
    inner = match.group(1)
    titled = _EXPLICIT_TITLE.fullmatch(inner)
    if titled is not None:
        return titled.group(1)
    return inner[1:].rsplit(".", 1)[-1] if inner.startswith("~") else inner


def plain_help(text: str) -> str:
    """*text* without reST markup, for ``--help``.

    Inline literals lose their double backquotes; a cross-reference role
    keeps its target (its last part when written with a tilde, its title
    when it has one); a paragraph that ends in a double colon ends in one.
    """
    text = _ROLE.sub(_role_text, text).replace("``", "")
    return re.sub(r"(\S)::(\s|$)", r"\1:\2", text)


def strip_help_markup(command: click.Command) -> None:
    """Rewrite the help texts of *command*, its options and its subcommands with :func:`plain_help`.

    Command docstrings are reST for the API documentation; ``--help`` shows
    them without markup.
    """
    for name in ("help", "short_help", "epilog"):
        value = getattr(command, name, None)
        if isinstance(value, str):
            setattr(command, name, plain_help(value))
    for param in command.params:
        if isinstance(param, click.Option) and param.help:
            param.help = plain_help(param.help)
    for sub in getattr(command, "commands", {}).values():
        strip_help_markup(sub)
