"""How a tool result is written for the model: the text block, and failures.

The ``structuredContent`` of a result is always JSON; only the human- and
model-readable text block follows the tool's
:class:`~flask_mcp.OutputFormat`. Failures follow its
:class:`~flask_mcp.ErrorFormat`.
"""

from __future__ import annotations

import typing as t
import warnings

from ..policies.options import ErrorFormat, OutputFormat
from ..protocol import jsonrpc

__all__ = ["ErrorType", "error_result", "render_text", "toon_text"]

#: The kinds of failure a tool call reports.
ErrorType = t.Literal["validation_error", "service_error", "not_found", "timeout", "not_approved"]

#: First line of a TOON text block, so a reader that does not know TOON knows what it sees.
TOON_MARKER = "# format: toon"


class ToonUnavailableWarning(UserWarning):
    """TOON output was asked for but the ``toon-format`` package is not installed."""


def _is_uniform_table(value: t.Any) -> bool:
    # What TOON is good at: rows of objects with the same keys.
    if not isinstance(value, list) or not value or not all(isinstance(item, dict) for item in value):
        return False
    keys = value[0].keys()
    return all(item.keys() == keys for item in value)


def toon_text(value: t.Any) -> str | None:
    """*value* as a TOON block after the marker line; ``None`` when ``toon-format`` is missing."""
    try:
        import toon_format
    except ImportError:
        warnings.warn(
            "output_format='toon' needs the toon-format package (pip install 'flask-mcp[toon]'); sending JSON instead",
            ToonUnavailableWarning,
            stacklevel=2,
        )
        return None
    return f"{TOON_MARKER}\n```toon\n{toon_format.encode(value)}\n```"


def render_text(value: t.Any, output_format: OutputFormat) -> str:
    """The text block for a JSON-ready *value*.

    :raises ValueError: a value JSON cannot represent (``NaN``, ``Infinity``).
    :raises TypeError: a value of a type that has no JSON form.
    """
    if type(value) is int and output_format is not OutputFormat.TOON:
        # The most common result: its JSON is its repr (as the encoder writes it), and no table.
        return int.__repr__(value)
    # Encoding as JSON first also checks the value (NaN, unknown types) for
    # the structured copy, which is encoded by the same rules later.
    text = jsonrpc.dumps(value)
    if output_format is OutputFormat.TOON or (output_format is OutputFormat.AUTO and _is_uniform_table(value)):
        return toon_text(value) or text
    return text


def error_result(
    message: str,
    *,
    error_type: ErrorType = "service_error",
    detail: t.Any = None,
    value: t.Any = None,
    include_value: bool = False,
    error_format: ErrorFormat = ErrorFormat.TEXT,
) -> dict[str, t.Any]:
    """A ``CallToolResult`` with ``isError`` reporting a failure to the model.

    :param message: one line saying what went wrong.
    :param error_type: the kind of failure (the ``json`` format names it).
    :param detail: structured detail, such as marshmallow's field messages.
    :param value: the arguments that failed validation, echoed when
        *include_value* is set (``MCP_INCLUDE_VALIDATION_VALUE``).
    """
    echo = include_value and value is not None
    if error_format is ErrorFormat.JSON:
        error: dict[str, t.Any] = {"type": error_type, "message": message, "detail": detail}
        if echo:
            error["value"] = value
        text = jsonrpc.dumps({"error": error})
    elif error_format is ErrorFormat.PLAIN:
        plain: dict[str, t.Any] = {"error": message}
        if echo:
            plain["value"] = value
        text = jsonrpc.dumps(plain)
    else:
        text = f"Error executing tool: {message}"
        if echo:
            text += f" (arguments: {jsonrpc.dumps(value)})"
    return {"content": [{"type": "text", "text": text}], "isError": True}
