"""The protocol core's :class:`~flask_mcp.core.tracing.Tracer`, on the OpenTelemetry API.

One SERVER span per message, named and described by the MCP semantic
conventions (:mod:`.conventions`), and the ``mcp.server.operation.duration``
and ``mcp.server.session.duration`` histograms.

The span's parent is the trace context the client sent in ``params._meta``
(``traceparent``, ``tracestate``, ``baggage``; read by :mod:`.context`), linked to the ambient one
(the HTTP server span of an instrumented Flask app); without one, the
ambient context is the parent. A message handled inside another one's
handler (a tool reading a resource through its context) is an INTERNAL
span of that one.

A message a surface refuses before the core sees it
(:mod:`flask_mcp.transport.refusals`) is a span of its own too, named as a
handled one when the method could be read (``tools/call add``) and ``MCP``
otherwise, whose ``error.type`` is the answer's HTTP status and
``rpc.response.status_code`` its JSON-RPC code.

With no SDK configured (the API's global providers are still its proxies)
a message costs one check and nothing else: no span, no attribute is made.
"""

from __future__ import annotations

import contextvars
import importlib.metadata
import time
import typing as t

from flask import has_request_context, request
from opentelemetry import context as otel_context
from opentelemetry import metrics, propagate, trace
from opentelemetry.trace import Link, SpanKind, Status, StatusCode

from ..transport.refusals import CORE_REACHED_KEY
from ..transport.stdio import NETWORK_TRANSPORT_KEY
from . import conventions as semconv
from .content import recorded
from .context import client_context

if t.TYPE_CHECKING:
    from ..components.registry import Registry
    from ..core.client import ClientState
    from ..core.server import Server
    from ..core.tracing import Refusal
    from ..protocol.jsonrpc import RequestId
    from ..stores.session_ends import SessionEnds
    from .settings import TelemetrySettings

__all__ = ["DURATION_BUCKETS", "REFUSED_SPAN_NAME", "OpenTelemetryTracer", "network_attributes"]

#: The bucket boundaries the conventions advise for both histograms, in seconds.
DURATION_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)
#: Set while a message's span is current: a message handled within it is part of it.
_in_message: contextvars.ContextVar[bool] = contextvars.ContextVar("flask_mcp_in_message", default=False)
_INSTRUMENTATION = "flask_mcp"
#: Seconds between two looks at the API's global providers while they are stand-ins.
_LOOK_AGAIN = 1.0
#: The name of a refused message's span when its method could not be read.
REFUSED_SPAN_NAME = "MCP"
#: The HTTP versions recorded as ``network.protocol.version``: a request line may say anything.
_HTTP_VERSIONS = frozenset({"0.9", "1.0", "1.1", "2", "2.0", "3", "3.0"})


def _version() -> str | None:
    # Read from the installed distribution: the package's own __version__ would import the extension.
    try:
        return importlib.metadata.version("flask-mcp")
    except importlib.metadata.PackageNotFoundError:
        return None


def network_attributes() -> dict[str, t.Any]:
    """``network.*`` and ``client.address`` of the message being handled, from Flask's request.

    A context made for stdio, the CLI or a task's run says what it is
    (:data:`~flask_mcp.transport.stdio.NETWORK_TRANSPORT_KEY`); any other
    request came over HTTP.
    """
    if not has_request_context():
        return {}
    environ = request.environ
    if NETWORK_TRANSPORT_KEY in environ:
        transport = environ[NETWORK_TRANSPORT_KEY]
        return {} if transport is None else {semconv.NETWORK_TRANSPORT: transport}
    attributes: dict[str, t.Any] = {semconv.NETWORK_TRANSPORT: "tcp", semconv.NETWORK_PROTOCOL_NAME: "http"}
    protocol = environ.get("SERVER_PROTOCOL", "")
    if isinstance(protocol, str) and protocol.startswith("HTTP/") and protocol[5:] in _HTTP_VERSIONS:
        attributes[semconv.NETWORK_PROTOCOL_VERSION] = protocol[5:]
    address = environ.get("REMOTE_ADDR")
    if address:
        attributes[semconv.CLIENT_ADDRESS] = address
    return attributes


def _is_stand_in(provider: object) -> bool:
    """Whether *provider* is one of the API's stand-ins: the proxies until an SDK is set up, or the no-op ones."""
    return isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider, metrics.NoOpMeterProvider)) or (
        type(provider).__name__ == "_ProxyMeterProvider"  # the meter proxy is not part of the public API
    )


def _type_name(kind: type[BaseException]) -> str:
    """``error.type`` of an exception: its class's canonical name (a builtin's without its module)."""
    module = kind.__module__
    return kind.__qualname__ if module == "builtins" else f"{module}.{kind.__qualname__}"


class _Quiet:
    """The trace of a message when nothing records: every call does nothing."""

    def __enter__(self) -> _Quiet:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def answered(self, response: dict[str, t.Any] | None) -> None:
        """Nothing to record."""

    def failed(self, error_type: str, message: str, code: int | None = None) -> None:
        """Nothing to record."""


_QUIET = _Quiet()


class OpenTelemetryTracer:
    """Traces and measures one server's messages through the OpenTelemetry API.

    :param server: the server traced (its registry tells registered names from any string).
    :param settings: what to record (``MCP_OTEL_*``).
    :param tracer_provider: where spans go; the API's global provider by default.
    :param meter_provider: where measurements go; the API's global provider by default.
    """

    def __init__(
        self,
        server: Server,
        settings: TelemetrySettings,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
    ) -> None:
        self.server = server
        self.settings = settings
        self._tracer_provider = tracer_provider
        self._meter_provider = meter_provider
        self._tracer: trace.Tracer | None = None
        #: ``mcp.server.operation.duration``, once a meter records.
        self.operations: metrics.Histogram | None = None
        #: ``mcp.server.session.duration``, once a meter records.
        self.sessions: metrics.Histogram | None = None
        #: When to look at the global providers again (:meth:`recording`).
        self._next_look = 0.0
        # Both found: nothing is looked at again.
        self._complete = False
        #: Where the ends of handshake sessions are awaited (:mod:`.sessions`); ``None``: no session store.
        self.ends: SessionEnds | None = None

    # -- what records ------------------------------------------------------------------------------

    def _resolve(self) -> None:
        """Find the tracer and histograms, once their providers are real ones (an SDK was set up)."""
        if self._tracer is None:
            provider = self._tracer_provider or trace.get_tracer_provider()
            if not _is_stand_in(provider):
                self._tracer = provider.get_tracer(_INSTRUMENTATION, _version())
        if self.operations is None:
            meters = self._meter_provider or metrics.get_meter_provider()
            if not _is_stand_in(meters):
                meter = meters.get_meter(_INSTRUMENTATION, _version())
                self.operations = meter.create_histogram(
                    "mcp.server.operation.duration",
                    unit="s",
                    description="MCP request or notification duration as observed on the receiver.",
                    explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
                )
                self.sessions = meter.create_histogram(
                    "mcp.server.session.duration",
                    unit="s",
                    description="The duration of the MCP session as observed on the MCP server.",
                    explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
                )

    @property
    def recording(self) -> bool:
        """Whether a tracer or a meter records: an SDK was set up (or providers were given).

        While the API's stand-ins are all there is, they are looked at again at most once a
        second (an SDK set up after the app started is found within one): in between, a
        message costs a clock read.
        """
        if self._complete:
            return True
        now = time.monotonic()
        if now >= self._next_look:
            self._next_look = now + _LOOK_AGAIN
            self._resolve()
            self._complete = self._tracer is not None and self.operations is not None
        return self._tracer is not None or self.operations is not None

    # -- the core's calls --------------------------------------------------------------------------

    def message(
        self, method: str, params: dict[str, t.Any], request_id: RequestId | None, state: ClientState
    ) -> t.ContextManager[_MessageSpan | _Quiet]:
        """The span (and measurement) of one message; see :meth:`flask_mcp.core.tracing.Tracer.message`."""
        if not self.recording:
            return _QUIET
        ends = self.ends
        if ends is not None:  # once a window, some process measures the sessions that ended unseen
            ends.poll()
        return _MessageSpan(self, method, params, request_id, state)

    def outgoing(self, params: dict[str, t.Any]) -> dict[str, t.Any]:
        """*params* with the current trace context in their ``_meta`` (unchanged when there is none)."""
        carrier: dict[str, str] = {}
        propagate.inject(carrier)
        if not carrier:
            return params
        meta = params.get("_meta")
        return {**params, "_meta": {**(meta if isinstance(meta, dict) else {}), **carrier}}

    def session_ended(self, started: float, ended: float, state: ClientState) -> None:
        """Record ``mcp.server.session.duration`` of a session that ended in a request (stdin closing)."""
        if not self.recording or self.sessions is None:
            return
        attributes = {semconv.PROTOCOL_VERSION_ATTRIBUTE: state.protocol_version, **network_attributes()}
        attributes.pop(semconv.CLIENT_ADDRESS, None)
        self.sessions.record(max(0.0, ended - started), attributes)

    def refused(self, refusal: Refusal) -> None:
        """The span and measurement of a message refused before the core saw it (see the module docstring)."""
        if not self.recording:
            return
        registry = self.server.registry
        attributes = refused_attributes(refusal, registry)
        name = (
            REFUSED_SPAN_NAME if refusal.method is None else semconv.span_name(refusal.method, refusal.params, registry)
        )
        parent = client_context(refusal.params)
        span = self.start(name, parent, False, attributes, start_time=refusal.started)
        if span is not None:
            span.set_status(Status(StatusCode.ERROR, semconv.bounded(refusal.message)))
            span.end()
        if self.operations is not None:
            duration = max(0, time.time_ns() - refusal.started) / 1e9
            self.operations.record(duration, semconv.metric_attributes(attributes, self.server.registry))

    # -- for a message's span ----------------------------------------------------------------------

    def start(
        self,
        name: str,
        parent: otel_context.Context | None,
        nested: bool,
        attributes: dict[str, t.Any],
        start_time: int | None = None,
    ) -> trace.Span | None:
        """The span of a message (see the module docstring); ``None``: no tracer records.

        :param parent: the context the client sent, if any.
        :param nested: handled within another message's span.
        :param start_time: when it started (:func:`time.time_ns`); now by default.
        """
        tracer = self._tracer
        if tracer is None:
            return None
        if parent is None:
            kind = SpanKind.INTERNAL if nested else SpanKind.SERVER
            return tracer.start_span(name, kind=kind, attributes=attributes, start_time=start_time)
        ambient = trace.get_current_span().get_span_context()
        links = [Link(ambient)] if ambient.is_valid else None
        return tracer.start_span(
            name, context=parent, kind=SpanKind.SERVER, attributes=attributes, links=links, start_time=start_time
        )


def refused_attributes(refusal: Refusal, registry: Registry) -> dict[str, t.Any]:
    """What the conventions record of a refused message: as of a handled one, never a revision the server does not know.

    ``mcp.method.name`` is :data:`~.conventions.OTHER` when the method could not be read;
    the tool, prompt or resource it names as for a handled message (truncated);
    ``mcp.protocol.version`` is recorded only for a revision the server knows.
    """
    method = refusal.method if isinstance(refusal.method, str) else semconv.OTHER
    attributes = semconv.message_attributes(method, refusal.params, refusal.request_id, registry)
    if refusal.protocol_version in semconv.KNOWN_VERSIONS:
        attributes[semconv.PROTOCOL_VERSION_ATTRIBUTE] = refusal.protocol_version
    attributes.update(network_attributes())
    attributes[semconv.ERROR_TYPE] = refusal.error_type
    if refusal.code is not None:
        attributes[semconv.STATUS_CODE] = str(refusal.code)
    return attributes


class _MessageSpan:
    """One message's span, current while its handler runs, and its duration measured."""

    def __init__(
        self,
        tracer: OpenTelemetryTracer,
        method: str,
        params: dict[str, t.Any],
        request_id: RequestId | None,
        state: ClientState,
    ) -> None:
        self.tracer = tracer
        self.params = params
        self.state = state
        registry = tracer.server.registry
        self.attributes = semconv.message_attributes(method, params, request_id, registry)
        self.attributes.update(network_attributes())
        self.name = semconv.span_name(method, params, registry)
        self.outcome = semconv.Outcome()
        self.result: t.Any = None
        self.span: trace.Span | None = None
        self._tokens: tuple[object, contextvars.Token[bool]] | None = None
        self._start = 0.0

    def __enter__(self) -> _MessageSpan:
        self._start = time.perf_counter()
        settings = self.tracer.settings
        if settings.capture_content and self.attributes.get(semconv.METHOD_NAME) == "tools/call":
            arguments = recorded(settings, "arguments", self.params.get("arguments"))
            if arguments is not None:
                self.attributes[semconv.TOOL_ARGUMENTS] = arguments
        nested = _in_message.get()
        # The client's context (its baggage too) is the parent; else the ambient one.
        parent = None if nested else client_context(self.params)
        self.span = self.tracer.start(self.name, parent, nested, self.attributes)
        if not nested and has_request_context():  # the endpoint's answer is then the core's, not a refusal
            request.environ[CORE_REACHED_KEY] = True
        if self.span is not None:
            base = parent if parent is not None else otel_context.get_current()
            attached = otel_context.attach(trace.set_span_in_context(self.span, base))
            self._tokens = (attached, _in_message.set(True))
        return self

    def answered(self, response: dict[str, t.Any] | None) -> None:
        """The message's response envelope: its error, or a tool's ``isError``, is the span's."""
        self.outcome = semconv.outcome_of(response)
        if response is not None and self.tracer.settings.capture_content:
            self.result = response.get("result")

    def failed(self, error_type: str, message: str, code: int | None = None) -> None:
        """A direct call's failure."""
        self.outcome = semconv.Outcome(error_type, None if code is None else str(code), message)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        outcome = self.outcome
        if exc is not None and outcome.error_type is None:  # not a failure the core already described
            outcome = semconv.Outcome(_type_name(type(exc)), None, str(exc))
        else:
            exc = None
        attributes = self.attributes
        attributes.update(semconv.protocol_attributes(self.params, self.state))
        if outcome.error_type is not None:
            attributes[semconv.ERROR_TYPE] = outcome.error_type
        if outcome.status_code is not None:
            attributes[semconv.STATUS_CODE] = outcome.status_code
        span = self.span
        if span is not None:
            try:
                self._finish(span, outcome, exc)
            finally:
                if self._tokens is not None:
                    otel_context.detach(t.cast(t.Any, self._tokens[0]))
                    _in_message.reset(self._tokens[1])
        operations = self.tracer.operations
        if operations is not None:
            duration = time.perf_counter() - self._start
            operations.record(duration, semconv.metric_attributes(attributes, self.tracer.server.registry))

    def _finish(self, span: trace.Span, outcome: semconv.Outcome, exc: BaseException | None) -> None:
        attributes = dict(self.attributes)
        if self.result is not None and attributes.get(semconv.METHOD_NAME) == "tools/call":
            result = recorded(self.tracer.settings, "result", self.result)
            if result is not None:
                attributes[semconv.TOOL_RESULT] = result
        span.set_attributes(attributes)
        if exc is not None:
            span.record_exception(exc)
        if outcome.error_type is not None:
            span.set_status(Status(StatusCode.ERROR, outcome.description))
        span.end()
