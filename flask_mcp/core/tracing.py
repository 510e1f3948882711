"""The seam through which the core reports every message it handles: tracing and metrics.

The core knows nothing of OpenTelemetry (nor of any other telemetry): a
:class:`Tracer` is handed to it as :attr:`Server.tracer
<flask_mcp.core.server.Server.tracer>`, and it calls
:meth:`Tracer.message` around each request and notification it handles, on
every surface (the endpoint in both eras, stdio, REST, CGI, the CLI, task
runs). With no tracer (the default) nothing is called at all. A message a
transport refuses before the core sees it (no credentials, an unknown
session, a body that is not JSON-RPC) is told with :meth:`Tracer.refused`.

The Flask integration gives one built on the OpenTelemetry API
(:mod:`flask_mcp.telemetry`) when that API is installed.
"""

from __future__ import annotations

import typing as t

if t.TYPE_CHECKING:
    from ..protocol.jsonrpc import RequestId
    from .client import ClientState

__all__ = ["MessageTrace", "Refusal", "Tracer", "traced_params"]


class Refusal(t.NamedTuple):
    """A message a transport answered with an error before the core saw it."""

    #: What went wrong, low-cardinality (over HTTP: the answer's status, ``"401"``).
    error_type: str
    #: The JSON-RPC error code of the answer, if it carries one.
    code: int | None
    #: The error's message.
    message: str
    #: When the request arrived (:func:`time.time_ns`).
    started: int
    #: The JSON-RPC method, when it could be read (a header, or the body); ``None`` otherwise.
    method: str | None = None
    #: The message's params, when its body was read (their ``_meta`` may carry a trace context).
    params: t.Mapping[str, t.Any] = {}
    request_id: RequestId | None = None
    #: The protocol revision the request names (a header, or ``_meta``), if any: as sent, unchecked.
    protocol_version: str | None = None


class MessageTrace(t.Protocol):
    """What the core tells of the outcome of one message, while its trace is open."""

    def answered(self, response: dict[str, t.Any] | None) -> None:
        """The message was answered with the JSON-RPC *response* envelope (``None``: a notification)."""

    def failed(self, error_type: str, message: str, code: int | None = None) -> None:
        """The message failed without a JSON-RPC envelope (a direct call of REST, CGI, the CLI).

        :param error_type: a low-cardinality name of what went wrong (``tool_error``, ``invalid_arguments``).
        :param code: the JSON-RPC error code it stands for, if any.
        """


class Tracer(t.Protocol):
    """Traces and measures the messages a :class:`~flask_mcp.core.server.Server` handles."""

    @property
    def recording(self) -> bool:
        """Whether anything is recorded now: a transport skips the work that only telemetry needs when not."""
        ...  # pragma: no cover - a protocol

    def message(
        self, method: str, params: dict[str, t.Any], request_id: RequestId | None, state: ClientState
    ) -> t.ContextManager[MessageTrace]:
        """A context the handling of one message runs in.

        Entered before the handler runs, so what the handler does (its own
        spans, its log records) belongs to it; an exception that leaves it is
        the message's failure. *state* is read when the message was answered
        (``initialize`` negotiates the revision it names).
        """
        ...  # pragma: no cover - a protocol

    def outgoing(self, params: dict[str, t.Any]) -> dict[str, t.Any]:
        """*params* of a request the server sends the client, with the current trace context in their ``_meta``."""
        ...  # pragma: no cover - a protocol

    def session_ended(self, started: float, ended: float, state: ClientState) -> None:
        """A handshake session that started at *started* ended at *ended* (seconds since the epoch)."""
        ...  # pragma: no cover - a protocol

    def refused(self, refusal: Refusal) -> None:
        """A transport answered a message with an error before the core saw it; never raises."""
        ...  # pragma: no cover - a protocol


def traced_params(tracer: Tracer | None, params: dict[str, t.Any]) -> dict[str, t.Any]:
    """*params* of a request to the client, carrying the trace context when there is a tracer."""
    return params if tracer is None else tracer.outgoing(params)
