"""flask_mcp's log records carry the trace and span ids of the span current when they are made.

:func:`correlate_logs` adds a :class:`TraceContextFilter` to flask_mcp's
loggers: each record gets ``otelTraceID``, ``otelSpanID`` and
``otelTraceSampled`` (the names OpenTelemetry's logging instrumentation
uses), so a format such as ``"%(message)s trace=%(otelTraceID)s
span=%(otelSpanID)s"`` ties a log line to its trace. Without a current span
they are ``"0"`` and ``False``, so such a format never fails.
"""

from __future__ import annotations

import logging

from opentelemetry import trace

__all__ = ["LOGGERS", "TraceContextFilter", "correlate_logs"]

#: The loggers flask_mcp logs through.
LOGGERS = ("flask_mcp", "flask_mcp.oauth")


class TraceContextFilter(logging.Filter):
    """Adds the current span's ids to every record; never drops one."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Set ``otelTraceID``, ``otelSpanID`` and ``otelTraceSampled`` on *record*."""
        context = trace.get_current_span().get_span_context()
        if context.is_valid:
            record.otelTraceID = format(context.trace_id, "032x")
            record.otelSpanID = format(context.span_id, "016x")
            record.otelTraceSampled = context.trace_flags.sampled
        else:
            record.otelTraceID = record.otelSpanID = "0"
            record.otelTraceSampled = False
        return True


def correlate_logs() -> None:
    """Add the filter to flask_mcp's loggers, once however often it is called."""
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(kept, TraceContextFilter) for kept in logger.filters):
            logger.addFilter(TraceContextFilter())
