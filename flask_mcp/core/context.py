"""The context a handler asks for to talk back to the client while it runs.

A tool, resource or prompt function that declares a parameter annotated
with :class:`Context` receives one::

    @mcp.tool
    def crunch(rows: int, ctx: Context) -> str:
        for done in range(rows):
            ctx.report_progress(done, total=rows)
        ctx.info("crunched")
        return "ok"

The context speaks through a :class:`Channel` that the transport provides
(Streamable HTTP switches the response to Server-Sent Events for it); the
protocol core never sees how messages travel.

Questions to the client (:meth:`Context.elicit`, :meth:`Context.sample`,
:meth:`Context.list_roots`, :meth:`Context.ask`) are requests to the client
in the handshake era; in the modern era they end the request with an
``input_required`` round, and the handler runs again from the start with
the answers (:mod:`flask_mcp.core.rounds`).

:attr:`Context.principal` is the authenticated caller,
:meth:`Context.read_resource` reads another resource of the server as the
client would, and :attr:`Context.state` keeps small JSON values between
requests in a :class:`StateStore` the extension provides.
"""

from __future__ import annotations

import typing as t

import marshmallow as ma

from ..protocol import jsonrpc
from ..protocol.envelope import LOG_LEVEL
from ..protocol.jsonrpc import MCPError
from ..protocol.versions import LOG_LEVELS
from ..schemas.hints import InjectedParameter
from .context_state import ContextState, StateStore, StateUnavailable, state_store_of, use_state_store
from .input_requests import Elicit, ElicitResult, InputRequest, ListRoots, Sample, SampleOptions
from .result_cache import asked_client
from .tracing import traced_params

if t.TYPE_CHECKING:
    from ..policies.principal import Principal
    from .client import Call

__all__ = [
    "Channel",
    "Context",
    "ContextState",
    "ElicitResult",
    "NoAnswer",
    "StateStore",
    "StateUnavailable",
    "notifications_asked",
    "requests_unavailable",
    "use_state_store",
]


#: Error code for a server-to-client request the client cannot take.
CAPABILITY_MISSING = -32603


class NoAnswer(MCPError):
    """The client gave no answer to a request a handler sent: it timed out, the request was cancelled,
    or the connection ended. Unlike an error the client answered with, asking again later may work."""


class Channel(t.Protocol):
    """What a transport offers a running handler."""

    def notify(self, method: str, params: dict[str, t.Any]) -> None:
        """Send a notification related to the current request."""

    def request(self, method: str, params: dict[str, t.Any], timeout: float) -> dict[str, t.Any]:
        """Send a request to the client and return its result.

        :raises MCPError: the error the client answered with.
        :raises NoAnswer: no answer came.
        """
        ...

    def cancelled(self) -> bool:
        """Whether the client cancelled the current request."""
        ...

    def close_stream(self) -> None:
        """End the live event stream; the client resumes it later (SSE polling)."""

    def unavailable(self) -> str | None:
        """Why requests to the client cannot be sent on this channel, or ``None`` when they can."""


def notifications_asked(params: dict[str, t.Any]) -> bool:
    """Whether a 2026-07-28 request asked for anything its handler's context sends while it runs.

    That is progress (a ``progressToken``) and log messages (a log level in
    its envelope): :meth:`Context.report_progress` and :meth:`Context.log`
    send nothing else in this revision, and nothing without them. A request
    that asked for neither is answered when its handler returns, so a
    transport may run that handler as it runs one without a context.
    """
    meta = params.get("_meta")
    return isinstance(meta, dict) and (meta.get("progressToken") is not None or meta.get(LOG_LEVEL) is not None)


def requests_unavailable(channel: Channel | None) -> str | None:
    """Why no request can be sent to the client on *channel* (none at all: no transport that can), or ``None``."""
    return channel.unavailable() if channel is not None else "a transport that can send requests"


class Context(InjectedParameter):
    """The running request, as a handler sees it.

    :param call: the request being handled.
    :param channel: the transport's way back to the client, or ``None`` when
        it has none (notifications are then dropped and server-to-client
        requests fail with a clear error).
    :param timeout: seconds to wait for the client's answer to a request.
    """

    def __init__(self, call: Call, channel: Channel | None, timeout: float = 300.0) -> None:
        self._call = call
        self._channel = channel
        self._timeout = timeout
        self._progress: float | None = None

    @property
    def request_id(self) -> jsonrpc.RequestId | None:
        """The JSON-RPC id of the request being handled."""
        return self._call.request_id

    @property
    def session_id(self) -> str | None:
        """The session the request belongs to (``None`` when stateless)."""
        return self._call.state.session_id

    @property
    def principal(self) -> Principal | None:
        """The authenticated caller, or ``None`` when the transport authenticates nobody."""
        return self._call.principal

    @property
    def state(self) -> ContextState:
        """Small JSON values kept between requests: per session in the handshake era, else per principal.

        A request with neither a session nor an authenticated principal has
        nobody to keep them for: :attr:`ContextState.available` is false and
        using it raises :class:`StateUnavailable`.
        """
        call = self._call
        session = call.state.session_id
        if session is not None:
            scope: str | None = f"session:{session}"
        else:
            scope = f"principal:{call.principal.subject}" if call.principal is not None else None
        return ContextState(state_store_of(call.server), scope, call.caller)

    def read_resource(self, uri: str) -> list[dict[str, t.Any]]:
        """Read another resource of this server, as the client would with ``resources/read``.

        The caller's permissions apply; a denial, an unknown URI or a failing
        handler raise the :class:`MCPError` the client would have got.

        :returns: the result's ``contents``.
        :raises MCPError: as ``resources/read`` answers; in the modern era also
            when the resource asks the client for input, which a nested read cannot forward.
        """
        call = self._call
        params: dict[str, t.Any] = {"uri": uri}
        meta = call.params.get("_meta")
        if call.state.modern and isinstance(meta, dict):
            # The request's envelope (revision, capabilities) travels along; its progress token does not.
            params["_meta"] = {key: value for key, value in meta.items() if key != "progressToken"}
        request_id = call.request_id if call.request_id is not None else 0
        message = jsonrpc.Request(request_id, "resources/read", params)
        response = t.cast(dict[str, t.Any], call.server.handle(message, call.state, self._channel, call.principal))
        if "error" in response:
            error = response["error"]
            raise MCPError(error["code"], error["message"], error.get("data"))
        result = response["result"]
        if "contents" not in result:  # an input_required round, in the modern era
            raise MCPError(jsonrpc.INTERNAL_ERROR, f"resource {uri} asks for input, which a nested read cannot forward")
        return t.cast(list[dict[str, t.Any]], result["contents"])

    @property
    def client_capabilities(self) -> dict[str, t.Any]:
        """What the client declared: on ``initialize``, or in this request's ``_meta`` (modern era)."""
        return self._call.state.capabilities

    @property
    def protocol_version(self) -> str:
        """The protocol revision of this request."""
        return self._call.state.protocol_version

    @property
    def transaction(self) -> t.Any:
        """The extension's ``MCP(transaction=...)``, or ``None`` without one.

        A list or retrieve tool runs the ``Select`` it returned in it, when
        it is a session and the decorator names no ``session=``.
        """
        return self._call.server.transaction

    @property
    def progress_token(self) -> str | int | None:
        """The caller's ``_meta.progressToken``, if it asked for progress."""
        meta = self._call.params.get("_meta")
        return meta.get("progressToken") if isinstance(meta, dict) else None

    @property
    def cancelled(self) -> bool:
        """Whether the client sent ``notifications/cancelled`` for this request."""
        return self._channel is not None and self._channel.cancelled()

    def close_stream(self) -> None:
        """End this request's event stream now, on purpose.

        The handler goes on; what it sends afterwards (and its result) waits
        in the session's event log until the client reconnects with
        ``Last-Event-ID``, as the client was told to with the stream's
        ``retry`` field. This spares a connection during long work.

        A no-op in the 2026-07-28 revision, whose requests stand alone: a client has no session
        and no ``GET`` to resume the stream with, so closing it would cost the call its answer.
        """
        if self._channel is not None and not self._call.state.modern:
            self._channel.close_stream()

    def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Send ``notifications/progress``; a no-op without a progress token.

        Progress never goes backwards: a value lower than the last one sent is
        dropped, as the specification requires it to increase.
        """
        token = self.progress_token
        if token is None or self._channel is None or (self._progress is not None and progress <= self._progress):
            return
        self._progress = progress
        params: dict[str, t.Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        self._channel.notify("notifications/progress", params)

    def log(self, level: str, data: t.Any, logger: str | None = None) -> None:
        """Send ``notifications/message`` if *level* reaches the level the client wants.

        The handshake era sends every level until the client sets one with
        ``logging/setLevel``; the modern era sends nothing unless the request
        names a level in its ``_meta``.
        """
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}")
        state = self._call.state
        wanted = state.log_level
        if self._channel is None or (wanted is None and state.modern):
            return
        if wanted is not None and LOG_LEVELS.index(level) < LOG_LEVELS.index(wanted):
            return
        params: dict[str, t.Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        self._channel.notify("notifications/message", params)

    def debug(self, data: t.Any, logger: str | None = None) -> None:
        """:meth:`log` at ``debug``."""
        self.log("debug", data, logger)

    def info(self, data: t.Any, logger: str | None = None) -> None:
        """:meth:`log` at ``info``."""
        self.log("info", data, logger)

    def notice(self, data: t.Any, logger: str | None = None) -> None:
        """:meth:`log` at ``notice``."""
        self.log("notice", data, logger)

    def warning(self, data: t.Any, logger: str | None = None) -> None:
        """:meth:`log` at ``warning``."""
        self.log("warning", data, logger)

    def error(self, data: t.Any, logger: str | None = None) -> None:
        """:meth:`log` at ``error``."""
        self.log("error", data, logger)

    def critical(self, data: t.Any, logger: str | None = None) -> None:
        """:meth:`log` at ``critical``."""
        self.log("critical", data, logger)

    def alert(self, data: t.Any, logger: str | None = None) -> None:
        """:meth:`log` at ``alert``."""
        self.log("alert", data, logger)

    def emergency(self, data: t.Any, logger: str | None = None) -> None:
        """:meth:`log` at ``emergency``."""
        self.log("emergency", data, logger)

    def ask(self, **requests: InputRequest) -> dict[str, t.Any]:
        """Ask the client several things at once; the answers by the same keywords.

        ::

            answers = ctx.ask(name=Elicit("Your name?", NameForm), roots=ListRoots())
            answers["name"].action, answers["roots"]

        In the modern era all of them go out in one ``input_required`` round
        (the keywords are the keys of its ``inputRequests``); in the
        handshake era they are sent one after another.

        :raises MCPError: the client did not declare a capability one of them
            needs (-32021 in the modern era), or did not answer.
        """
        call = self._call
        if call.round is not None:
            return call.round.ask(requests, self.client_capabilities)
        return {key: request.answer(key, self._send(request)) for key, request in requests.items()}

    def _ask_one(self, request: InputRequest, key: str | None) -> t.Any:
        call = self._call
        if call.round is not None:
            key = call.round.key(request, key)
            return call.round.ask({key: request}, self.client_capabilities)[key]
        return request.answer(key or request.kind, self._send(request))

    def _send(self, request: InputRequest) -> dict[str, t.Any]:
        # The transport's limits come first: a stateless request knows no capabilities at all.
        reason = requests_unavailable(self._channel)
        if reason is not None:
            raise MCPError(CAPABILITY_MISSING, f"{request.method} needs {reason}")
        if not request.declared(self.client_capabilities):
            needed = (
                "URL-mode elicitation"
                if isinstance(request, Elicit) and request.url
                else f"the {request.kind!r} capability"
            )
            raise MCPError(CAPABILITY_MISSING, f"the client did not declare {needed}")
        asked_client()  # the answer comes while the call runs: a cached tool's result cannot be keyed by it
        # The request carries the trace of the call that asks, so the client's handling of it joins that trace.
        params = traced_params(self._call.server.tracer, request.params)
        return t.cast("Channel", self._channel).request(request.method, params, self._timeout)

    def sample(
        self,
        messages: str | t.Sequence[dict[str, t.Any]],
        max_tokens: int,
        *,
        key: str | None = None,
        **options: t.Unpack[SampleOptions],
    ) -> dict[str, t.Any]:
        """Ask the client's model for a completion (``sampling/createMessage``).

        :param messages: a string (one user message) or ``SamplingMessage`` dicts.
        :param key: the key of this question in a modern ``input_required``
            round (default: ``sampling-<n>``, counted in the order asked).
        :param options: ``system_prompt``, ``temperature``, ``stop_sequences``,
            ``model_preferences``, ``include_context``, ``metadata``
            (:class:`~flask_mcp.core.input_requests.SampleOptions`).
        :returns: the ``CreateMessageResult`` (``role``, ``content``, ``model``, ...).
        """
        return t.cast(dict[str, t.Any], self._ask_one(Sample(messages, max_tokens, **options), key))

    def elicit(
        self, message: str, schema: type[ma.Schema] | ma.Schema | dict[str, t.Any], *, key: str | None = None
    ) -> ElicitResult:
        """Ask the user for input through the client (``elicitation/create``, form mode).

        :param schema: a marshmallow schema of primitive fields (defaults and
            ``OneOf`` choices become ``default`` and ``enum``), or a
            ``requestedSchema`` dict as the specification writes it.
        :param key: the key of this question in a modern ``input_required``
            round (default: ``elicitation-<n>``).
        """
        return t.cast(ElicitResult, self._ask_one(Elicit(message, schema), key))

    def elicit_url(
        self, message: str, url: str, elicitation_id: str | None = None, *, key: str | None = None
    ) -> ElicitResult:
        """Send the user to *url* (``elicitation/create``, URL mode); the client must declare it.

        :param elicitation_id: required in the handshake era, which names
            URL elicitations; the modern era has no such id.
        """
        if self._call.round is None and elicitation_id is None:
            raise TypeError("elicit_url needs an elicitation_id in the handshake era")
        return t.cast(ElicitResult, self._ask_one(Elicit(message, url=url, elicitation_id=elicitation_id), key))

    def list_roots(self, *, key: str | None = None) -> list[dict[str, t.Any]]:
        """The client's roots (``roots/list``)."""
        return t.cast(list[dict[str, t.Any]], self._ask_one(ListRoots(), key))
