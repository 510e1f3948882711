"""What a handler may ask of the client while it runs: elicitation, sampling, roots.

Each request is a small value: the method it becomes on the wire, its
params, the client capability it needs, and how the client's answer is
checked and handed back. :meth:`flask_mcp.Context.ask` takes several at
once; ``ctx.elicit``, ``ctx.sample`` and ``ctx.list_roots`` build one each.
In the handshake era they travel as requests to the client; in the modern
era they become the ``inputRequests`` of an ``input_required`` result
(:mod:`flask_mcp.core.rounds`).
"""

from __future__ import annotations

import dataclasses
import typing as t

import marshmallow as ma

from ..protocol.jsonrpc import INVALID_PARAMS, MCPError
from ..schemas.requested import requested_schema

__all__ = [
    "ELICIT_ACTIONS",
    "Elicit",
    "ElicitResult",
    "InputError",
    "InputRequest",
    "ListRoots",
    "Sample",
    "SampleOptions",
]

#: What a user can answer an elicitation with.
ELICIT_ACTIONS = ("accept", "decline", "cancel")


class InputError(MCPError):
    """The exchange with the client failed (a bad answer, a capability it lacks), not the handler.

    In the modern era it is the request's JSON-RPC error even from inside a
    tool, whose other failures are ``isError`` results.
    """


@dataclasses.dataclass(frozen=True)
class ElicitResult:
    """The client's answer to :meth:`Context.elicit`."""

    #: ``"accept"``, ``"decline"`` or ``"cancel"``.
    action: str
    #: The submitted values when accepted.
    content: dict[str, t.Any] | None = None


class InputRequest:
    """One thing to ask the client; see :class:`Elicit`, :class:`Sample` and :class:`ListRoots`."""

    #: The request's JSON-RPC method.
    method: t.ClassVar[str]
    #: Short name used in the keys the server makes up (``elicitation-1``).
    kind: t.ClassVar[str]

    @property
    def params(self) -> dict[str, t.Any]:
        """The request's params on the wire."""
        raise NotImplementedError

    def required_capabilities(self) -> dict[str, t.Any]:
        """The client capabilities this request needs, as ``requiredCapabilities`` writes them."""
        raise NotImplementedError

    def declared(self, capabilities: dict[str, t.Any]) -> bool:
        """Whether *capabilities* (the client's) allow this request."""
        return all(name in capabilities for name in self.required_capabilities())

    def answer(self, key: str, raw: t.Any) -> t.Any:
        """The client's *raw* answer, checked and converted for the handler.

        :raises MCPError: -32602 when it is not an answer to this kind of request.
        """
        raise NotImplementedError

    def wire(self) -> dict[str, t.Any]:
        """This request as an ``InputRequest`` of an ``input_required`` result."""
        return {"method": self.method, "params": self.params}


def _bad_answer(key: str, expected: str) -> InputError:
    return InputError(INVALID_PARAMS, f"Invalid params: the answer to {key!r} must be {expected}", {"key": key})


class Elicit(InputRequest):
    """Ask the user for input through the client (``elicitation/create``).

    :param message: what to ask.
    :param schema: the form, a marshmallow schema of primitive fields
        (defaults and ``OneOf`` choices become ``default`` and ``enum``) or a
        ``requestedSchema`` dict; ``None`` with *url* for URL mode.
    :param url: send the user to this URL instead of showing a form (URL mode).
    :param elicitation_id: the URL-mode id of the handshake era (the modern era has none).
    """

    method = "elicitation/create"
    kind = "elicitation"

    def __init__(
        self,
        message: str,
        schema: type[ma.Schema] | ma.Schema | dict[str, t.Any] | None = None,
        *,
        url: str | None = None,
        elicitation_id: str | None = None,
    ) -> None:
        if (schema is None) == (url is None):
            raise TypeError("Elicit takes a schema (form mode) or a url (URL mode), not both or neither")
        self.message = message
        self.requested = None if schema is None else schema if isinstance(schema, dict) else requested_schema(schema)
        self.url = url
        self.elicitation_id = elicitation_id

    @property
    def params(self) -> dict[str, t.Any]:
        """``{"mode", "message", "requestedSchema"}`` or ``{"mode": "url", "message", "url"}``."""
        if self.url is None:
            return {"mode": "form", "message": self.message, "requestedSchema": self.requested}
        params = {"mode": "url", "message": self.message, "url": self.url}
        if self.elicitation_id is not None:
            params["elicitationId"] = self.elicitation_id
        return params

    def required_capabilities(self) -> dict[str, t.Any]:
        """``{"elicitation": {}}`` for a form, ``{"elicitation": {"url": {}}}`` for a URL."""
        return {"elicitation": {"url": {}}} if self.url is not None else {"elicitation": {}}

    def declared(self, capabilities: dict[str, t.Any]) -> bool:
        """A form needs ``elicitation`` (``{}`` means forms); a URL needs ``elicitation.url``."""
        elicitation = capabilities.get("elicitation")
        if not isinstance(elicitation, dict):
            return False
        return "url" in elicitation if self.url is not None else (not elicitation or "form" in elicitation)

    def answer(self, key: str, raw: t.Any) -> ElicitResult:
        """An :class:`ElicitResult`."""
        if not isinstance(raw, dict) or raw.get("action") not in ELICIT_ACTIONS:
            raise _bad_answer(key, f"an elicitation result with 'action' one of {', '.join(ELICIT_ACTIONS)}")
        content = raw.get("content")
        if content is not None and not isinstance(content, dict):
            raise _bad_answer(key, "an elicitation result whose 'content' is an object")
        return ElicitResult(raw["action"], content)


class SampleOptions(t.TypedDict, total=False):
    """The optional members of a sampling request (:class:`Sample`, :meth:`Context.sample`)."""

    #: ``systemPrompt``.
    system_prompt: str | None
    #: ``temperature``.
    temperature: float | None
    #: ``stopSequences``.
    stop_sequences: t.Sequence[str] | None
    #: ``modelPreferences`` (hints, cost, speed and intelligence priorities).
    model_preferences: dict[str, t.Any] | None
    #: ``includeContext``: ``"none"``, ``"thisServer"`` or ``"allServers"``.
    include_context: str | None
    #: ``metadata`` passed to the model provider.
    metadata: dict[str, t.Any] | None


#: SampleOptions -> the wire names of the params.
_SAMPLE_PARAMS = {
    "system_prompt": "systemPrompt",
    "temperature": "temperature",
    "stop_sequences": "stopSequences",
    "model_preferences": "modelPreferences",
    "include_context": "includeContext",
    "metadata": "metadata",
}


class Sample(InputRequest):
    """Ask the client's model for a completion (``sampling/createMessage``).

    :param messages: a string (one user message) or ``SamplingMessage`` dicts.
    :param max_tokens: the most tokens to generate.
    :param options: the optional members (:class:`SampleOptions`).
    """

    method = "sampling/createMessage"
    kind = "sampling"

    def __init__(
        self, messages: str | t.Sequence[dict[str, t.Any]], max_tokens: int, **options: t.Unpack[SampleOptions]
    ) -> None:
        unknown = set(options) - set(_SAMPLE_PARAMS)
        if unknown:
            raise TypeError(f"unexpected keyword argument(s): {', '.join(sorted(unknown))}")
        if isinstance(messages, str):
            messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
        params: dict[str, t.Any] = {"messages": list(messages), "maxTokens": max_tokens}
        for name, value in options.items():
            if value is not None:
                params[_SAMPLE_PARAMS[name]] = list(value) if name == "stop_sequences" else value  # type: ignore[call-overload]
        self._params = params

    @property
    def params(self) -> dict[str, t.Any]:
        """``CreateMessageRequest`` params."""
        return self._params

    def required_capabilities(self) -> dict[str, t.Any]:
        """``{"sampling": {}}``."""
        return {"sampling": {}}

    def answer(self, key: str, raw: t.Any) -> dict[str, t.Any]:
        """The ``CreateMessageResult`` (``role``, ``content``, ``model``, ...)."""
        if not isinstance(raw, dict) or not isinstance(raw.get("role"), str) or "content" not in raw:
            raise _bad_answer(key, "a sampling result with 'role' and 'content'")
        return raw


class ListRoots(InputRequest):
    """Ask for the client's roots (``roots/list``)."""

    method = "roots/list"
    kind = "roots"

    @property
    def params(self) -> dict[str, t.Any]:
        """No params."""
        return {}

    def required_capabilities(self) -> dict[str, t.Any]:
        """``{"roots": {}}``."""
        return {"roots": {}}

    def answer(self, key: str, raw: t.Any) -> list[dict[str, t.Any]]:
        """The list of roots (``{"uri", "name"?}`` dicts)."""
        roots = raw.get("roots") if isinstance(raw, dict) else None
        if not isinstance(roots, list) or not all(isinstance(root, dict) and "uri" in root for root in roots):
            raise _bad_answer(key, "a roots result with a 'roots' list")
        return roots
