"""OpenTelemetry traces, metrics and log correlation, by the MCP semantic conventions.

The protocol core reports every message it handles to its
:class:`~flask_mcp.core.tracing.Tracer`; this package gives it one built on
the OpenTelemetry API (:class:`~flask_mcp.telemetry.tracer.OpenTelemetryTracer`)
when that API is installed (the ``otel`` extra) and ``MCP_OTEL_ENABLED`` is
set (the default). Spans and measurements go to the API's global providers,
that is to whatever SDK the app sets up; without one they cost one check a
message. :func:`instrument` points one app's servers at providers of its own.

See ``docs/observability.rst``.
"""

from __future__ import annotations

import importlib.util
import typing as t

from ..globals import servers_of
from .settings import TelemetrySettings

if t.TYPE_CHECKING:
    from flask import Flask
    from flask_caching import Cache

    from ..core.server import Server
    from ..core.tracing import Tracer
    from ..stores.sessions import SessionStore

__all__ = ["TelemetrySettings", "api_installed", "instrument", "tracer_for"]


def api_installed() -> bool:
    """Whether the OpenTelemetry API can be imported."""
    try:
        return importlib.util.find_spec("opentelemetry.trace") is not None
    except ModuleNotFoundError:  # a dotted name's parent is imported to look inside it: no opentelemetry at all
        return False


def tracer_for(
    server: Server,
    settings: TelemetrySettings,
    tracer_provider: t.Any = None,
    meter_provider: t.Any = None,
    *,
    sessions: SessionStore | None = None,
    store: Cache | None = None,
) -> Tracer | None:
    """The tracer of *server*: ``None`` when telemetry is off or the API is not installed.

    Also ties flask_mcp's log records to the current span (``MCP_OTEL_LOG_CORRELATION``).

    :param sessions: the server's handshake sessions, whose durations it measures however they end.
    :param store: where their ends are awaited (the short-lived store); the sessions' own by default.
    """
    if not settings.enabled or not api_installed():
        return None
    from .logs import correlate_logs
    from .sessions import measure_sessions
    from .tracer import OpenTelemetryTracer

    if settings.log_correlation:
        correlate_logs()
    tracer = OpenTelemetryTracer(server, settings, tracer_provider, meter_provider)
    if sessions is not None:
        measure_sessions(tracer, sessions, store if store is not None else sessions.cache, settings)
    return tracer


def instrument(app: Flask, *, tracer_provider: t.Any = None, meter_provider: t.Any = None) -> None:
    """Send the spans and measurements of every MCP server of *app* to these providers.

    For an app that sets up its own providers rather than the global ones
    (``trace.set_tracer_provider``), and for tests. A provider not given is
    the global one. Call it after ``init_app``.

    :raises RuntimeError: without the OpenTelemetry API, or with ``MCP_OTEL_ENABLED`` off.
    """
    states = list(servers_of(app).by_name.values())
    if not states:
        raise RuntimeError("instrument() needs an app with the MCP extension set up (call it after init_app)")
    for state in states:
        settings = TelemetrySettings.from_app(app, state.settings.config_prefix)
        tracer = tracer_for(
            state.server,
            settings,
            tracer_provider,
            meter_provider,
            sessions=state.sessions,
            store=state.ephemeral_cache,
        )
        if tracer is None:
            raise RuntimeError("OpenTelemetry is not used: install the otel extra and leave MCP_OTEL_ENABLED on")
        state.server.tracer = tracer
