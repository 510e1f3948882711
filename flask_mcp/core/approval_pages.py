"""URL-mode approval: the human says yes on a page the app serves, which no client can answer for.

A question opens a :class:`PageApproval` for one signed-in user (the
caller's subject), one tool and one digest of the arguments; its page
(served by the Flask layer, :mod:`flask_mcp.transport.approval_page`) shows
the call and records the user's decision. The call uses a yes once, within
the approval's TTL of it:

* 2025-11-25: the call answers the URL-elicitation-required error (-32042)
  naming the page; the client opens it and sends the same call again, which
  finds the decision by caller, tool and digest (:meth:`ApprovalPages.for_call`).
  A REST call does the same with a 403 carrying the page's address.
* 2026-07-28: an ``input_required`` round asks for the URL; the retry's
  ``requestState`` names the approval.
"""

from __future__ import annotations

import dataclasses
import secrets
import typing as t

from ..protocol.jsonrpc import MCPError
from .approval import ACTIONS, APPROVAL_KEY, NO_FIELDS, Approval, ApprovalQuestion, Approvals, carried
from .audit import ApprovalOutcome
from .input_requests import Elicit
from .rounds import InputRequired, MissingCapability, Round

if t.TYPE_CHECKING:
    from .client import Call

__all__ = [
    "FORM_QUESTION",
    "URL_ELICITATION_REQUIRED",
    "URL_QUESTION",
    "ApprovalPages",
    "PageApproval",
    "PageDecision",
    "ask_on_page",
    "ask_on_page_in_round",
    "url_elicitation_required",
]

#: A form question: what a client must declare to be asked by one.
FORM_QUESTION = Elicit("approve?", NO_FIELDS)
#: A URL question: what a client must declare to be sent to the page.
URL_QUESTION = Elicit("approve?", url="https://example.invalid/")

#: The 2025-11-25 error of a request that waits for the user to visit a URL.
URL_ELICITATION_REQUIRED = -32042

#: What the user decided on the page.
PageDecision = t.Literal["accept", "decline"]


@dataclasses.dataclass
class PageApproval:
    """One question on the approval page, and the user's decision once made."""

    #: Unguessable: the page's address names it.
    id: str
    #: The page's absolute URL.
    url: str
    #: The caller's subject: only this signed-in user may decide.
    subject: str
    tool: str
    #: The arguments' digest (:func:`~flask_mcp.protocol.canonical.arguments_digest`).
    digest: str
    #: What the page shows: the question, the tool and its exact arguments.
    message: str
    arguments: dict[str, t.Any]
    #: When it was asked (seconds since the epoch).
    asked: float
    decision: PageDecision | None = None
    decided_by: str | None = None
    decided_at: float | None = None

    def outcome(self, now: float, ttl: float) -> ApprovalOutcome | None:
        """``accepted``, ``declined`` or ``expired`` once decided (or too old to be); ``None`` while it waits."""
        if self.decision is None:
            return "expired" if now - self.asked > ttl else None
        if self.decision == "decline":
            return "declined"
        decided = self.decided_at if self.decided_at is not None else self.asked
        return "accepted" if now - decided <= ttl else "expired"


class ApprovalPages(t.Protocol):
    """Where page approvals are kept (the shared store) and how their pages are reached."""

    def available(self) -> bool:
        """Whether the app can sign users in, so that one can approve on the page."""
        ...

    def open(
        self,
        subject: str,
        tool: str,
        digest: str,
        message: str,
        arguments: dict[str, t.Any],
        asked: float,
        caller: str,
    ) -> PageApproval:
        """A new approval, waiting for its user's decision.

        :param caller: whose store quota it spends (:attr:`Call.caller <flask_mcp.core.client.Call.caller>`).
        :raises ~flask_mcp.protocol.errors.StoreRefused: the caller's quota or the store is full.
        """
        ...

    def get(self, approval_id: str) -> PageApproval | None:
        """The approval *approval_id*, with its decision, or ``None`` (unknown, used or expired)."""
        ...

    def for_call(self, subject: str, tool: str, digest: str) -> PageApproval | None:
        """The latest approval opened for this caller, tool and digest, if it is still kept."""
        ...

    def close(self, approval: PageApproval) -> None:
        """Forget *approval*: it was used, declined or expired."""
        ...


def url_elicitation_required(approval: PageApproval) -> MCPError:
    """The -32042 error sending the user to *approval*'s page (2025-11-25)."""
    return MCPError(
        URL_ELICITATION_REQUIRED,
        f"The tool {approval.tool!r} runs only once you approve it at {approval.url}; "
        "open it, approve, and call the tool again",
        {
            "elicitations": [
                {"mode": "url", "elicitationId": approval.id, "url": approval.url, "message": approval.message}
            ]
        },
    )


def _opened(call: Call, approvals: Approvals, question: ApprovalQuestion, arguments: dict[str, t.Any]) -> PageApproval:
    pages = t.cast(ApprovalPages, approvals.pages)
    subject = t.cast(str, call.principal and call.principal.subject)
    return pages.open(
        subject, question.tool, question.digest, question.message, arguments, approvals.clock(), call.caller
    )


def ask_on_page(call: Call, approvals: Approvals, question: ApprovalQuestion, arguments: dict[str, t.Any]) -> Approval:
    """The user's decision on the page of this very call (2025-11-25, REST), or send them there.

    A decision is found by caller, tool and digest, so the same call sent again after approving runs;
    a yes is used once.

    :raises MCPError: -32042 naming the page (a new one, or the one still waiting).
    """
    pages = t.cast(ApprovalPages, approvals.pages)
    subject = t.cast(str, call.principal and call.principal.subject)
    found = pages.for_call(subject, question.tool, question.digest)
    if found is not None:
        outcome = found.outcome(approvals.clock(), approvals.ttl)
        if outcome == "declined":
            pages.close(found)
            return Approval("declined", "url", found.decided_by)
        if outcome == "accepted" and approvals.ledger.spend(found.id, approvals.ttl):
            pages.close(found)
            return Approval("accepted", "url", found.decided_by)
        if outcome is not None:
            found = None  # expired, or its yes already used by another call: ask afresh
    raise url_elicitation_required(found if found is not None else _opened(call, approvals, question, arguments))


def ask_on_page_in_round(
    call: Call, round_: Round, approvals: Approvals, question: ApprovalQuestion, arguments: dict[str, t.Any]
) -> Approval:
    """The decision on the page the state names (2026-07-28), or an ``input_required`` round asking to open it.

    :raises InputRequired: not asked yet, not decided yet, or asked for other arguments.
    :raises MissingCapability: the client did not declare URL elicitation (-32021).
    """
    pages = t.cast(ApprovalPages, approvals.pages)
    now = approvals.clock()
    issued = round_.approval
    page: PageApproval | None = None
    if issued is not None and issued.get("d") == question.digest and issued.get("m") == "url":
        if issued.get("ok"):
            # Approved in an earlier round of this request, which runs again for another answer.
            if approvals.ledger.spend(str(issued.get("n")), approvals.ttl):
                return carried(round_, question.digest, now, issued.get("by"), "url")
        else:
            page = pages.get(str(issued.get("id")))
            subject = call.principal.subject if call.principal is not None else None
            if page is not None and (page.subject != subject or page.digest != question.digest):
                page = None
            raw = round_.responses.get(APPROVAL_KEY)
            if page is not None and raw is not None:
                answer = question.answer(APPROVAL_KEY, raw)
                if answer.action != "accept":  # the user would not open the page
                    pages.close(page)
                    return Approval(ACTIONS[answer.action], "url")
                outcome = page.outcome(now, approvals.ttl)
                if outcome == "declined":
                    pages.close(page)
                    return Approval("declined", "url", page.decided_by)
                if outcome == "accepted" and approvals.ledger.spend(page.id, approvals.ttl):
                    pages.close(page)
                    return carried(round_, question.digest, now, page.decided_by, "url")
                if outcome is not None:
                    page = None  # expired, or its yes already used: a new page
    if not URL_QUESTION.declared(call.state.capabilities):
        raise MissingCapability(URL_QUESTION)
    if page is None:
        page = _opened(call, approvals, question, arguments)
    asked = Elicit(question.message, url=page.url)
    round_.approval_out = {"n": secrets.token_urlsafe(16), "d": question.digest, "t": now, "m": "url", "id": page.id}
    raise InputRequired({APPROVAL_KEY: asked})
