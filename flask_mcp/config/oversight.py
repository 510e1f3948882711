"""The settings of the human's approval of tools and of the audit trail (``MCP_CONFIRM_*``, ``MCP_AUDIT_*``)."""

from __future__ import annotations

import dataclasses
import typing as t

from .values import optional_number, positive, positive_number

__all__ = ["CONFIRM_MODES", "ApprovalSettings", "AuditSettings", "ConfirmMode"]

#: How approval is asked for: see ``MCP_CONFIRM_MODE``.
ConfirmMode = t.Literal["auto", "form", "url"]
#: Every mode, in order.
CONFIRM_MODES: tuple[ConfirmMode, ...] = t.get_args(ConfirmMode)


@dataclasses.dataclass(frozen=True)
class ApprovalSettings:
    """How the human is asked to approve a tool marked ``confirm`` (``MCP_CONFIRM_*``)."""

    mode: ConfirmMode = "auto"
    #: Seconds from the question to the answer, and from an approval page's yes to the call using it.
    ttl: float = 300.0

    @classmethod
    def from_config(cls, config: t.Mapping[str, t.Any]) -> ApprovalSettings:
        """Read ``MCP_CONFIRM_MODE`` and ``MCP_CONFIRM_TTL``.

        :raises ValueError: a mode that is not one of :data:`CONFIRM_MODES`, or a TTL that is not positive.
        """
        mode = config["MCP_CONFIRM_MODE"]
        if mode not in CONFIRM_MODES:
            raise ValueError(f"MCP_CONFIRM_MODE must be one of {', '.join(map(repr, CONFIRM_MODES))}, not {mode!r}")
        return cls(mode=mode, ttl=float(positive_number(config, "MCP_CONFIRM_TTL")))


@dataclasses.dataclass(frozen=True)
class AuditSettings:
    """What the audit trail records and where (``MCP_AUDIT_*``)."""

    enabled: bool = False
    reads: bool = False
    arguments: bool = False
    database_uri: str | None = None
    retention_days: float | None = 90.0
    buffer: int = 10_000
    batch: int = 500
    linger: float = 1.0

    @classmethod
    def from_config(cls, config: t.Mapping[str, t.Any]) -> AuditSettings:
        """Read the ``MCP_AUDIT*`` keys.

        :raises ValueError: a size, a retention or a linger that is not a positive number.
        """
        return cls(
            enabled=bool(config["MCP_AUDIT"]),
            reads=bool(config["MCP_AUDIT_READS"]),
            arguments=bool(config["MCP_AUDIT_ARGUMENTS"]),
            database_uri=config["MCP_AUDIT_DATABASE_URI"] or None,
            retention_days=optional_number(config, "MCP_AUDIT_RETENTION_DAYS"),
            buffer=positive(config, "MCP_AUDIT_BUFFER"),
            batch=positive(config, "MCP_AUDIT_BATCH"),
            linger=float(positive_number(config, "MCP_AUDIT_LINGER")),
        )
