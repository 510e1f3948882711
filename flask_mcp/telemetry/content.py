"""What a span may record of a tool call's arguments and result, when that is asked for.

Off by default (``MCP_OTEL_CAPTURE_CONTENT``): arguments and results are
the caller's data. When on, each goes through the app's redactor
(``MCP_OTEL_CONTENT_REDACTOR``) and is recorded as JSON cut at
``MCP_OTEL_CONTENT_MAX_LENGTH`` characters.
"""

from __future__ import annotations

import json
import logging
import typing as t

if t.TYPE_CHECKING:
    from .settings import TelemetrySettings

__all__ = ["TRUNCATED", "recorded"]

logger = logging.getLogger("flask_mcp")

#: Ends a value that was cut.
TRUNCATED = "...(truncated)"


def recorded(settings: TelemetrySettings, kind: str, value: t.Any) -> str | None:
    """*value* as a span records it: redacted, as JSON, bounded; ``None``: nothing to record.

    :param kind: ``"arguments"`` or ``"result"``, as the redactor is told.
    """
    if settings.redactor is not None:
        try:
            value = settings.redactor(kind, value)
        except Exception:  # a redactor that fails records nothing rather than the unredacted value
            logger.exception("MCP_OTEL_CONTENT_REDACTOR failed on a tool call's %s: nothing recorded", kind)
            return None
    if value is None:
        return None
    text = json.dumps(value, default=str, ensure_ascii=False, separators=(",", ":"))
    limit = settings.content_max_length
    return text if len(text) <= limit else text[:limit] + TRUNCATED
