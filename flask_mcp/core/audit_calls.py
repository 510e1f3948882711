"""Recording calls in the audit trail (:mod:`flask_mcp.core.audit`), on every path a call takes.

:func:`audited` wraps a method handler of the general path (both eras,
stdio, the command line); the fast lane and the direct calls (REST, CGI)
record through :func:`record_call` themselves, and a task when it ends.
Nothing is recorded while a call still waits for an answer (an
``input_required`` round) or runs as a task: a record is an ended call.
"""

from __future__ import annotations

import time
import typing as t

from ..protocol.canonical import arguments_digest
from ..protocol.jsonrpc import RATE_LIMITED, MCPError
from .audit import AuditRecord, AuditSink, Kind, Outcome, Surface

if t.TYPE_CHECKING:
    from ..components.model import Tool
    from ..policies.principal import Principal
    from .approval import Approval
    from .client import Call
    from .server import Server

__all__ = [
    "AUDITED_METHODS",
    "ClientFacts",
    "EndedCall",
    "SeenClient",
    "audit_record",
    "audit_values",
    "audited",
    "client_of",
    "error_outcome",
    "record_call",
    "record_ended",
    "result_outcome",
    "without_secrets",
]

#: The methods the trail records, and what each calls: ``resources/read`` and ``prompts/get`` only
#: with ``MCP_AUDIT_READS``.
AUDITED_METHODS: dict[str, Kind] = {"tools/call": "tool", "resources/read": "resource", "prompts/get": "prompt"}
#: OAuth token claims naming the client a token was issued to.
_CLIENT_CLAIMS = ("client_id", "azp")


class ClientFacts(t.Protocol):
    """What a record names of the client: a :class:`~flask_mcp.core.client.ClientState`, or :class:`SeenClient`."""

    @property
    def client_info(self) -> dict[str, t.Any] | None:
        """The ``clientInfo`` it declared."""
        ...

    @property
    def session_id(self) -> str | None:
        """Its handshake session."""
        ...

    @property
    def protocol_version(self) -> str:
        """The revision it speaks."""
        ...


class SeenClient(t.NamedTuple):
    """:class:`ClientFacts` read off a request that builds no client state (the fast lane)."""

    client_info: dict[str, t.Any] | None
    session_id: str | None
    protocol_version: str


def client_of(principal: Principal | None, state: ClientFacts | None) -> str | None:
    """The client a call came through: the OAuth client its token was issued to, else the name it declared."""
    if principal is not None:
        for claim in _CLIENT_CLAIMS:
            value = principal.claims.get(claim)
            if isinstance(value, str) and value:
                return value
    info = state.client_info if state is not None else None
    name = info.get("name") if isinstance(info, dict) else None
    return name if isinstance(name, str) else None


def _secret(schema: t.Any) -> bool:
    # writeOnly: marshmallow's load_only, pydantic's SecretStr; format password: SecretStr too.
    return isinstance(schema, dict) and (schema.get("writeOnly") is True or schema.get("format") == "password")


def _resolved(schema: t.Any, root: dict[str, t.Any]) -> t.Any:
    ref = schema.get("$ref") if isinstance(schema, dict) else None
    if isinstance(ref, str) and ref.startswith("#/"):
        node: t.Any = root
        for part in ref[2:].split("/"):
            node = node.get(part) if isinstance(node, dict) else None
        return node
    return schema


def _redacted(value: t.Any, schema: t.Any, root: dict[str, t.Any], depth: int = 0) -> t.Any:
    """*value* without the members *schema* marks secret, at any depth (bounded: a recursive schema ends)."""
    schema = _resolved(schema, root)
    if depth > 32 or not isinstance(schema, dict):
        return value
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        return {
            key: _redacted(item, properties.get(key), root, depth + 1)
            for key, item in value.items()
            if not _secret(_resolved(properties.get(key), root))
        }
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_redacted(item, schema["items"], root, depth + 1) for item in value]
    return value


def without_secrets(tool: Tool | None, arguments: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    """*arguments* without the values *tool*'s input schema marks secret, at any depth: ``writeOnly``
    (marshmallow's ``load_only``, pydantic's ``SecretStr``) or ``format: password``."""
    if tool is None:
        return dict(arguments)
    schema = tool.descriptor.get("inputSchema") or {}
    return t.cast(dict[str, t.Any], _redacted(dict(arguments), schema, schema))


def error_outcome(code: int) -> tuple[Outcome, str]:
    """How a call that failed with the JSON-RPC error *code* ended."""
    return ("rate_limited" if code == RATE_LIMITED else "refused"), str(code)


def result_outcome(result: t.Mapping[str, t.Any], approval: Approval | None) -> tuple[Outcome, str | None]:
    """How a call that answered *result* ended."""
    if not result.get("isError"):
        return "ok", None
    if approval is not None and not approval.granted:
        return "refused", "not_approved"
    return "tool_error", None


class EndedCall(t.NamedTuple):
    """The facts of one ended call as the request has them: kept as they are, made into an
    :class:`~flask_mcp.core.audit.AuditRecord` off the request path (:func:`audit_record`)."""

    kind: Kind
    name: str
    arguments: t.Mapping[str, t.Any]
    #: When it began, in seconds since the epoch.
    started: float
    #: How long it took, in seconds.
    duration: float
    outcome: Outcome
    surface: Surface
    principal: Principal | None
    state: ClientFacts | None
    tool: Tool | None
    approval: Approval | None
    error_code: str | None


def audit_values(ended: EndedCall, *, arguments: bool = False, trace_id: str | None = None) -> tuple[t.Any, ...]:
    """The values of *ended*'s record, in the order of :class:`~flask_mcp.core.audit.AuditRecord`'s fields.

    What :func:`audit_record` holds, without building it: the audit table's
    writer makes its rows of them, a thread's time every call shares.
    """
    principal, state, approval, surface = ended.principal, ended.state, ended.approval, ended.surface
    mode = None
    if approval is not None:
        mode = "terminal" if surface == "cli" and approval.mode == "form" else approval.mode
    return (
        ended.started,  # time
        ended.name,  # tool
        ended.kind,
        principal.subject if principal is not None else None,  # principal
        client_of(principal, state),  # client
        state.session_id if state is not None else None,  # session
        surface,
        state.protocol_version if state is not None and surface in ("mcp", "stdio", "cli") else None,  # revision
        arguments_digest(ended.arguments),
        without_secrets(ended.tool, ended.arguments) if arguments else None,  # arguments
        approval.outcome if approval is not None else "none",  # approval
        mode,  # approval_mode
        approval.approver if approval is not None else None,  # approver
        ended.outcome,
        ended.error_code,
        round(ended.duration * 1000, 3),  # duration_ms
        trace_id,
    )


def audit_record(ended: EndedCall, *, arguments: bool = False, trace_id: str | None = None) -> AuditRecord:
    """The record of *ended*: its digest, its client, its arguments without secrets when *arguments*."""
    return AuditRecord(*audit_values(ended, arguments=arguments, trace_id=trace_id))


def record_call(
    sink: AuditSink,
    *,
    kind: Kind,
    name: str,
    arguments: t.Mapping[str, t.Any],
    started: float,
    duration: float,
    outcome: Outcome,
    surface: Surface,
    principal: Principal | None = None,
    state: ClientFacts | None = None,
    tool: Tool | None = None,
    approval: Approval | None = None,
    error_code: str | None = None,
) -> None:
    """Hand the facts of one ended call to *sink* (nothing is computed on the request's time).

    :param started: when it began, in seconds since the epoch.
    :param duration: how long it took, in seconds.
    """
    sink.take(
        EndedCall(
            kind, name, arguments, started, duration, outcome, surface, principal, state, tool, approval, error_code
        )
    )


def record_ended(
    sink: AuditSink,
    call: Call,
    kind: Kind,
    name: str,
    arguments: t.Mapping[str, t.Any],
    started: float,
    clock: float,
    outcome: Outcome,
    error_code: str | None,
) -> None:
    """:func:`record_call` for *call*, which began at *started* (the epoch's seconds) and *clock*
    (:func:`time.perf_counter`): its caller, client, surface, component and approval are the call's."""
    record_call(
        sink,
        kind=kind,
        name=name,
        arguments=arguments,
        started=started,
        duration=time.perf_counter() - clock,
        outcome=outcome,
        surface=call.state.surface,
        principal=call.principal,
        state=call.state,
        tool=call.component if kind == "tool" else None,
        approval=call.approval,
        error_code=error_code,
    )


def audited(server: Server, call: Call, handler: t.Callable[[Call], dict[str, t.Any]]) -> dict[str, t.Any]:
    """Run *handler* for *call* and record the call once it has ended (not while it waits or runs as a task)."""
    sink = server.audit
    kind = AUDITED_METHODS.get(call.method)
    if sink is None or kind is None or (kind != "tool" and not sink.reads):
        return handler(call)
    started, clock = time.time(), time.perf_counter()
    params = call.params
    name = str(params.get("uri") if kind == "resource" else params.get("name"))
    arguments = params.get("arguments") if kind != "resource" else None
    arguments = arguments if isinstance(arguments, dict) else {}

    def done(outcome: Outcome, error_code: str | None) -> None:
        if call.channel is not None and call.channel.cancelled():
            outcome = "cancelled"
        record_ended(sink, call, kind, name, arguments, started, clock, outcome, error_code)

    try:
        result = handler(call)
    except MCPError as exc:
        done(*error_outcome(exc.code))
        raise
    except server.unavailable:
        raise  # the store is down: the transport answers 503 for the request, not the call
    except Exception:
        done("tool_error", "-32603")
        raise
    # An input round (InputRequired, a BaseException) passes through: the call has not ended.
    if result.get("resultType") == "task" or ("task" in result and "content" not in result):
        return result  # a task was created: recorded when it ends
    done(*result_outcome(result, call.approval))
    return result
