"""``flask mcp install --token-env``: each client's entry refers to the variable in its own syntax, never the token."""

from __future__ import annotations

import json
import shlex
import typing as t
from pathlib import Path

import pytest
from flask import Flask

from flask_mcp import MCP
from flask_mcp.cli.clients import CLIENTS

REPO = Path(__file__).resolve().parents[2]
#: A token no entry, output or file may hold: only the variable's name may appear.
SECRET = "tok-5e3c1b9a-never-written"
VARIABLE = "SHOP_TOKEN"
URL = "http://127.0.0.1:5000/mcp"


@pytest.fixture(autouse=True)
def _from_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)


@pytest.fixture
def app(make_app: t.Callable[..., Flask], monkeypatch: pytest.MonkeyPatch) -> Flask:
    """A protected app whose token is in the environment, as in the shell of the person installing."""
    monkeypatch.setenv(VARIABLE, SECRET)
    return make_app(MCP(name="shop"), MCP_AUTH_TOKENS={SECRET: {"subject": "ada"}})


def install(app: Flask, *args: str) -> t.Any:
    return app.test_cli_runner().invoke(args=["mcp", "install", *args, "--app", "tests/stdio_app.py:app"])


#: Each client's reference to $SHOP_TOKEN, as its documentation spells it.
REFERENCES = {
    "cursor": "${env:SHOP_TOKEN}",
    "vscode": "${env:SHOP_TOKEN}",
    "claude-code": "${SHOP_TOKEN}",
    "print": "${SHOP_TOKEN}",
}


@pytest.mark.parametrize("client", sorted(REFERENCES))
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_written_file_refers_to_the_variable_and_never_holds_the_token(
    app: Flask, tmp_path: Path, client: str, transport: str
) -> None:
    target = tmp_path / "mcp.json"
    extra = ["--url", URL] if transport == "http" else []
    result = install(app, client, "--token-env", VARIABLE, *extra, "--write", "--config-file", str(target))
    assert result.exit_code == 0, result.output
    text = target.read_text()
    assert SECRET not in text and SECRET not in result.output
    assert "clear text" not in result.stderr
    entry = json.loads(text)[CLIENTS[client].key]["shop"]
    reference = REFERENCES[client]
    if transport == "stdio":
        assert entry["env"] == {"FLASK_MCP_TOKEN": reference}
    else:
        assert entry["headers"] == {"Authorization": f"Bearer {reference}"}


@pytest.mark.parametrize("client", sorted(REFERENCES))
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_printed_entry_refers_to_the_variable(app: Flask, client: str, transport: str) -> None:
    extra = ["--url", URL] if transport == "http" else []
    result = install(app, client, "--token-env", VARIABLE, *extra)
    assert result.exit_code == 0, result.output
    assert SECRET not in result.output
    assert REFERENCES[client] in result.stdout


def test_claude_code_adds_a_reference_to_the_project_where_it_expands_it(app: Flask) -> None:
    stdio = shlex.split(install(app, "claude-code", "--token-env", VARIABLE).stdout)
    assert stdio[:7] == ["claude", "mcp", "add", "--scope", "project", "--transport", "stdio"]
    assert stdio[stdio.index("--env") + 1] == "FLASK_MCP_TOKEN=${SHOP_TOKEN}"
    http = shlex.split(install(app, "claude-code", "--token-env", VARIABLE, "--url", URL).stdout)
    assert http == [
        "claude",
        "mcp",
        "add",
        "--scope",
        "project",
        "--transport",
        "http",
        "shop",
        URL,
        "--header",
        "Authorization: Bearer ${SHOP_TOKEN}",
    ]


def test_print_says_the_syntax_is_the_clients(app: Flask) -> None:
    result = install(app, "print", "--token-env", VARIABLE)
    assert "check that your client expands environment variables" in result.stderr


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_claude_desktop_refuses_a_reference_it_would_not_expand(app: Flask, tmp_path: Path, transport: str) -> None:
    target = tmp_path / "claude_desktop_config.json"
    extra = ["--url", URL] if transport == "http" else []
    result = install(app, "claude-desktop", "--token-env", VARIABLE, *extra, "--write", "--config-file", str(target))
    assert result.exit_code == 2
    assert "Claude Desktop expands no environment variables" in result.stderr
    assert "--token" in result.stderr
    assert SECRET not in result.output
    assert not target.exists()


@pytest.mark.parametrize("name", ["X}${HOME", "A B", "1ST", "", "X:-y"])
def test_a_name_that_is_no_variable_is_refused(app: Flask, name: str) -> None:
    result = install(app, "cursor", "--token-env", name)
    assert result.exit_code == 2
    assert "--token-env" in result.stderr
    assert "{" not in result.stdout


def test_an_unset_variable_is_referred_to_with_a_note(app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(VARIABLE)
    result = install(app, "vscode", "--token-env", VARIABLE)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["servers"]["shop"]["env"] == {"FLASK_MCP_TOKEN": "${env:SHOP_TOKEN}"}
    assert f"{VARIABLE} is not set here: VS Code must find it in its environment" in result.stderr


def test_a_set_variable_whose_token_the_app_refuses_stops_the_stdio_install(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(VARIABLE, "wrong-" + SECRET)
    result = install(app, "cursor", "--token-env", VARIABLE)
    assert result.exit_code == 1
    assert "the token was refused" in result.stderr
    assert SECRET not in result.output


def test_a_variable_for_an_app_without_authentication_is_refused(
    make_app: t.Callable[..., Flask], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(VARIABLE, raising=False)
    result = install(make_app(MCP(name="open")), "cursor", "--token-env", VARIABLE)
    assert result.exit_code == 1
    assert "no authentication configured" in result.stderr
