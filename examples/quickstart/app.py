"""Quickstart: a small MCP server on Flask.

Run it with ``python examples/quickstart/app.py`` (serves http://127.0.0.1:5000/mcp)
or ``flask --app examples/quickstart/app.py run``.
"""

from __future__ import annotations

import datetime
import typing as t

from flask import Flask, abort
from marshmallow import Schema, fields

from flask_mcp import MCP, NotFoundError

mcp = MCP(name="quickstart", version="1.0.0", instructions="A demo server: arithmetic, notes and a review prompt.")

NOTES = {"1": "Buy milk", "2": "Call the plumber"}


class AddArgs(Schema):
    a = fields.Integer(required=True, strict=True, metadata={"description": "First addend"})
    b = fields.Integer(required=True, strict=True, metadata={"description": "Second addend"})


class NoteSchema(Schema):
    id = fields.String(required=True)
    text = fields.String(required=True)
    length = fields.Integer()


@mcp.tool(input_schema=AddArgs, annotations={"readOnlyHint": True})
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool()
def greet(name: str, excited: bool = False) -> str:
    """Greet someone by name."""
    return f"Hello, {name}{'!' if excited else '.'}"


@mcp.tool(output_schema=NoteSchema)
def get_note(note_id: str) -> dict[str, t.Any]:
    """Fetch a note with its length."""
    if note_id not in NOTES:
        raise NotFoundError(f"no note with id {note_id!r}")  # MCP: an isError result; REST: 404
    return {"id": note_id, "text": NOTES[note_id], "length": len(NOTES[note_id])}


@mcp.resource("config://app", mime_type="application/json", description="Server settings.")
def app_config() -> dict[str, t.Any]:
    return {"name": "quickstart", "started": datetime.date.today().isoformat()}


@mcp.resource("notes://{note_id}", mime_type="text/plain", completions={"note_id": list(NOTES)})
def note(note_id: str) -> str:
    """The text of one note."""
    if note_id not in NOTES:
        abort(404)  # answered as MCP error -32002 "Resource not found"
    return NOTES[note_id]


@mcp.prompt(completions={"language": ["python", "go", "rust", "typescript"]})
def review_code(code: str, language: str = "python") -> str:
    """Ask for a code review."""
    return f"Please review this {language} code:\n\n{code}"


def create_app(config: t.Mapping[str, t.Any] | None = None) -> Flask:
    """Build the app; *config* overrides ``app.config`` (e.g. ``MCP_STATELESS``)."""
    app = Flask(__name__)
    app.config.update(config or {})
    mcp.init_app(app)
    return app


app = create_app()

if __name__ == "__main__":
    app.run(host="127.0.0.1", port=5000)
