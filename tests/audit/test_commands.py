"""``flask mcp audit``: a table, or one JSON object a line with exactly the documented keys; filters."""

from __future__ import annotations

import json
import subprocess
import sys
import typing as t

import pytest
from flask import Flask

from flask_mcp import MCP

#: The keys of each ``--json`` line.
KEYS = {
    "time", "principal", "client", "session", "surface", "revision", "tool", "kind", "arguments_digest",
    "arguments", "approval", "approval_mode", "approver", "outcome", "error_code", "duration_ms", "trace_id",
}  # fmt: skip


@pytest.fixture
def app(make_app: t.Callable[..., Flask], tmp_path: t.Any) -> t.Iterator[Flask]:
    mcp = MCP(name="audited")

    @mcp.tool
    def add(a: int, b: int) -> int:
        return a + b

    @mcp.tool
    def boom() -> int:
        raise RuntimeError("no")

    app = make_app(mcp, MCP_AUDIT=True, MCP_AUDIT_DATABASE_URI=f"sqlite:///{tmp_path / 'audit.sqlite3'}")
    yield app
    app.extensions["mcp"].shutdown()


def calls(app: Flask) -> None:
    client = app.test_client()
    assert client.post("/mcp/rest/tools/add", json={"a": 1, "b": 2}).status_code == 200
    assert client.post("/mcp/rest/tools/boom", json={}).status_code == 500
    assert client.post("/mcp/rest/tools/add", json={"a": 3, "b": 4}).status_code == 200


def test_json_lines_have_exactly_the_documented_keys(app: Flask) -> None:
    calls(app)
    result = app.test_cli_runner().invoke(args=["mcp", "audit", "--json"])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["tool"] for line in lines] == ["add", "boom", "add"]
    assert all(set(line) == KEYS for line in lines)
    assert lines[0]["time"].endswith("Z") and lines[0]["surface"] == "rest" and lines[1]["outcome"] == "tool_error"


@pytest.mark.parametrize(
    ("options", "tools"),
    [
        (["--tool", "add"], ["add", "add"]),
        (["--outcome", "tool_error"], ["boom"]),
        (["--limit", "1"], ["add"]),
        (["--since", "1h"], ["add", "boom", "add"]),
        (["--since", "2999-01-01"], []),
        (["--principal", "nobody"], []),
    ],
)
def test_the_filters(app: Flask, options: list[str], tools: list[str]) -> None:
    calls(app)
    result = app.test_cli_runner().invoke(args=["mcp", "audit", "--json", *options])
    assert result.exit_code == 0, result.output
    assert [json.loads(line)["tool"] for line in result.stdout.splitlines()] == tools


def test_the_table(app: Flask) -> None:
    calls(app)
    result = app.test_cli_runner().invoke(args=["mcp", "audit"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "Calls (3)"
    assert lines[1].split() == ["time", "principal", "client", "surface", "tool", "approval", "outcome", "ms"]
    assert "boom" in lines[3] and "tool_error" in lines[3]


def test_a_bad_since_is_a_usage_error(app: Flask) -> None:
    result = app.test_cli_runner().invoke(args=["mcp", "audit", "--since", "yesterday"])
    assert result.exit_code == 2 and "neither an age" in result.output


def test_without_the_trail_the_command_says_how_to_turn_it_on(make_app: t.Callable[..., Flask]) -> None:
    app = make_app(MCP(name="plain"))
    result = app.test_cli_runner().invoke(args=["mcp", "audit"])
    assert result.exit_code == 2 and "set MCP_AUDIT = True" in result.output
    app.extensions["mcp"].shutdown()


def test_an_app_without_sqlalchemy_serves_and_says_what_the_trail_needs(tmp_path: t.Any) -> None:
    script = tmp_path / "no_sqlalchemy.py"
    script.write_text(
        "import sys\n"
        "sys.modules['sqlalchemy'] = None  # as if the sqlalchemy extra were not installed\n"
        "from flask import Flask\n"
        "from flask_mcp import MCP, ConfigurationError\n"
        "from flask_mcp.testing import MCPTestClient\n"
        "mcp = MCP(name='plain')\n"
        "mcp.tool(lambda a, b: a + b, name='add')\n"
        "app = Flask('plain')\n"
        "mcp.init_app(app)\n"
        "client = MCPTestClient(app, era='modern')\n"
        "assert client.call_tool('add', {'a': 1, 'b': 2})['content'][0]['text'] == '3'\n"
        "result = app.test_cli_runner().invoke(args=['mcp', 'audit'])\n"
        "assert result.exit_code == 2 and 'set MCP_AUDIT = True' in result.output, result.output\n"
        "audited = Flask('audited')\n"
        "audited.config['MCP_AUDIT'] = True\n"
        "try:\n"
        "    MCP(name='audited').init_app(audited)\n"
        "except ConfigurationError as exc:\n"
        "    assert 'flask-mcp[sqlalchemy]' in str(exc), exc\n"
        "else:\n"
        "    raise AssertionError('MCP_AUDIT without SQLAlchemy was accepted')\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-2000:]
