"""What the audit trail records of one call, and where the core hands it.

When a ``tools/call`` ends (and a ``resources/read`` or ``prompts/get`` when
reads are audited), on whichever surface it came in by, the core hands its
facts to the server's :class:`AuditSink`, which must not block and must not
raise: it queues them for a writer off the request path, which makes the
:class:`AuditRecord` (:mod:`flask_mcp.audit` keeps it in a SQL table).
"""

from __future__ import annotations

import dataclasses
import typing as t

from ..protocol.canonical import arguments_digest

__all__ = [
    "APPROVALS",
    "KINDS",
    "OUTCOMES",
    "SURFACES",
    "ApprovalOutcome",
    "AuditRecord",
    "AuditSink",
    "Kind",
    "Outcome",
    "Surface",
    "arguments_digest",
]

#: Where a call came in: the MCP endpoint, the REST adapter, CGI, stdio, ``flask mcp call``, or a task as it ends.
Surface = t.Literal["mcp", "rest", "cgi", "stdio", "cli", "task"]
#: Every one of the surfaces, in order.
SURFACES: tuple[Surface, ...] = t.get_args(Surface)
#: What became of the human's approval: not asked for, or how it ended.
ApprovalOutcome = t.Literal["none", "accepted", "declined", "cancelled", "expired"]
#: Every one of the approval outcomes, in order.
APPROVALS: tuple[ApprovalOutcome, ...] = t.get_args(ApprovalOutcome)
#: How the call ended.
Outcome = t.Literal["ok", "tool_error", "refused", "rate_limited", "cancelled"]
#: Every one of the outcomes, in order.
OUTCOMES: tuple[Outcome, ...] = t.get_args(Outcome)
#: What was called.
Kind = t.Literal["tool", "resource", "prompt"]
#: Every one of the kinds, in order.
KINDS: tuple[Kind, ...] = t.get_args(Kind)


@dataclasses.dataclass
class AuditRecord:
    """One audited call. The keys of :meth:`as_dict` are those ``flask mcp audit --json`` prints."""

    #: When the call began, in seconds since the epoch.
    time: float
    #: What the call named: a tool's name, a prompt's name or a resource's URI.
    tool: str
    kind: Kind = "tool"
    #: The authenticated caller's subject, or ``None`` for an anonymous one.
    principal: str | None = None
    #: The OAuth client the token was issued to, else the name the client declared.
    client: str | None = None
    #: The ``Mcp-Session-Id`` of a handshake-era call.
    session: str | None = None
    surface: Surface = "mcp"
    #: The protocol revision the call was made in (``None`` off the MCP endpoint).
    revision: str | None = None
    #: :func:`arguments_digest` of the arguments sent.
    arguments_digest: str = ""
    #: The arguments themselves, without secret fields, when ``MCP_AUDIT_ARGUMENTS`` is set.
    arguments: dict[str, t.Any] | None = None
    approval: ApprovalOutcome = "none"
    #: ``"form"``, ``"url"`` or ``"terminal"`` when approval was asked for.
    approval_mode: str | None = None
    #: Who approved: the signed-in user of URL mode, else the caller the client asked.
    approver: str | None = None
    outcome: Outcome = "ok"
    #: The JSON-RPC error code (or the tool error's type) of a call that did not end ``ok``.
    error_code: str | None = None
    duration_ms: float = 0.0
    #: The OpenTelemetry trace id of the call, when telemetry is on.
    trace_id: str | None = None

    def as_dict(self) -> dict[str, t.Any]:
        """The record as JSON-ready data."""
        return dataclasses.asdict(self)


class AuditSink(t.Protocol):
    """Takes each call as it ends; never blocks the call and never raises.

    What it is handed is the call's facts as they are (:class:`~flask_mcp.core.audit_calls.EndedCall`):
    the record is built from them off the request path
    (:func:`~flask_mcp.core.audit_calls.audit_record`).
    """

    #: Whether ``resources/read`` and ``prompts/get`` are recorded too (``MCP_AUDIT_READS``).
    reads: bool
    #: Whether records keep the arguments, without secret fields (``MCP_AUDIT_ARGUMENTS``).
    arguments: bool

    def take(self, ended: t.Any) -> None:
        """Keep the ended call *ended* (an :class:`~flask_mcp.core.audit_calls.EndedCall`), queued for writing."""
        ...
