"""``flask mcp call``: output choices, progress and log notifications on stderr, and plain help texts."""

from __future__ import annotations

import json
import re
import typing as t

import click
import pytest
from flask import Flask
from flask.testing import FlaskCliRunner

from flask_mcp import MCP, Context
from flask_mcp.cli import output as cli_output
from flask_mcp.cli.commands import mcp_group
from flask_mcp.cli.output import NotificationPrinter, plain_help

from ..stdio_app import app as stdio_app

#: An ANSI colour (SGR foreground) sequence: 30-37 and 90-97.
COLOUR = re.compile(r"\x1b\[(?:3[0-7]|9[0-7])m")


@pytest.fixture
def steps_app(make_app: t.Callable[..., Flask], mcp: MCP) -> Flask:
    """A tool that reports progress 3 times and logs at three levels."""

    @mcp.tool
    def crunch(steps: int, ctx: Context) -> dict[str, int]:
        for step in range(1, steps + 1):
            ctx.report_progress(step, total=steps, message=f"step {step}")
        ctx.debug("details")
        ctx.info("crunched")
        ctx.warning("running hot")
        return {"done": steps}

    return make_app(mcp)


def test_progress_is_a_bar_on_a_terminal_and_stdout_holds_the_result_only(
    steps_app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli_output, "stderr_is_terminal", lambda: True)
    monkeypatch.delenv("NO_COLOR", raising=False)
    result = steps_app.test_cli_runner().invoke(args=["mcp", "call", "crunch", "steps=3", "--structured"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"done": 3}
    err = result.stderr
    assert "━" in err  # the bar, redrawn for each notification
    assert [label for label in ("1/3 step 1", "2/3 step 2", "3/3 step 3") if label in err] == [
        "1/3 step 1",
        "2/3 step 2",
        "3/3 step 3",
    ]
    assert err.index("1/3 step 1") < err.index("2/3 step 2") < err.index("3/3 step 3")
    assert COLOUR.search(err)  # levels are coloured
    assert "\x1b[33mwarning\x1b[0m: running hot" in err
    assert "crunched" in err and "details" not in err  # --log-level info by default


def test_no_color_keeps_the_bar_and_drops_the_colours(steps_app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli_output, "stderr_is_terminal", lambda: True)
    monkeypatch.setenv("NO_COLOR", "1")
    result = steps_app.test_cli_runner().invoke(args=["mcp", "call", "crunch", "steps=3"])
    assert result.exit_code == 0, result.output
    assert "━" in result.stderr and "3/3 step 3" in result.stderr
    assert not COLOUR.search(result.stderr)
    assert "warning: running hot" in result.stderr


def test_off_a_terminal_notifications_are_plain_lines(steps_app: Flask) -> None:
    result = steps_app.test_cli_runner().invoke(args=["mcp", "call", "crunch", "steps=3", "--raw"])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        "progress: 1/3 (33%) step 1",
        "progress: 2/3 (67%) step 2",
        "progress: 3/3 (100%) step 3",
        "info: crunched",
        "warning: running hot",
    ]
    assert "\x1b" not in result.stderr
    assert json.loads(result.stdout) == {"done": 3}  # --raw: the text block holds the JSON


@pytest.mark.parametrize("era", ["modern", "handshake"])
@pytest.mark.parametrize(
    ("level", "shown"),
    [("debug", ["debug: details", "info: crunched", "warning: running hot"]), ("warning", ["warning: running hot"])],
)
def test_log_level_sets_the_least_severe_message_shown(
    steps_app: Flask, era: str, level: str, shown: list[str]
) -> None:
    args = ["mcp", "call", "crunch", "steps=1", "--era", era, "--log-level", level]
    result = steps_app.test_cli_runner().invoke(args=args)
    assert result.exit_code == 0, result.output
    assert [line for line in result.stderr.splitlines() if not line.startswith("progress:")] == shown


def test_notifications_are_shown_while_the_tool_runs(
    make_app: t.Callable[..., Flask], mcp: MCP, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[str] = []
    shown = NotificationPrinter.notify

    def notify(self: NotificationPrinter, method: str, params: dict[str, t.Any]) -> None:
        events.append(method)
        shown(self, method, params)

    monkeypatch.setattr(NotificationPrinter, "notify", notify)

    @mcp.tool
    def slow(ctx: Context) -> str:
        events.append("tool starts")
        ctx.report_progress(1, total=2)
        events.append("tool goes on")
        ctx.info("half")
        events.append("tool returns")
        return "ok"

    result = make_app(mcp).test_cli_runner().invoke(args=["mcp", "call", "slow", "--raw"])
    assert result.exit_code == 0, result.output
    assert events == [
        "tool starts",
        "notifications/progress",
        "tool goes on",
        "notifications/message",
        "tool returns",
    ]
    assert result.stdout == "ok\n"


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ([], "result"),
        (["--json"], "result"),
        (["--output", "result"], "result"),
        (["--raw"], "text"),
        (["--text"], "text"),
        (["--output", "text"], "text"),
        (["--structured"], "structured"),
        (["--output", "structured"], "structured"),
        (["--text", "--output", "text"], "text"),  # two spellings of one choice
    ],
)
def test_output_flags_are_spellings_of_output(flags: list[str], expected: str) -> None:
    runner = stdio_app.test_cli_runner()
    result = runner.invoke(args=["mcp", "call", "add", "a=1", "b=2", *flags])
    assert result.exit_code == 0, result.output
    assert (
        result.stdout
        == {
            "result": runner.invoke(args=["mcp", "call", "add", "a=1", "b=2", "--output", "result"]).stdout,
            "text": "3\n",
            "structured": '{\n  "result": 3\n}\n',
        }[expected]
    )
    if expected == "result":
        assert json.loads(result.stdout)["structuredContent"] == {"result": 3}


@pytest.mark.parametrize("flags", [["--json", "--raw"], ["--structured", "--output", "text"]])
def test_output_flags_that_disagree_are_refused(flags: list[str]) -> None:
    result = stdio_app.test_cli_runner().invoke(args=["mcp", "call", "add", "a=1", "b=2", *flags])
    assert result.exit_code == 2
    assert "ask for different outputs" in result.stderr and result.stdout == ""


def _every_command(group: click.Group, path: tuple[str, ...] = ("mcp",)) -> t.Iterator[tuple[str, ...]]:
    yield path
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from _every_command(command, (*path, name))
        else:
            yield (*path, name)


def test_no_help_output_shows_rest_markup() -> None:
    runner = FlaskCliRunner(stdio_app)
    paths = list(_every_command(mcp_group))
    assert len(paths) == 1 + len(mcp_group.commands)
    for path in paths:
        result = runner.invoke(args=[*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
        assert "``" not in result.output, path
        assert not re.search(r":(?:func|class|mod|meth|attr|data|ref|doc):", result.output), (path, result.output)
    # The cgi docstring cross-references its module: the help keeps the name.
    cgi_help = " ".join(runner.invoke(args=["mcp", "cgi", "--help"]).output.split())
    assert "(see flask_mcp.transport.cgi)" in cgi_help


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("Serve ``flask mcp stdio``.", "Serve flask mcp stdio."),
        ("See :func:`flask_mcp.serve_stdio`.", "See flask_mcp.serve_stdio."),
        ("A :class:`~flask_mcp.Context` handler", "A Context handler"),
        ("Read :doc:`the guide <stdio>` first", "Read the guide first"),
        ("An :py:meth:`~a.B.c` call", "An c call"),
        ("For example::\n\n    x", "For example:\n\n    x"),
        ("Plain text stays: as it is.", "Plain text stays: as it is."),
    ],
)
def test_plain_help_strips_inline_markup(text: str, plain: str) -> None:
    assert plain_help(text) == plain
