"""Input-required rounds (2026-07-28): a handler asks the client, the client retries with answers.

In the modern era the server never sends requests to the client. A handler
that calls ``ctx.elicit``, ``ctx.sample``, ``ctx.list_roots`` or
``ctx.ask`` instead ends its request with an ``input_required`` result
whose ``inputRequests`` say what it needs; the client answers them and
sends the same request again with ``inputResponses`` and the
``requestState`` it was given.

The handler then runs again **from the start**. Each question it asks is
known by a key (given, or ``<kind>-<n>`` in the order it is asked), and a
question already answered returns its answer at once, so the run gets
further each round, until it completes. Nothing is kept in server memory
between rounds: the answers of earlier rounds travel in ``requestState``,
sealed by a :class:`Sealer` the transport provides and bound to the
caller, the method, its target and the arguments, so a retry may land on
any thread, process or host.
"""

from __future__ import annotations

import functools
import hashlib
import typing as t

from ..protocol import jsonrpc
from ..protocol.canonical import canonical
from ..protocol.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, MISSING_CAPABILITY, MCPError
from .input_requests import InputError, InputRequest

if t.TYPE_CHECKING:
    from .client import Call

__all__ = [
    "ROUND_METHODS",
    "Answers",
    "InputRequired",
    "MissingCapability",
    "Round",
    "Sealer",
    "StateRejected",
]

#: The only methods whose result may be ``input_required``.
ROUND_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})


class InputRequired(BaseException):
    """Raised inside a handler that needs answers the request did not bring.

    A :class:`BaseException`, so that a tool's own ``except Exception`` does
    not swallow it: it must reach the server, which turns it into the
    ``input_required`` result.
    """

    def __init__(self, requests: dict[str, InputRequest]) -> None:
        super().__init__(", ".join(requests))
        self.requests = requests


class MissingCapability(InputError):
    """The request needs a client capability it did not declare (-32021)."""

    def __init__(self, request: InputRequest) -> None:
        required = request.required_capabilities()
        names = ", ".join(required)
        super().__init__(
            MISSING_CAPABILITY,
            f"This request needs the client capability {names!r} ({request.method}), which the request did not declare",
            {"requiredCapabilities": required},
        )


class StateRejected(Exception):
    """A ``requestState`` that cannot be trusted; the message says why, for the client."""


class Sealer(t.Protocol):
    """Seals the state of a round so that only this server can open it, and only for a while."""

    def seal(self, payload: dict[str, t.Any]) -> str:
        """The sealed form of *payload*."""
        ...

    def open(self, token: str) -> dict[str, t.Any]:
        """The payload sealed in *token*.

        :raises StateRejected: forged, altered or expired.
        """
        ...


def _digest(*parts: t.Any) -> str:
    text = jsonrpc.dumps(list(parts)) if all(_is_json(p) for p in parts) else repr(parts)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _is_json(value: t.Any) -> bool:
    return isinstance(value, (str, int, float, bool, dict, list)) or value is None


class Answers:
    """The answers a handler's questions find, and the questions it asks that have none.

    The part of a round that does not depend on where answers come from: a
    modern request's ``requestState`` and ``inputResponses`` (:class:`Round`),
    or a task's record (:mod:`flask_mcp.core.tasks`).

    :param answers: the answers by key.
    """

    def __init__(self, answers: dict[str, t.Any] | None = None) -> None:
        #: Every answer there is, by key.
        self.answers: dict[str, t.Any] = dict(answers or {})
        #: The answers the handler used.
        self.used: dict[str, t.Any] = {}
        self._counts: dict[str, int] = {}

    def key(self, request: InputRequest, key: str | None) -> str:
        """The key of *request*: *key*, or the next ``<kind>-<n>`` of this run."""
        if key is not None:
            return key
        count = self._counts[request.kind] = self._counts.get(request.kind, 0) + 1
        return f"{request.kind}-{count}"

    def ask(self, requests: dict[str, InputRequest], capabilities: dict[str, t.Any]) -> dict[str, t.Any]:
        """The answers to *requests*, or raise :class:`InputRequired` for the ones still open.

        :raises MissingCapability: a request the client's capabilities do not allow.
        :raises MCPError: -32602 for an answer that does not fit its question.
        """
        found: dict[str, t.Any] = {}
        missing: dict[str, InputRequest] = {}
        for key, request in requests.items():
            if key in self.answers:
                found[key] = request.answer(key, self.answers[key])
                self.used[key] = self.answers[key]
            elif not request.declared(capabilities):
                raise MissingCapability(request)
            else:
                missing[key] = request
        if missing:
            raise InputRequired(missing)
        return found


class Round(Answers):
    """The answers one modern request brings, and the questions its handler asks.

    :param call: the request; its method, name or URI and arguments bind the state.
    :param sealer: opens and seals ``requestState``.
    :param max_state_bytes: the largest ``requestState`` accepted or issued.
    :param lenient: start afresh, with no answers, from a ``requestState`` that cannot be trusted
        rather than fail: for a tool that needs the human's approval, which is then asked again
        (:mod:`flask_mcp.core.approval`).
    :raises MCPError: -32602 for a ``requestState`` that is forged, expired,
        too large, another caller's or another request's (unless *lenient*).
    """

    def __init__(self, call: Call, sealer: Sealer, max_state_bytes: int, *, lenient: bool = False) -> None:
        super().__init__()
        self.call = call
        self.sealer = sealer
        self.max_state_bytes = max_state_bytes
        #: The approval question the state says was asked (or approved) for this request.
        self.approval: dict[str, t.Any] | None = None
        #: The approval question (or approval) the next state carries.
        self.approval_out: dict[str, t.Any] | None = None
        #: This round's ``inputResponses``: answers to the questions of the state it came with.
        self.responses: dict[str, t.Any] = {}
        params = call.params
        state = params.get("requestState")
        if state is not None:
            try:
                self.answers.update(self._open(state))
            except MCPError:
                if not lenient:
                    raise
                return  # its answers, this round's included, answered questions that were not asked
        responses = params.get("inputResponses")
        if responses:
            self.responses = responses
            # This round's answers win over a stale one of the same key.
            self.answers.update(responses)

    # The bindings are digested only when a state is opened or sealed: most
    # calls ask nothing, and pay nothing for rounds.
    @functools.cached_property
    def caller(self) -> str:
        """A digest of the authenticated caller (or of nobody)."""
        principal = self.call.principal
        return _digest("caller", principal.subject if principal is not None else None)

    @functools.cached_property
    def request(self) -> str:
        """A digest of the method, its name or URI, and the arguments in canonical order."""
        params = self.call.params
        target = params.get("uri") if self.call.method == "resources/read" else params.get("name")
        return _digest(self.call.method, target, canonical(params.get("arguments") or {}))

    def _open(self, token: str) -> dict[str, t.Any]:
        if len(token) > self.max_state_bytes:
            raise _rejected(f"requestState is longer than {self.max_state_bytes} bytes")
        try:
            payload = self.sealer.open(token)
        except StateRejected as exc:
            raise _rejected(str(exc)) from None
        if payload.get("c") != self.caller:
            raise _rejected("requestState was issued to another caller")
        if payload.get("r") != self.request:
            raise _rejected("requestState was issued for another request (its method, name, URI or arguments differ)")
        approval = payload.get("q")
        self.approval = approval if isinstance(approval, dict) else None
        answers = payload.get("a")
        return answers if isinstance(answers, dict) else {}

    def result(self, pending: InputRequired) -> dict[str, t.Any]:
        """The ``input_required`` result asking for *pending*, with the sealed state of this round."""
        payload: dict[str, t.Any] = {"c": self.caller, "r": self.request, "a": self.used}
        if self.approval_out is not None:
            payload["q"] = self.approval_out
        state = self.sealer.seal(payload)
        if len(state) > self.max_state_bytes:
            raise MCPError(
                INTERNAL_ERROR,
                f"the answers gathered for this request exceed the server's limit of {self.max_state_bytes} "
                "bytes of requestState (MCP_REQUEST_STATE_MAX_BYTES)",
            )
        tracer = self.call.server.tracer
        requests = {key: request.wire() for key, request in pending.requests.items()}
        if tracer is not None:
            # Each question carries the trace of the call that asks, as a request sent to the client would.
            requests = {key: {**wire, "params": tracer.outgoing(wire["params"])} for key, wire in requests.items()}
        return {"resultType": "input_required", "inputRequests": requests, "requestState": state}


def _rejected(reason: str) -> MCPError:
    return MCPError(INVALID_PARAMS, f"Invalid params: {reason}", {"reason": "invalid_request_state"})
