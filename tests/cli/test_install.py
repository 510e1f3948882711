"""``flask mcp install``: each client's entry, printed or merged into a file (always a temporary one here)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import typing as t
from pathlib import Path

import pytest
from flask import Flask
from flask.cli import ScriptInfo

from flask_mcp import MCP
from flask_mcp.cli.clients import CLIENTS

from ..stdio_app import app as stdio_app

REPO = Path(__file__).resolve().parents[2]
#: The --app value of the stdio app's entry: its file, absolute, and the global holding it.
APP_ARG = f"{REPO / 'tests' / 'stdio_app.py'}:app"
PYTHON = os.path.abspath(sys.executable)
STDIO_ARGS = ["-m", "flask", "--app", APP_ARG, "mcp", "stdio"]
TOKENS = {"good-token": {"subject": "ada", "scopes": ["notes:read"]}}


def install(*args: str, app: Flask = stdio_app, **kwargs: t.Any) -> t.Any:
    return app.test_cli_runner().invoke(args=["mcp", "install", *args], **kwargs)


@pytest.fixture(autouse=True)
def _from_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests' modules are importable from the checkout, as when flask runs there."""
    monkeypatch.chdir(REPO)


@pytest.fixture
def auth_app(make_app: t.Callable[..., Flask]) -> Flask:
    return make_app(MCP(name="secured"), MCP_AUTH_TOKENS=TOKENS)


@pytest.mark.parametrize(
    ("client", "key", "entry"),
    [
        ("claude-desktop", "mcpServers", {"command": PYTHON, "args": STDIO_ARGS}),
        ("cursor", "mcpServers", {"command": PYTHON, "args": STDIO_ARGS}),
        ("print", "mcpServers", {"command": PYTHON, "args": STDIO_ARGS}),
        ("vscode", "servers", {"type": "stdio", "command": PYTHON, "args": STDIO_ARGS}),
    ],
)
def test_stdio_entry_launches_this_interpreter_with_the_app(client: str, key: str, entry: dict[str, t.Any]) -> None:
    result = install(client)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {key: {"stdio-app": entry}}
    assert "Warning" not in result.stderr


def test_the_printed_entry_runs_from_any_directory(tmp_path: Path) -> None:
    entry = json.loads(install("print").stdout)["mcpServers"]["stdio-app"]
    environment = {key: value for key, value in os.environ.items() if key != "FLASK_APP"}
    done = subprocess.run(
        [entry["command"], *entry["args"]],
        input=b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n',
        capture_output=True,
        cwd=tmp_path,
        env={**environment, **entry.get("env", {})},
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == b'{"jsonrpc":"2.0","id":1,"result":{}}\n'


def test_claude_code_prints_the_claude_mcp_add_command() -> None:
    result = install("claude-code", "--name", "notes", "--env", "MODE=dev")
    assert result.exit_code == 0, result.output
    words = shlex.split(result.stdout)
    assert words == [
        "claude",
        "mcp",
        "add",
        "--transport",
        "stdio",
        "notes",
        "--env",
        "MODE=dev",
        "--",
        PYTHON,
        *STDIO_ARGS,
    ]


def test_the_token_goes_into_the_stdio_entrys_environment(auth_app: Flask) -> None:
    result = install("cursor", "--token", "good-token", "--app", "tests/stdio_app.py:app", app=auth_app)
    assert result.exit_code == 0, result.output
    entry = json.loads(result.stdout)["mcpServers"]["secured"]
    assert entry["env"] == {"FLASK_MCP_TOKEN": "good-token"}
    assert entry["args"] == STDIO_ARGS
    assert "holds the token in clear text" in result.stderr


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--token", "wrong"], 1, "the token was refused"),
        (["--token", "good-token", "--token-env", "X"], 2, "not both"),
        (["--token", ""], 2, "an empty token"),
        (["--token", " ", "--url", "http://127.0.0.1:5000/mcp"], 2, "an empty token"),
        (["--env", "oops"], 2, "'oops' is not KEY=VALUE"),
        (["--url", "http://127.0.0.1:5000/mcp", "--env", "A=1"], 2, "does not apply to --url"),
    ],
)
def test_bad_options_are_refused(auth_app: Flask, args: list[str], code: int, message: str) -> None:
    result = install("cursor", "--app", "tests/stdio_app.py", *args, app=auth_app)
    assert result.exit_code == code, result.output
    assert message in result.stderr
    assert "good-token" not in result.stdout


def test_a_token_for_an_app_without_authentication_is_refused() -> None:
    result = install("cursor", "--token", "t")
    assert result.exit_code == 1
    assert "no authentication configured" in result.stderr


TOKEN = "good-token"
URL = "http://127.0.0.1:5000/mcp"


@pytest.mark.parametrize(
    ("client", "key", "entry"),
    [
        ("cursor", "mcpServers", {"url": URL, "headers": {"Authorization": f"Bearer {TOKEN}"}}),
        ("print", "mcpServers", {"url": URL, "headers": {"Authorization": f"Bearer {TOKEN}"}}),
        ("vscode", "servers", {"type": "http", "url": URL, "headers": {"Authorization": f"Bearer {TOKEN}"}}),
        (
            "claude-desktop",
            "mcpServers",
            {
                "command": "npx",
                "args": ["-y", "mcp-remote", URL, "--header", "Authorization:${AUTH_HEADER}"],
                "env": {"AUTH_HEADER": f"Bearer {TOKEN}"},
            },
        ),
    ],
)
def test_http_entry_carries_the_token_in_a_header(client: str, key: str, entry: dict[str, t.Any]) -> None:
    result = install(client, "--url", URL, "--token", TOKEN)  # not checked: the app at URL may be another
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {key: {"stdio-app": entry}}
    assert "holds the token in clear text" in result.stderr


def test_http_entries_without_a_token_have_no_header() -> None:
    assert json.loads(install("cursor", "--url", URL).stdout) == {"mcpServers": {"stdio-app": {"url": URL}}}
    remote = json.loads(install("claude-desktop", "--url", "http://mcp.example.com/mcp").stdout)
    assert remote["mcpServers"]["stdio-app"] == {
        "command": "npx",
        "args": ["-y", "mcp-remote", "http://mcp.example.com/mcp", "--allow-http"],  # plain HTTP off loopback
    }


def test_claude_code_http_command_line() -> None:
    result = install("claude-code", "--url", URL, "--token", TOKEN)
    assert shlex.split(result.stdout) == [
        "claude",
        "mcp",
        "add",
        "--transport",
        "http",
        "stdio-app",
        URL,
        "--header",
        f"Authorization: Bearer {TOKEN}",
    ]
    assert "holds the token in clear text" in result.stderr


def test_write_merges_into_the_file_keeping_the_rest(tmp_path: Path) -> None:
    target = tmp_path / "claude_desktop_config.json"
    before = {"mcpServers": {"other": {"command": "other"}}, "globalShortcut": "Ctrl+Space"}
    target.write_text(json.dumps(before))
    result = install("claude-desktop", "--write", "--config-file", str(target))
    assert result.exit_code == 0, result.output
    assert result.stdout == f"Added the server 'stdio-app' in {target}\n"
    after = json.loads(target.read_text())
    assert after == {
        "mcpServers": {"other": {"command": "other"}, "stdio-app": {"command": PYTHON, "args": STDIO_ARGS}},
        "globalShortcut": "Ctrl+Space",
    }
    assert json.loads((tmp_path / "claude_desktop_config.json.bak").read_text()) == before
    again = install("claude-desktop", "--write", "--config-file", str(target), "--name", "other")
    assert again.stdout == f"Replaced the server 'other' in {target}\n"
    assert json.loads(target.read_text())["mcpServers"]["other"]["command"] == PYTHON
    assert json.loads((tmp_path / "claude_desktop_config.json.bak").read_text()) == after


def test_write_creates_the_file_private_when_it_holds_a_token(tmp_path: Path) -> None:
    target = tmp_path / "project" / ".vscode" / "mcp.json"
    result = install("vscode", "--url", URL, "--token", TOKEN, "--write", "--config-file", str(target))
    assert result.exit_code == 0, result.output
    assert TOKEN not in result.stdout
    assert "holds the token in clear text" in result.stderr
    assert json.loads(target.read_text())["servers"]["stdio-app"]["headers"] == {"Authorization": f"Bearer {TOKEN}"}
    assert not target.with_name("mcp.json.bak").exists()
    if os.name == "posix":
        assert target.stat().st_mode & 0o777 == 0o600


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
def test_a_token_written_over_a_readable_file_is_private_and_so_is_its_backup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An existing 0644 file (and an old 0644 backup) is replaced by files only the owner can read."""
    target = tmp_path / "mcp.json"
    target.write_text(json.dumps({"servers": {"other": {"url": URL, "headers": {"Authorization": "Bearer old"}}}}))
    target.chmod(0o644)
    backup = tmp_path / "mcp.json.bak"
    backup.write_text("{}")
    backup.chmod(0o644)
    # Created with their mode, not narrowed afterwards: no chmod may run.
    for name in ("chmod", "fchmod"):
        monkeypatch.setattr(os, name, lambda *args, **kwargs: pytest.fail("the mode was changed after writing"))
    result = install("vscode", "--url", URL, "--token", TOKEN, "--write", "--config-file", str(target))
    assert result.exit_code == 0, result.output
    assert json.loads(target.read_text())["servers"]["stdio-app"]["headers"] == {"Authorization": f"Bearer {TOKEN}"}
    assert "Bearer old" in backup.read_text()
    assert target.stat().st_mode & 0o777 == 0o600
    assert backup.stat().st_mode & 0o777 == 0o600
    again = install("vscode", "--url", URL, "--token", TOKEN, "--write", "--config-file", str(target))
    assert again.exit_code == 0, again.output
    assert TOKEN in backup.read_text()
    assert target.stat().st_mode & 0o777 == 0o600 and backup.stat().st_mode & 0o777 == 0o600
    assert sorted(path.name for path in tmp_path.iterdir()) == ["mcp.json", "mcp.json.bak"]  # no temporary left


@pytest.mark.parametrize("text", ["{not json", '["a list"]', '{"mcpServers": []}'])
def test_write_refuses_a_file_it_cannot_merge_into(tmp_path: Path, text: str) -> None:
    target = tmp_path / "mcp.json"
    target.write_text(text)
    result = install("cursor", "--write", "--config-file", str(target))
    assert result.exit_code == 1
    assert str(target) in result.stderr
    assert target.read_text() == text and not (tmp_path / "mcp.json.bak").exists()


def test_print_writes_only_to_a_named_file() -> None:
    result = install("print", "--write")
    assert result.exit_code == 2
    assert "--config-file" in result.stderr


def test_claude_code_write_uses_the_project_mcp_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = install("claude-code", "--write", "--app", str(REPO / "tests" / "stdio_app.py"))
    assert result.exit_code == 0, result.output
    entry = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["stdio-app"]
    assert entry == {"type": "stdio", "command": PYTHON, "args": [*STDIO_ARGS[:3], APP_ARG[:-4], "mcp", "stdio"]}


def test_default_files_follow_the_home_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    result = install("cursor", "--write")
    assert result.exit_code == 0, result.output
    assert "stdio-app" in json.loads((tmp_path / ".cursor" / "mcp.json").read_text())["mcpServers"]
    monkeypatch.setattr(sys, "platform", "linux")
    assert CLIENTS["claude-desktop"].file is not None
    assert CLIENTS["claude-desktop"].file() == tmp_path / ".config" / "Claude" / "claude_desktop_config.json"
    monkeypatch.setattr(sys, "platform", "darwin")
    mac = tmp_path / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    assert CLIENTS["claude-desktop"].file() == mac
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setenv("APPDATA", str(tmp_path / "Roaming"))
    assert CLIENTS["claude-desktop"].file() == tmp_path / "Roaming" / "Claude" / "claude_desktop_config.json"
    assert CLIENTS["vscode"].file is not None and CLIENTS["vscode"].file() == REPO / ".vscode" / "mcp.json"


@pytest.mark.parametrize(
    ("import_path", "app_arg"),
    [
        ("tests.stdio_app", str(REPO / "tests" / "stdio_app.py")),
        ("tests.stdio_app:app", APP_ARG),
        ("tests/stdio_app.py:app", APP_ARG),
        ("json", "json"),  # importable from anywhere: kept as a name
    ],
)
def test_the_app_import_path_flask_was_given_is_made_absolute(import_path: str, app_arg: str) -> None:
    info = ScriptInfo(app_import_path=import_path, create_app=lambda: stdio_app)
    result = install("print", obj=info)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["mcpServers"]["stdio-app"]["args"][3] == app_arg


def test_an_app_made_by_a_factory_needs_app(make_app: t.Callable[..., Flask]) -> None:
    result = install("cursor", app=make_app(MCP(name="made")))
    assert result.exit_code == 2
    assert "give its import path with --app" in result.stderr
