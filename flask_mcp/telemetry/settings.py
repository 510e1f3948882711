"""The ``MCP_OTEL_*`` keys of one app, read once when the extension is set up."""

from __future__ import annotations

import dataclasses
import typing as t

from ..config.prefix import canonical_view
from ..config.values import positive

if t.TYPE_CHECKING:
    from flask import Flask

__all__ = ["Redactor", "TelemetrySettings"]

#: ``redact(kind, value)``: what to record of a tool's arguments (``kind`` is ``"arguments"``) or
#: result (``"result"``): the value, a replacement, or ``None`` to record nothing.
Redactor = t.Callable[[str, t.Any], t.Any]


@dataclasses.dataclass(frozen=True)
class TelemetrySettings:
    """What the telemetry records, from ``MCP_OTEL_*`` (see ``docs/observability.rst``)."""

    #: ``MCP_OTEL_ENABLED``: spans and metrics, when the OpenTelemetry API is installed.
    enabled: bool = True
    #: ``MCP_OTEL_CAPTURE_CONTENT``: a tool call's arguments and result on its span.
    capture_content: bool = False
    #: ``MCP_OTEL_CONTENT_MAX_LENGTH``: characters of JSON kept of each.
    content_max_length: int = 4096
    #: ``MCP_OTEL_CONTENT_REDACTOR``: called on each before it is recorded.
    redactor: Redactor | None = None
    #: ``MCP_OTEL_LOG_CORRELATION``: flask_mcp's log records carry the current trace and span ids.
    log_correlation: bool = True
    #: ``MCP_OTEL_SESSION_SWEEP_INTERVAL``: seconds of one window of sessions' ends (a sweep each).
    session_sweep_interval: int = 60

    @classmethod
    def from_app(cls, app: Flask, prefix: str) -> TelemetrySettings:
        """Read the keys of the server whose keys start with *prefix* (defaults already applied)."""
        config = canonical_view(app.config, prefix)
        redactor = config["MCP_OTEL_CONTENT_REDACTOR"]
        if redactor is not None and not callable(redactor):
            raise ValueError(f"MCP_OTEL_CONTENT_REDACTOR must be a callable or None, not {redactor!r}")
        return cls(
            enabled=bool(config["MCP_OTEL_ENABLED"]),
            capture_content=bool(config["MCP_OTEL_CAPTURE_CONTENT"]),
            content_max_length=positive(config, "MCP_OTEL_CONTENT_MAX_LENGTH"),
            redactor=redactor,
            log_correlation=bool(config["MCP_OTEL_LOG_CORRELATION"]),
            session_sweep_interval=positive(config, "MCP_OTEL_SESSION_SWEEP_INTERVAL"),
        )
