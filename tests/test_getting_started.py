"""docs/getting-started.rst runs as written.

The page's Python blocks carry the name of their file as a caption
(``:caption: app.py``). They are written to a fresh directory, as a reader
would save them, and then:

* the ``$ flask --app app ...`` lines of its text blocks are run there and
  print what the page shows under them;
* ``client.py``, the official SDK's client, runs against ``app.py`` served
  live (on a free port instead of 5000) and prints what its comments say;
* ``conftest.py`` and ``test_app.py`` pass under pytest, every test of them;
* the ``export`` lines of the deployment step make two workers that share a
  session through Redis, which two workers without them do not;
* every ``flask`` command of its shell blocks parses with the commands'
  own options, so none is misspelt.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import re
import shlex
import subprocess
import sys
import textwrap
import typing as t
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import click
import flask.cli
import pytest
from flask import Flask

PAGE = Path(__file__).resolve().parent.parent / "docs" / "getting-started.rst"
#: The address the page's client connects to; the test serves the app elsewhere.
PAGE_URL = "http://127.0.0.1:5000/mcp"
#: The files the page must show, each run by a test below.
FILES = {"app.py", "client.py", "conftest.py", "test_app.py"}

DIRECTIVE = re.compile(r"^(?P<indent>[ ]*)\.\. code-block:: (?P<language>\w+)[ ]*$")
OPTION = re.compile(r"^[ ]+:(?P<name>[\w-]+):[ ]*(?P<value>.*)$")


@dataclass
class Block:
    """One ``code-block`` of the page."""

    line: int
    language: str
    caption: str
    text: str


def indent_of(line: str) -> int:
    return len(line) - len(line.lstrip())


def blocks(path: Path = PAGE) -> list[Block]:
    """The ``code-block`` directives of *path*, with their options and dedented text."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    index = 0
    while index < len(lines):
        directive = DIRECTIVE.match(lines[index])
        index += 1
        if directive is None:
            continue
        start, indent, options = index, len(directive["indent"]), {}
        while index < len(lines) and (option := OPTION.match(lines[index])):
            options[option["name"]] = option["value"]
            index += 1
        body: list[str] = []
        while index < len(lines) and (not lines[index].strip() or indent_of(lines[index]) > indent):
            body.append(lines[index])
            index += 1
        text = textwrap.dedent("\n".join(body)).strip("\n") + "\n"
        found.append(Block(start, directive["language"], options.get("caption", ""), text))
    return found


BLOCKS = blocks()
PYTHON = {block.caption: block for block in BLOCKS if block.language == "python"}


def commands(language: str, program: str) -> list[tuple[list[str], list[str]]]:
    """``(argv, output lines)`` of each ``$ program ...`` line of the page's *language* blocks."""
    found: list[tuple[list[str], list[str]]] = []
    for block in BLOCKS:
        if block.language != language:
            continue
        for line in block.text.splitlines():
            text = line.removeprefix("$ ") if language == "text" else line
            if (language != "text" or line.startswith("$ ")) and text.split(" ", 1)[0] == program:
                found.append((shlex.split(text, comments=True), []))
            elif language == "text" and found and line.strip():
                found[-1][1].append(line)
    return found


# -- the page's files ---------------------------------------------------------------------------------


def test_every_python_block_is_a_file_a_test_runs() -> None:
    captions = [block.caption for block in BLOCKS if block.language == "python"]
    assert sorted(captions) == sorted(FILES), "a Python block without a caption, or one no test runs"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory holding the page's files, as the reader saves them, and the current one."""
    for name, block in PYTHON.items():
        (tmp_path / name).write_text(block.text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for name in [name for name in os.environ if name.startswith("FLASK_")]:
        monkeypatch.delenv(name)  # from_prefixed_env() would read them
    return tmp_path


def load_app_module(project: Path) -> ModuleType:
    """``app.py`` of *project* as a module of its own (other tests may have imported an ``app``)."""
    spec = importlib.util.spec_from_file_location(f"getting_started_app_{id(project)}", project / "app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- running it ---------------------------------------------------------------------------------------

CLI_LINES = commands("text", "flask")


def test_the_page_shows_commands_to_run() -> None:
    assert any(argv[3:5] == ["mcp", "call"] for argv, _ in CLI_LINES)


@pytest.mark.parametrize(("argv", "output"), CLI_LINES, ids=[shlex.join(argv) for argv, _ in CLI_LINES])
def test_a_command_prints_what_the_page_shows(project: Path, argv: list[str], output: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "flask", *argv[1:]], cwd=project, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    if output:
        assert done.stdout.splitlines() == output


# -- the client ---------------------------------------------------------------------------------------


def printed_comments(source: str) -> list[str]:
    """What the ``print(...)  # comment`` lines of *source* say they print, in order."""
    return [line.split("  # ", 1)[1] for line in source.splitlines() if line.strip().startswith("print(")]


def test_the_client_prints_what_its_comments_say(project: Path, live_server: t.Any) -> None:
    client = PYTHON["client.py"].text
    expected = printed_comments(client)
    assert PAGE_URL in client and len(expected) == 4
    app = load_app_module(project).create_app()
    out = io.StringIO()
    with live_server(app) as server, contextlib.redirect_stdout(out):
        code = compile(client.replace(PAGE_URL, f"{server.url}/mcp"), "client.py", "exec")
        exec(code, {"__name__": "__main__"})
    assert out.getvalue().splitlines() == expected


def test_the_comments_are_read_from_the_print_lines_only() -> None:
    assert printed_comments("x = 1  # one\nprint(x)  # 1\n    print(y)  # a  # b\n") == ["1", "a  # b"]


# -- the tests ----------------------------------------------------------------------------------------


def test_the_page_tests_pass(project: Path) -> None:
    wanted = len(re.findall(r"^def test_", PYTHON["test_app.py"].text, re.M))
    assert wanted >= 3
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_app.py"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(rf"\b{wanted} passed\b", done.stdout), done.stdout


def test_a_test_of_the_page_fails_when_the_server_does_something_else(project: Path) -> None:
    app_py = project / "app.py"
    app_py.write_text(app_py.read_text().replace("return found[:limit]", "return found[:1]"))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_app.py"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1 and "1 failed" in done.stdout, done.stdout


# -- deploying ----------------------------------------------------------------------------------------

EXPORT = re.compile(r"^export (?P<name>FLASK_\w+)=(?P<value>.*)$")


def exported() -> dict[str, str]:
    """The ``export FLASK_...=value`` lines of the page's shell blocks."""
    found: dict[str, str] = {}
    for block in BLOCKS:
        if block.language == "sh":
            for line in block.text.splitlines():
                match = EXPORT.match(line)
                if match is not None:
                    found[match["name"]] = shlex.split(match["value"], comments=True)[0]
    return found


CLIENT_INFO = {"name": "two-workers", "version": "1"}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def shared_session(first: Flask, second: Flask) -> int:
    """The HTTP status of a call on *second* in a session *first* opened (as two workers would see it)."""
    opened = first.test_client().post(
        "/mcp",
        headers=HEADERS,
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT_INFO},
        },
    )
    assert opened.status_code == 200, opened.get_data(as_text=True)
    session = {**HEADERS, "Mcp-Session-Id": opened.headers["Mcp-Session-Id"], "MCP-Protocol-Version": "2025-11-25"}
    other = second.test_client()
    other.post("/mcp", headers=session, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    call = {"name": "search_notes", "arguments": {"query": "milk"}}
    message = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}
    answer = other.post("/mcp", headers=session, json=message)
    if answer.status_code == 200:
        assert answer.get_json()["result"]["structuredContent"] == {"result": [{"id": "1", "text": "Buy milk"}]}
    return answer.status_code


def test_the_deployment_settings_share_sessions_between_workers(
    project: Path, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = exported()
    assert {"FLASK_MCP_CACHE_TYPE", "FLASK_MCP_CACHE_REDIS_URL"} <= set(settings)
    module = load_app_module(project)
    # Without them, each worker keeps its sessions to itself: the other one does not know the session.
    assert shared_session(module.create_app(), module.create_app()) == 404
    for name, value in settings.items():
        monkeypatch.setenv(name, redis_url if name == "FLASK_MCP_CACHE_REDIS_URL" else value)
    first, second = module.create_app(), module.create_app()
    assert first.config["MCP_CACHE_TYPE"] == settings["FLASK_MCP_CACHE_TYPE"]
    assert first.config["SECRET_KEY"] == settings["FLASK_SECRET_KEY"]
    assert shared_session(first, second) == 200


# -- the shell commands -------------------------------------------------------------------------------


def resolve(argv: list[str], app: Flask) -> tuple[click.Command, list[str]]:
    """The click command a ``flask --app app ...`` line runs, and its own arguments."""
    assert argv[:3] == ["flask", "--app", "app"], argv
    group: click.Command = click.Group(commands={**flask.cli.cli.commands, **app.cli.commands})
    rest = argv[3:]
    while isinstance(group, click.Group) and rest and rest[0] in group.commands:
        group, rest = group.commands[rest[0]], rest[1:]
    return group, rest


SHELL_FLASK = [argv for argv, _ in commands("sh", "flask")] + [argv for argv, _ in CLI_LINES]


@pytest.mark.parametrize("argv", SHELL_FLASK, ids=shlex.join)
def test_a_flask_command_of_the_page_parses(project: Path, argv: list[str]) -> None:
    app = load_app_module(project).create_app()
    command, arguments = resolve(argv, app)
    assert not isinstance(command, click.Group), f"{shlex.join(argv)} names no command"
    command.make_context(command.name or "", arguments)  # click.UsageError when misspelt


def test_a_misspelt_flask_command_is_noticed(project: Path) -> None:
    app = load_app_module(project).create_app()
    command, arguments = resolve(["flask", "--app", "app", "mcp", "install", "claude-desktop", "--wirte"], app)
    with pytest.raises(click.UsageError):
        command.make_context(command.name or "", arguments)
    command, arguments = resolve(["flask", "--app", "app", "mcp", "install", "claude-dekstop"], app)
    with pytest.raises(click.UsageError):
        command.make_context(command.name or "", arguments)
