"""``flask mcp``: list, call, read and stdio through Flask's CLI runner."""

from __future__ import annotations

import io
import json
import sys
import typing as t

import pytest
from flask import Flask
from flask.testing import FlaskCliRunner

from flask_mcp import MCP, Context

from ..stdio_app import app as stdio_app


@pytest.fixture
def runner() -> FlaskCliRunner:
    """A CLI runner for the stdio test app; click keeps stdout and stderr apart."""
    return stdio_app.test_cli_runner()


def test_list_shows_every_kind(runner: FlaskCliRunner) -> None:
    result = runner.invoke(args=["mcp", "list"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "Tools (5)" in lines
    assert "  add      Add two integers." in lines
    assert "Resources (1)" in lines
    assert any(line.split() == ["config://motd", "motd", "text/plain"] for line in lines)
    assert "Resource templates (1)" in lines
    assert any(line.split() == ["notes://{note_id}", "note", "text/plain"] for line in lines)
    assert "Prompts (1)" in lines
    assert any(line.split()[:2] == ["review", "code,"] and "language?" in line for line in lines)


def test_list_of_an_empty_server(make_app: t.Callable[..., Flask]) -> None:
    app = make_app(MCP(name="empty"))
    result = app.test_cli_runner().invoke(args=["mcp", "list"])
    assert result.exit_code == 0
    assert result.output.split("\n\n") == [
        "Tools: none",
        "Resources: none",
        "Resource templates: none",
        "Prompts: none\n",
    ]


def test_call_prints_the_result_as_a_client_sees_it(runner: FlaskCliRunner) -> None:
    expected = {"content": [{"type": "text", "text": "3"}], "structuredContent": {"result": 3}}
    handshake = runner.invoke(args=["mcp", "call", "add", '{"a": 1, "b": 2}', "--era", "handshake"])
    assert handshake.exit_code == 0, handshake.output
    assert json.loads(handshake.stdout) == expected
    modern = runner.invoke(args=["mcp", "call", "add", '{"a": 1, "b": 2}'])
    assert modern.exit_code == 0, modern.output
    result = json.loads(modern.stdout)
    assert result["resultType"] == "complete" and result["_meta"]["io.modelcontextprotocol/serverInfo"]
    assert {key: result[key] for key in expected} == expected


def test_call_without_arguments_defaults_to_an_empty_object(runner: FlaskCliRunner) -> None:
    result = runner.invoke(args=["mcp", "call", "add"])
    assert result.exit_code == 1  # the tool reports the missing arguments as isError
    assert json.loads(result.stdout)["isError"] is True


def test_call_tool_error_exits_1(runner: FlaskCliRunner) -> None:
    result = runner.invoke(args=["mcp", "call", "explode", '{"reason": "boom"}'])
    assert result.exit_code == 1
    body = json.loads(result.stdout)
    assert body["isError"] is True
    assert body["content"][0]["text"].endswith("exploded: boom")


@pytest.mark.parametrize(("argument", "message"), [("{a: 1}", "not valid JSON"), ("[1, 2]", "must be a JSON object")])
def test_call_rejects_bad_json(runner: FlaskCliRunner, argument: str, message: str) -> None:
    result = runner.invoke(args=["mcp", "call", "add", argument])
    assert result.exit_code == 2
    assert message in result.stderr


def test_call_unknown_tool_is_a_protocol_error(runner: FlaskCliRunner) -> None:
    result = runner.invoke(args=["mcp", "call", "nope"])
    assert result.exit_code == 1
    assert "nope" in result.stderr and "[-32602]" in result.stderr
    assert result.stdout == ""


def test_call_context_tool_sends_notifications_to_stderr(make_app: t.Callable[..., Flask], mcp: MCP) -> None:
    @mcp.tool
    def busy(ctx: Context) -> str:
        ctx.info("working")
        try:
            ctx.sample("hi", max_tokens=1)
        except Exception as exc:  # no client to ask
            return f"no sampling: {exc}"
        return "sampled"

    runner = make_app(mcp).test_cli_runner()
    result = runner.invoke(args=["mcp", "call", "busy", "--era", "handshake"])
    assert result.exit_code == 0, result.output
    assert "info: working" in result.stderr.splitlines()
    text = json.loads(result.stdout)["content"][0]["text"]
    assert text.startswith("no sampling:") and "connected client" in text


def test_call_answers_input_rounds_from_the_answers_option(make_app: t.Callable[..., Flask], mcp: MCP) -> None:
    @mcp.tool
    def quiz(ctx: Context) -> str:
        ctx.info("asking")
        name = ctx.elicit("Name?", {"type": "object", "properties": {"name": {"type": "string"}}}, key="name")
        reply = ctx.sample("Capital of France?", max_tokens=5, key="capital")
        return f"{(name.content or {}).get('name')}: {reply['content']['text']}"

    runner = make_app(mcp).test_cli_runner()
    unanswered = runner.invoke(args=["mcp", "call", "quiz"])
    assert unanswered.exit_code == 1 and "--answers" in unanswered.stderr and "'name'" in unanswered.stderr
    answers = {
        "name": {"action": "accept", "content": {"name": "Ada"}},
        "capital": {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"},
    }
    result = runner.invoke(args=["mcp", "call", "quiz", "--answers", json.dumps(answers)])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["content"][0]["text"] == "Ada: Paris"
    assert result.stderr.splitlines().count("info: asking") == 3  # one run per round, each logging as it goes


def test_read_prints_the_text(runner: FlaskCliRunner) -> None:
    assert runner.invoke(args=["mcp", "read", "config://motd"]).stdout == "Hello from stdio\n"
    assert runner.invoke(args=["mcp", "read", "notes://12"]).stdout == "note 12\n"


def test_read_writes_blobs_as_bytes(make_app: t.Callable[..., Flask], mcp: MCP) -> None:
    @mcp.resource("file://logo.bin", mime_type="application/octet-stream")
    def logo() -> bytes:
        return b"\x00\x01binary"

    result = make_app(mcp).test_cli_runner().invoke(args=["mcp", "read", "file://logo.bin"])
    assert result.exit_code == 0
    assert result.stdout_bytes == b"\x00\x01binary"


@pytest.mark.parametrize(("era", "code"), [("modern", "[-32602]"), ("handshake", "[-32002]")])
def test_read_unknown_resource_fails(runner: FlaskCliRunner, era: str, code: str) -> None:
    result = runner.invoke(args=["mcp", "read", "nope://x", "--era", era])
    assert result.exit_code == 1
    assert code in result.stderr and "nope://x" in result.stderr


def test_stdio_command_serves_stdin(runner: FlaskCliRunner) -> None:
    lines = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n'
    result = runner.invoke(args=["mcp", "stdio"], input=io.BytesIO(lines))
    assert result.exit_code == 0, result.output
    assert result.stdout_bytes == b'{"jsonrpc":"2.0","id":1,"result":{}}\n'


def test_group_is_added_once_and_never_replaces_the_apps_own(make_app: t.Callable[..., Flask]) -> None:
    import click

    app = Flask("own")

    @app.cli.command("mcp")
    def own() -> None:
        click.echo("mine")

    MCP(name="x").init_app(app)
    assert app.test_cli_runner().invoke(args=["mcp"]).output == "mine\n"
    other = make_app(MCP(name="y"))
    assert other.cli.commands["mcp"].name == "mcp"
    assert sorted(other.cli.commands["mcp"].commands) == [
        "call",
        "cgi",
        "dev",
        "inspect",
        "install",
        "list",
        "openapi",
        "prompt",
        "read",
        "stdio",
    ]  # type: ignore[attr-defined]


def _served_document(app: Flask) -> t.Any:
    prefix = app.config["MCP_REST_PREFIX"] or app.config["MCP_URL_PREFIX"].rstrip("/") + "/rest"
    response = app.test_client().get(f"{prefix}/openapi.json")
    assert response.status_code == 200
    return response.get_json()


def test_openapi_prints_the_served_document_as_json(runner: FlaskCliRunner) -> None:
    result = runner.invoke(args=["mcp", "openapi"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document == _served_document(stdio_app)
    assert "/mcp/rest/tools/add" in document["paths"]


def test_openapi_yaml_parses_back_to_the_same_document(runner: FlaskCliRunner) -> None:
    yaml = pytest.importorskip("yaml")
    result = runner.invoke(args=["mcp", "openapi", "--format", "yaml"])
    assert result.exit_code == 0, result.output
    assert not result.stdout.lstrip().startswith("{")  # block style, not JSON
    assert yaml.safe_load(result.stdout) == json.loads(runner.invoke(args=["mcp", "openapi"]).stdout)


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_openapi_output_writes_the_file(runner: FlaskCliRunner, tmp_path: t.Any, fmt: str) -> None:
    yaml = pytest.importorskip("yaml")
    target = tmp_path / f"openapi.{fmt}"
    result = runner.invoke(args=["mcp", "openapi", "--format", fmt, "--output", str(target)])
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert yaml.safe_load(target.read_text(encoding="utf-8")) == _served_document(stdio_app)  # JSON is YAML too


def test_openapi_yaml_without_pyyaml_is_a_clear_error(runner: FlaskCliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "yaml", None)  # makes "import yaml" raise ImportError
    result = runner.invoke(args=["mcp", "openapi", "--format", "yaml"])
    assert result.exit_code == 1
    assert "--format yaml needs PyYAML" in result.stderr
    assert result.stdout == ""


def test_openapi_follows_the_rest_prefix_and_new_tools(make_app: t.Callable[..., Flask]) -> None:
    mcp = MCP(name="prefixed")
    app = make_app(mcp, MCP_REST_PREFIX="/api")

    @mcp.tool
    def late(x: int) -> int:
        return x

    result = app.test_cli_runner().invoke(args=["mcp", "openapi"])
    assert result.exit_code == 0, result.output
    assert "/api/tools/late" in json.loads(result.stdout)["paths"]


def test_openapi_without_rest_routes_is_an_error(make_app: t.Callable[..., Flask]) -> None:
    app = make_app(MCP(name="no-rest"), MCP_REST_ENABLED=False)
    result = app.test_cli_runner().invoke(args=["mcp", "openapi"])
    assert result.exit_code == 1
    assert "REST routes are disabled" in result.stderr


def test_openapi_rejects_an_unknown_format(runner: FlaskCliRunner) -> None:
    result = runner.invoke(args=["mcp", "openapi", "--format", "toml"])
    assert result.exit_code == 2


@pytest.mark.parametrize(("answers", "message"), [("{a: 1}", "not valid JSON"), ("[1]", "answers by key")])
def test_call_rejects_bad_answers(runner: FlaskCliRunner, answers: str, message: str) -> None:
    result = runner.invoke(args=["mcp", "call", "add", '{"a": 1, "b": 2}', "--answers", answers])
    assert result.exit_code == 2
    assert message in result.stderr and "--answers" in result.stderr


def test_call_takes_key_value_pairs_typed_by_the_schema(make_app: t.Callable[..., Flask], mcp: MCP) -> None:
    @mcp.tool
    def describe(name: str, count: int, ratio: float, on: bool, tags: list[str], code: str = "") -> dict[str, t.Any]:
        return {"name": name, "count": count, "ratio": ratio, "on": on, "tags": tags, "code": code}

    runner = make_app(mcp).test_cli_runner()
    args = ["mcp", "call", "describe", "name=Ada", "count=3", "ratio=2", "on=true", 'tags=["x"]', "code=007"]
    result = runner.invoke(args=[*args, "--output", "structured"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "name": "Ada",
        "count": 3,
        "ratio": 2.0,
        "on": True,
        "tags": ["x"],
        "code": "007",  # a string stays the text it is, digits or not
    }
    text = runner.invoke(args=["mcp", "call", "describe", *args[3:], "--output", "text"])
    assert json.loads(text.stdout)["name"] == "Ada"


@pytest.mark.parametrize(
    ("pair", "message"),
    [("count=three", "not a valid integer"), ("on=1", "not a valid boolean"), ("oops", "key=value")],
)
def test_call_names_a_pair_that_does_not_fit(
    make_app: t.Callable[..., Flask], mcp: MCP, pair: str, message: str
) -> None:
    @mcp.tool
    def tally(count: int = 0, on: bool = False) -> int:
        return count

    result = make_app(mcp).test_cli_runner().invoke(args=["mcp", "call", "tally", pair])
    assert result.exit_code == 2 and message in result.stderr
