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
"""

from __future__ import annotations

import dataclasses
import typing as t

import marshmallow as ma

from ..protocol import jsonrpc
from ..protocol.jsonrpc import MCPError
from ..protocol.versions import LOG_LEVELS
from ..schemas.hints import InjectedParameter
from ..schemas.json_schema import schema_to_json_schema

if t.TYPE_CHECKING:
    from .client import Call

__all__ = ["Channel", "Context", "ElicitResult"]

#: Error code for a server-to-client request the client cannot take.
CAPABILITY_MISSING = -32603


class Channel(t.Protocol):
    """What a transport offers a running handler."""

    def notify(self, method: str, params: dict[str, t.Any]) -> None:
        """Send a notification related to the current request."""

    def request(self, method: str, params: dict[str, t.Any], timeout: float) -> dict[str, t.Any]:
        """Send a request to the client and return its result; raise :class:`MCPError` for its error."""
        ...

    def cancelled(self) -> bool:
        """Whether the client cancelled the current request."""
        ...

    def close_stream(self) -> None:
        """End the live event stream; the client resumes it later (SSE polling)."""

    def unavailable(self) -> str | None:
        """Why requests to the client cannot be sent on this channel, or ``None`` when they can."""


@dataclasses.dataclass(frozen=True)
class ElicitResult:
    """The client's answer to :meth:`Context.elicit`."""

    #: ``"accept"``, ``"decline"`` or ``"cancel"``.
    action: str
    #: The submitted values when accepted.
    content: dict[str, t.Any] | None = None


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
    def client_capabilities(self) -> dict[str, t.Any]:
        """What the client declared on ``initialize``."""
        return self._call.state.capabilities

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
        """
        if self._channel is not None:
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
        """Send ``notifications/message`` if *level* reaches what the client set with ``logging/setLevel``."""
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}")
        wanted = self._call.state.log_level
        if self._channel is None or (wanted is not None and LOG_LEVELS.index(level) < LOG_LEVELS.index(wanted)):
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

    def _request(self, capability: str, method: str, params: dict[str, t.Any]) -> dict[str, t.Any]:
        # The transport's limits come first: a stateless request knows no capabilities at all.
        reason = self._channel.unavailable() if self._channel is not None else "a transport that can send requests"
        if reason is not None:
            raise MCPError(CAPABILITY_MISSING, f"{method} needs {reason}")
        if capability not in self.client_capabilities:
            raise MCPError(CAPABILITY_MISSING, f"the client did not declare the {capability!r} capability")
        return t.cast("Channel", self._channel).request(method, params, self._timeout)

    def sample(
        self,
        messages: str | t.Sequence[dict[str, t.Any]],
        max_tokens: int,
        *,
        system_prompt: str | None = None,
        temperature: float | None = None,
        stop_sequences: t.Sequence[str] | None = None,
        model_preferences: dict[str, t.Any] | None = None,
        include_context: str | None = None,
        metadata: dict[str, t.Any] | None = None,
    ) -> dict[str, t.Any]:
        """Ask the client's model for a completion (``sampling/createMessage``).

        :param messages: a string (one user message) or ``SamplingMessage`` dicts.
        :returns: the ``CreateMessageResult`` (``role``, ``content``, ``model``, ...).
        """
        if isinstance(messages, str):
            messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
        params: dict[str, t.Any] = {"messages": list(messages), "maxTokens": max_tokens}
        for key, value in (
            ("systemPrompt", system_prompt),
            ("temperature", temperature),
            ("stopSequences", list(stop_sequences) if stop_sequences is not None else None),
            ("modelPreferences", model_preferences),
            ("includeContext", include_context),
            ("metadata", metadata),
        ):
            if value is not None:
                params[key] = value
        return self._request("sampling", "sampling/createMessage", params)

    def elicit(self, message: str, schema: type[ma.Schema] | ma.Schema | dict[str, t.Any]) -> ElicitResult:
        """Ask the user for input through the client (``elicitation/create``, form mode).

        :param schema: a marshmallow schema of primitive fields (defaults and
            ``OneOf`` choices become ``default`` and ``enum``), or a
            ``requestedSchema`` dict as the specification writes it.
        """
        requested = schema if isinstance(schema, dict) else _requested_schema(schema)
        result = self._request(
            "elicitation", "elicitation/create", {"mode": "form", "message": message, "requestedSchema": requested}
        )
        return ElicitResult(result.get("action", "cancel"), result.get("content"))

    def elicit_url(self, message: str, url: str, elicitation_id: str) -> ElicitResult:
        """Send the user to *url* (``elicitation/create``, URL mode); the client must declare it."""
        if "url" not in (self.client_capabilities.get("elicitation") or {}):
            raise MCPError(CAPABILITY_MISSING, "the client did not declare URL-mode elicitation")
        params = {"mode": "url", "message": message, "url": url, "elicitationId": elicitation_id}
        result = self._request("elicitation", "elicitation/create", params)
        return ElicitResult(result.get("action", "cancel"), result.get("content"))

    def list_roots(self) -> list[dict[str, t.Any]]:
        """The client's roots (``roots/list``)."""
        return t.cast(list[dict[str, t.Any]], self._request("roots", "roots/list", {}).get("roots", []))


def _requested_schema(schema: type[ma.Schema] | ma.Schema) -> dict[str, t.Any]:
    """An elicitation ``requestedSchema``: a flat object of primitive properties.

    Choices follow SEP-1330: ``OneOf(choices)`` gives ``enum`` (a ``List``
    of it, a multi-select); ``OneOf(choices, labels=...)`` gives titled
    options (``oneOf``, or ``items.anyOf`` for a list); an ``enumNames``
    entry in a field's metadata keeps the legacy titled form.
    """
    instance = schema() if isinstance(schema, type) else schema
    converted = schema_to_json_schema(instance, "input")
    properties = converted["properties"]
    for name, field in instance.fields.items():
        if name not in properties:
            continue
        target = properties[name]
        inner = field.inner if isinstance(field, ma.fields.List) else field
        if isinstance(field, ma.fields.List):
            target = target.setdefault("items", {})
        for validator in inner.validators:
            if isinstance(validator, ma.validate.OneOf) and validator.labels:
                titled = [
                    {"const": c, "title": str(label)}
                    for c, label in zip(validator.choices, validator.labels, strict=False)
                ]
                target.pop("enum", None)
                if isinstance(field, ma.fields.List):
                    target.pop("type", None)
                    target["anyOf"] = titled
                else:
                    target["oneOf"] = titled
        if "enumNames" in field.metadata:
            properties[name]["enumNames"] = list(field.metadata["enumNames"])
    requested: dict[str, t.Any] = {"type": "object", "properties": properties}
    if converted.get("required"):
        requested["required"] = converted["required"]
    return requested
