"""The server the approval tests of several packages share: a tool that deletes a note once approved."""

from __future__ import annotations

from flask_mcp import MCP


def delete_note_server(deleted: list[int]) -> MCP:
    """``delete_note(note_id)``, marked ``confirm="Delete note {note_id}?"``; *deleted* gets each id it ran for."""
    mcp = MCP(name="notes")

    @mcp.tool(confirm="Delete note {note_id}?")
    def delete_note(note_id: int) -> str:
        deleted.append(note_id)
        return f"deleted {note_id}"

    return mcp
