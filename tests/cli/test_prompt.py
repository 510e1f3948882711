"""``flask mcp prompt``: a prompt's messages on the terminal, as JSON, and clear errors for wrong input."""

from __future__ import annotations

import json
import typing as t

import pytest
from flask import Flask

from flask_mcp import MCP, EmbeddedResource, ImageContent, PromptMessage, ResourceLink, ScopeRequired
from flask_mcp.cli import output as cli_output

from ..stdio_app import app as stdio_app

PNG = b"\x89PNG\r\n\x1a\n" + bytes(24)


def prompt(*args: str, app: Flask = stdio_app) -> t.Any:
    return app.test_cli_runner().invoke(args=["mcp", "prompt", *args])


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_the_messages_are_printed_as_role_lines_and_text(era: str) -> None:
    result = prompt("review", "code=print(1)", "language=rust", "--era", era)
    assert result.exit_code == 0, result.output
    assert result.stdout == "[user]\nReview this rust:\nprint(1)\n"


def test_values_are_taken_as_text_whatever_they_look_like() -> None:
    assert prompt("review", "code=5").stdout == "[user]\nReview this python:\n5\n"
    assert prompt("review", "code=true", "language=null").stdout == "[user]\nReview this null:\ntrue\n"
    assert prompt("review", '{"code": "[1, 2]"}').stdout == "[user]\nReview this python:\n[1, 2]\n"


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_json_prints_the_whole_result(era: str) -> None:
    result = prompt("review", "code=x", "--json", "--era", era)
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["description"] == "Ask for a code review."
    assert document["messages"] == [{"role": "user", "content": {"type": "text", "text": "Review this python:\nx"}}]
    assert ("resultType" in document) == (era == "modern")


@pytest.fixture
def media_app(make_app: t.Callable[..., Flask], mcp: MCP) -> Flask:
    @mcp.prompt
    def brief(topic: str) -> list[PromptMessage]:
        """Brief the model on a topic."""
        return [
            PromptMessage("user", f"Tell me about {topic}."),
            PromptMessage("assistant", ImageContent(PNG, "image/png")),
            PromptMessage("user", EmbeddedResource("notes://1", text="first note", mime_type="text/plain")),
            PromptMessage("user", EmbeddedResource("files://logo", blob=PNG, mime_type="image/png")),
            PromptMessage("assistant", ResourceLink("notes://2", "second", title="The second note")),
        ]

    @mcp.prompt(permissions=[ScopeRequired("admin")])
    def secret() -> str:
        return "hidden"

    return make_app(mcp, MCP_AUTH_TOKENS={"t": {"subject": "ada", "scopes": []}}, MCP_LOCAL_PRINCIPAL="ada")


def test_each_kind_of_content_is_shown(media_app: Flask) -> None:
    result = prompt("brief", "topic=owls", app=media_app)
    assert result.exit_code == 0, result.output
    assert result.stdout.split("\n\n") == [
        "[user]\nTell me about owls.",
        f"[assistant]\n[image image/png, {len(PNG)} bytes]",
        "[user]\n[resource notes://1 text/plain]\nfirst note",
        f"[user]\n[resource files://logo image/png, {len(PNG)} bytes]",
        "[assistant]\n[link notes://2 (The second note)]\n",
    ]


def test_a_terminal_gets_the_description_and_a_rule_per_role(media_app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli_output, "stdout_is_terminal", lambda: True)
    result = prompt("brief", "topic=owls", app=media_app)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "Brief the model on a topic."
    rules = [line for line in lines if "─" in line]
    assert [line.split()[0] for line in rules] == ["user", "assistant", "user", "user", "assistant"]
    assert "Tell me about owls." in lines
    assert "[" + "user]" not in result.stdout  # the plain layout is for pipes


def test_an_unknown_prompt_exits_1_naming_the_prompts() -> None:
    result = prompt("nope")
    assert result.exit_code == 1
    assert "no prompt is named 'nope' (the prompts: review)" in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "missing required argument code; prompt 'review' takes: code, language?"),
        (["language=go"], "missing required argument code"),
        (["code=x", "colour=red"], "unknown argument colour; prompt 'review' takes: code, language?"),
        (['{"code": 5}'], "prompt arguments are strings: give code as text"),
        (["{code: 1}"], "not valid JSON"),
        (["code"], "give one JSON object, or key=value pairs"),
    ],
)
def test_wrong_arguments_exit_2_saying_what_the_prompt_takes(args: list[str], message: str) -> None:
    result = prompt("review", *args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert result.stdout == ""


def test_a_refused_prompt_exits_1_with_the_servers_error(media_app: Flask) -> None:
    result = prompt("secret", app=media_app)
    assert result.exit_code == 1
    assert "Permission denied: prompt secret requires scope(s) admin" in result.stderr
