"""An ended call's record: every field from the fact it names, whether as a record or as a row's values."""

from __future__ import annotations

import dataclasses

import pytest

from flask_mcp.core.approval import Approval
from flask_mcp.core.audit import AuditRecord
from flask_mcp.core.audit_calls import EndedCall, SeenClient, audit_record, audit_values
from flask_mcp.policies.principal import Principal
from flask_mcp.protocol.canonical import arguments_digest


def _ended(surface: str = "mcp", mode: str = "form") -> EndedCall:
    # Every fact distinct from every other: a value in the wrong field shows.
    return EndedCall(
        kind="prompt",
        name="the-name",
        arguments={"a": 1},
        started=1234.5,
        duration=0.25,
        outcome="tool_error",
        surface=surface,  # type: ignore[arg-type]
        principal=Principal("the-subject", claims={"client_id": "the-client"}),
        state=SeenClient({"name": "declared"}, "the-session", "2025-06-18"),
        tool=None,
        approval=Approval("accepted", mode, "the-approver"),
        error_code="the-code",
    )


def test_each_field_holds_the_fact_it_names() -> None:
    record = audit_record(_ended(), arguments=True, trace_id="the-trace")
    assert dataclasses.asdict(record) == {
        "time": 1234.5,
        "tool": "the-name",
        "kind": "prompt",
        "principal": "the-subject",
        "client": "the-client",
        "session": "the-session",
        "surface": "mcp",
        "revision": "2025-06-18",
        "arguments_digest": arguments_digest({"a": 1}),
        "arguments": {"a": 1},
        "approval": "accepted",
        "approval_mode": "form",
        "approver": "the-approver",
        "outcome": "tool_error",
        "error_code": "the-code",
        "duration_ms": 250.0,
        "trace_id": "the-trace",
    }


@pytest.mark.parametrize(("surface", "mode"), [("mcp", "url"), ("cli", "form"), ("rest", "form")])
def test_a_row_made_of_the_values_is_the_row_of_the_record(surface: str, mode: str) -> None:
    """The audit table's writer makes rows of the values; a record handed to it in person makes the same row."""
    from flask_mcp.audit.models import values_of

    ended = _ended(surface, mode)
    values = audit_values(ended, arguments=True, trace_id="t")
    assert len(values) == len(dataclasses.fields(AuditRecord))
    assert values_of(values) == values_of(audit_record(ended, arguments=True, trace_id="t"))


def test_a_terminal_approval_is_named_so_and_arguments_are_left_out_unless_asked() -> None:
    record = audit_record(_ended("cli", "form"))
    assert (record.approval_mode, record.arguments, record.revision) == ("terminal", None, "2025-06-18")
    assert audit_record(_ended("rest")).revision is None
