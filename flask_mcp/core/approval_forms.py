"""Approval by a form elicitation: the client shows the question; accept, decline or cancel is the answer.

In the handshake era the question goes out on the request's stream and the
call waits for the answer. In the modern era it is an ``input_required``
round: the question's nonce, the digest and when it was asked travel sealed
in ``requestState`` (:mod:`flask_mcp.core.rounds`); the retry's answer counts
once, its nonce spent in the :class:`~flask_mcp.core.approval.ApprovalLedger`
every process shares, so a replayed state asks again.
"""

from __future__ import annotations

import secrets
import typing as t

from .approval import (
    ACTIONS,
    APPROVAL_KEY,
    Approval,
    ApprovalQuestion,
    Approvals,
    approver_of,
    carried,
    unavailable,
)
from .context import NoAnswer, requests_unavailable
from .rounds import InputRequired, MissingCapability, Round
from .tracing import traced_params

if t.TYPE_CHECKING:
    from .client import Call

__all__ = ["ask_in_round", "ask_over_channel"]


def ask_over_channel(call: Call, approvals: Approvals, question: ApprovalQuestion) -> Approval:
    """Ask on the request's stream (2025-11-25) and wait, at most the approval's TTL, for the answer.

    :raises ApprovalUnavailable: the transport cannot send requests, or the client declared no elicitation.
    """
    reason = requests_unavailable(call.channel)
    if reason is not None:
        raise unavailable(question, reason)
    if not question.declared(call.state.capabilities):
        raise unavailable(question, "a client that declares the elicitation capability")
    asked = approvals.clock()
    try:
        raw = t.cast("t.Any", call.channel).request(
            question.method, traced_params(call.server.tracer, question.params), approvals.ttl
        )
    except NoAnswer:
        return Approval("expired", "form")
    answer = question.answer(APPROVAL_KEY, raw)
    if approvals.clock() - asked > approvals.ttl:
        return Approval("expired", "form")
    return Approval(ACTIONS[answer.action], "form", approver_of(call))


def ask_in_round(call: Call, round_: Round, approvals: Approvals, question: ApprovalQuestion) -> Approval:
    """The answer this retry brings to the question its state says was asked, or ask (again) (2026-07-28).

    :raises InputRequired: not asked yet, asked for other arguments, or an answer spent before.
    :raises MissingCapability: the client did not declare form elicitation (-32021).
    """
    now = approvals.clock()
    issued = round_.approval
    if issued is not None and issued.get("d") == question.digest:
        nonce = str(issued.get("n"))
        if issued.get("ok"):
            # Approved in an earlier round of this request, which runs again for another answer.
            if approvals.ledger.spend(nonce, approvals.ttl):
                return carried(round_, question.digest, now, issued.get("by"), str(issued.get("m") or "form"))
        elif issued.get("m") != "url":
            raw = round_.responses.get(APPROVAL_KEY)
            if raw is not None:
                answer = question.answer(APPROVAL_KEY, raw)
                asked = issued.get("t")
                if not isinstance(asked, (int, float)) or now - asked > approvals.ttl:
                    return Approval("expired", "form")
                if approvals.ledger.spend(nonce, approvals.ttl):
                    outcome = ACTIONS[answer.action]
                    if outcome == "accepted":
                        return carried(round_, question.digest, now, approver_of(call))
                    return Approval(outcome, "form", approver_of(call))
    # Not asked yet, asked for other arguments, or an answer spent before: ask (again).
    if not question.declared(call.state.capabilities):
        raise MissingCapability(question)
    round_.approval_out = {"n": secrets.token_urlsafe(16), "d": question.digest, "t": now}
    raise InputRequired({APPROVAL_KEY: question})
