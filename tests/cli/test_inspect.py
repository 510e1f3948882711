"""``flask mcp inspect``: every component with its schemas, one in detail, or the listings as JSON."""

from __future__ import annotations

import dataclasses
import json
import typing as t

import pytest
from flask import Flask

from flask_mcp import MCP, Authenticated, ScopeRequired
from flask_mcp.cli import output as cli_output
from flask_mcp.cli.inspect import schema_summary

from ..stdio_app import app as stdio_app


@dataclasses.dataclass
class Note:
    id: int
    text: str


@pytest.fixture
def notes_app(make_app: t.Callable[..., Flask], mcp: MCP) -> Flask:
    """Components with output schemas, annotations and permissions; the caller holds the scope."""

    @mcp.tool(annotations={"readOnlyHint": True, "idempotentHint": True, "destructiveHint": False})
    def find(query: str, limit: int = 10, tags: list[str] | None = None) -> Note:
        """Find a note."""
        return Note(1, query)

    @mcp.tool(permissions=[ScopeRequired("notes:write")])
    def write(text: str) -> str:
        """Write a note."""
        return text

    @mcp.resource("notes://{note_id}", mime_type="text/plain", permissions=[Authenticated, ScopeRequired("notes:read")])
    def note(note_id: str) -> str:
        return note_id

    @mcp.prompt
    def summarize(note_id: str, style: str = "short") -> str:
        """Summarize a note."""
        return note_id

    return make_app(mcp, MCP_LOCAL_PRINCIPAL={"subject": "ops", "scopes": ["notes:read", "notes:write"]})


def test_inspect_lists_every_kind_as_plain_stable_text() -> None:
    result = stdio_app.test_cli_runner().invoke(args=["mcp", "inspect"])
    assert result.exit_code == 0, result.output
    assert result.stdout.split("\n\n") == [
        "Tools (5)\n"
        "  NAME     INPUT                   OUTPUT  HINTS  PERMISSIONS  DESCRIPTION\n"
        "  add      a: integer, b: integer  -       -      -            Add two integers.\n"
        "  explode  reason: string          -       -      -            Always fails, as a tool error.\n"
        "  chatty   word: string            -       -      -            "
        "Prints to stdout, which the stdio transport sends to stderr.\n"
        "  ask      question: string        -       -      -            "
        "Report progress, then ask the client's model.\n"
        "  touch    note_id: string         -       -      -            Tell listeners that a note changed.",
        "Resources (1)\n"
        "  URI            NAME  MIME TYPE   PERMISSIONS  DESCRIPTION\n"
        "  config://motd  motd  text/plain  -            Message of the day.",
        "Resource templates (1)\n"
        "  URI TEMPLATE       NAME  MIME TYPE   PERMISSIONS  DESCRIPTION\n"
        "  notes://{note_id}  note  text/plain  -",
        "Prompts (1)\n"
        "  NAME    ARGUMENTS        PERMISSIONS  DESCRIPTION\n"
        "  review  code, language?  -            Ask for a code review.\n",
    ]


def test_inspect_shows_schemas_hints_and_permissions(notes_app: Flask) -> None:
    result = notes_app.test_cli_runner().invoke(args=["mcp", "inspect"])
    assert result.exit_code == 0, result.output
    rows = {line.split()[0]: line for line in result.stdout.splitlines() if line.startswith("  ")}
    assert "query: string, limit?: integer, tags?: array[string]|null" in rows["find"]
    assert "id: integer, text: string" in rows["find"]
    assert "readOnly, idempotent" in rows["find"] and "destructive" not in rows["find"]
    assert "ScopeRequired(['notes:write'])" in rows["write"]
    assert "Authenticated(), ScopeRequired(['notes:read'])" in rows["notes://{note_id}"]
    assert "note_id, style?" in rows["summarize"]


def test_inspect_name_shows_one_component_in_detail(notes_app: Flask) -> None:
    result = notes_app.test_cli_runner().invoke(args=["mcp", "inspect", "find"])
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert text.startswith("Tool: find\n")
    assert "  Description: Find a note.\n" in text
    listed = json.loads(notes_app.test_cli_runner().invoke(args=["mcp", "inspect", "find", "--json"]).stdout)
    tool = listed["tools"][0]
    for label, member in (("Input schema", "inputSchema"), ("Output schema", "outputSchema")):
        indented = "\n".join("    " + line for line in json.dumps(tool[member], indent=2).splitlines())
        assert f"  {label}:\n{indented}\n" in text
    assert '      "readOnlyHint": true,' in text  # annotations, pretty-printed
    assert "  Permissions: -\n  Required scopes: -\n" in text


def test_inspect_name_matches_uris_templates_and_names(notes_app: Flask) -> None:
    runner = notes_app.test_cli_runner()
    by_template = runner.invoke(args=["mcp", "inspect", "notes://{note_id}"])
    assert by_template.exit_code == 0, by_template.output
    assert by_template.stdout.startswith("Resource template: note\n")
    assert "  URI template: notes://{note_id}\n" in by_template.stdout
    assert "  Permissions: Authenticated(), ScopeRequired(['notes:read'])\n" in by_template.stdout
    assert "  Required scopes: notes:read\n" in by_template.stdout
    assert runner.invoke(args=["mcp", "inspect", "note"]).stdout == by_template.stdout
    write = runner.invoke(args=["mcp", "inspect", "write"]).stdout
    assert "  Required scopes: notes:write\n" in write


def test_inspect_json_dumps_the_listings_as_a_client_receives_them(notes_app: Flask) -> None:
    runner = notes_app.test_cli_runner()
    result = runner.invoke(args=["mcp", "inspect", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert sorted(document) == ["prompts", "resourceTemplates", "resources", "tools"]
    assert [tool["name"] for tool in document["tools"]] == ["find", "write"]
    assert document["resourceTemplates"][0]["uriTemplate"] == "notes://{note_id}"
    assert document["prompts"][0]["arguments"] == [
        {"name": "note_id", "required": True},
        {"name": "style", "required": False},
    ]
    one = json.loads(runner.invoke(args=["mcp", "inspect", "write", "--json"]).stdout)
    assert one == {"tools": [document["tools"][1]], "resources": [], "resourceTemplates": [], "prompts": []}


def test_inspect_unknown_name_fails() -> None:
    result = stdio_app.test_cli_runner().invoke(args=["mcp", "inspect", "nope"])
    assert result.exit_code == 1
    assert "no tool, resource, resource template or prompt is named 'nope'" in result.stderr
    assert result.stdout == ""


def test_inspect_draws_rich_tables_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli_output, "stdout_is_terminal", lambda: True)
    result = stdio_app.test_cli_runner().invoke(args=["mcp", "inspect"])
    assert result.exit_code == 0, result.output
    assert "┏" in result.stdout and "│ add " in result.stdout
    assert "Tools (5)" in result.stdout and "Prompts (1)" in result.stdout


def test_inspect_detail_on_a_terminal_pretty_prints_the_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli_output, "stdout_is_terminal", lambda: True)
    result = stdio_app.test_cli_runner().invoke(args=["mcp", "inspect", "add"])
    assert result.exit_code == 0, result.output
    assert "Tool: add" in result.stdout and "Input schema:" in result.stdout
    assert '"required"' in result.stdout


def test_inspect_follows_the_caller(make_app: t.Callable[..., Flask], mcp: MCP) -> None:
    @mcp.tool(permissions=[ScopeRequired("secret")])
    def hidden() -> str:
        return "x"

    app = make_app(mcp, MCP_FILTER_LISTINGS_BY_PERMISSIONS=True)
    result = app.test_cli_runner().invoke(args=["mcp", "inspect", "--json"])
    assert json.loads(result.stdout)["tools"] == []


@pytest.mark.parametrize(
    ("schema", "summary"),
    [
        (None, "-"),
        ({"type": "object"}, "-"),
        ({"type": "object", "properties": {}}, "-"),
        ({"type": "string"}, "string"),
        (
            {
                "type": "object",
                "properties": {
                    "a": {"type": "integer"},
                    "b": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                    "c": {"$ref": "#/$defs/Thing"},
                    "d": {"enum": [1, 2]},
                    "e": {},
                },
                "required": ["a", "c"],
            },
            "a: integer, b?: string|null, c: Thing, d?: enum, e?: any",
        ),
    ],
)
def test_schema_summary(schema: t.Any, summary: str) -> None:
    assert schema_summary(schema) == summary


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_inspect_hints_show_task_support(make_app: t.Callable[..., Flask], mcp: MCP, era: str) -> None:
    @mcp.tool(task="required", annotations={"readOnlyHint": True})
    def export(table: str) -> str:
        """Export a table, as a task."""
        return table

    @mcp.tool(task="optional")
    def count(table: str) -> int:
        """Count rows, as a task or not."""
        return len(table)

    @mcp.tool
    def ping() -> str:
        """Answer at once."""
        return "pong"

    result = make_app(mcp).test_cli_runner().invoke(args=["mcp", "inspect", "--era", era])
    assert result.exit_code == 0, result.output
    lines = result.stdout.split("\n\n")[0].splitlines()
    hints = lines[1].index("HINTS")
    column = {line.split()[0]: line[hints:].split("  ")[0] for line in lines[2:]}
    assert column == {"export": "readOnly, task: required", "count": "task: optional", "ping": "-"}
