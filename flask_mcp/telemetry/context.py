"""The trace context a client sends in ``params._meta``, read so that nothing in it can hurt.

The W3C trace context (``traceparent``, ``tracestate``, ``baggage``) of a
message continues the client's trace. What a client sends there is taken
only as far as the W3C allows (length, ASCII), read by the app's
propagator, and ignored when that fails; the propagators' warnings about
it, which quote what they refuse, are dropped, so that a client cannot
write into the server's log.
"""

from __future__ import annotations

import contextvars
import logging
import typing as t

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace

__all__ = ["client_context"]

#: The ``_meta`` keys a trace context travels in, and the longest value taken of each (the W3C's
#: limits: longer, the propagators would refuse it with a warning that quotes it).
_CARRIER_LIMITS = {"traceparent": 512, "tracestate": 512, "baggage": 8192}
#: The loggers of the API's propagators, which quote what they refuse.
_PROPAGATION_LOGGERS = (
    "opentelemetry.trace.span",
    "opentelemetry.trace.propagation.tracecontext",
    "opentelemetry.baggage",
    "opentelemetry.baggage.propagation",
)
#: Set while a client's trace context is read.
_reading_client: contextvars.ContextVar[bool] = contextvars.ContextVar("flask_mcp_reading_client", default=False)


class _QuietWhileReadingClients(logging.Filter):
    """Drops the propagators' warnings about a client's trace context: a client must not write the server's log."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not _reading_client.get()


_QUIET_FILTER = _QuietWhileReadingClients()
for _name in _PROPAGATION_LOGGERS:
    logging.getLogger(_name).addFilter(_QUIET_FILTER)


def _carrier(params: t.Mapping[str, t.Any]) -> dict[str, str] | None:
    """The trace context of ``params._meta``: its ASCII string values within their limits; ``None`` without one."""
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        return None
    carrier = {
        key: value
        for key, limit in _CARRIER_LIMITS.items()
        if isinstance(value := meta.get(key), str) and len(value) <= limit and value.isascii()
    }
    return carrier if "traceparent" in carrier else None


def client_context(params: t.Mapping[str, t.Any]) -> otel_context.Context | None:
    """The trace context a client sent in ``params._meta``; ``None`` without a valid one.

    One that is malformed, oversized, or refused by the app's propagator is
    ignored (the ambient context is then the parent): never an error, nor a
    log record quoting it. A ``tracestate`` or ``baggage`` alone in error is
    dropped, and the ``traceparent`` still continues the client's trace.
    """
    carrier = _carrier(params)
    if carrier is None:
        return None
    token = _reading_client.set(True)
    try:
        parent = propagate.extract(carrier)
    except Exception:  # a propagator the app configured, failing on what a client sent
        return None
    finally:
        _reading_client.reset(token)
    return parent if trace.get_current_span(parent).get_span_context().is_valid else None
