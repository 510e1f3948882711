"""``mcp.server.session.duration`` of handshake sessions, however they end.

A session that ends in a request (``DELETE``, its maximum age found, its
owner's cap) is measured there; one that idles out or passes its maximum
age with nobody asking is measured by a sweep of the store
(:mod:`flask_mcp.stores.session_ends`) that some process runs once a
window, while it handles a message. Either way each session is measured
once, by whichever process claims its end in the store.

Attributes, by the conventions: ``mcp.protocol.version``, ``network.*``
(read in one of the session's own requests: the sweep runs in anybody's),
and ``error.type`` for a session that did not end by ``DELETE`` or stdin
closing: ``timeout`` (it idled out), ``max_age`` (it passed
``MCP_SESSION_MAX_AGE``), ``evicted`` (its owner's cap ended it).
"""

from __future__ import annotations

import typing as t

from ..stores.session_ends import SessionEnds
from . import conventions as semconv
from .tracer import network_attributes

if t.TYPE_CHECKING:
    from flask_caching import Cache

    from ..core.client import ClientState
    from ..stores.sessions import SessionStore
    from .settings import TelemetrySettings
    from .tracer import OpenTelemetryTracer

__all__ = ["SessionDurations", "measure_sessions"]


class SessionDurations:
    """Records the durations of one tracer's sessions (a :class:`~flask_mcp.stores.session_ends.EndRecorder`)."""

    def __init__(self, tracer: OpenTelemetryTracer) -> None:
        self.tracer = tracer

    @property
    def measuring(self) -> bool:
        """Whether a meter records: without one, no session's end is noted in the store."""
        tracer = self.tracer
        return tracer.recording and tracer.sessions is not None

    def describe(self, state: ClientState) -> dict[str, t.Any]:
        """``mcp.protocol.version`` and ``network.*`` of the request being handled (never the client's address)."""
        attributes = {semconv.PROTOCOL_VERSION_ATTRIBUTE: state.protocol_version, **network_attributes()}
        attributes.pop(semconv.CLIENT_ADDRESS, None)
        return attributes

    def record(self, duration: float, attributes: t.Mapping[str, t.Any], error_type: str | None) -> None:
        """Record one session's *duration*."""
        histogram = self.tracer.sessions
        if histogram is None:
            return
        measured = dict(attributes)
        if error_type is not None:
            measured[semconv.ERROR_TYPE] = error_type
        histogram.record(duration, measured)


def measure_sessions(
    tracer: OpenTelemetryTracer, sessions: SessionStore, cache: Cache, settings: TelemetrySettings
) -> SessionEnds:
    """Measure the sessions of *sessions* with *tracer*, awaiting their ends in *cache*."""
    ends = SessionEnds(sessions, cache, SessionDurations(tracer), settings.session_sweep_interval)
    sessions.ends = ends
    tracer.ends = ends
    return ends
