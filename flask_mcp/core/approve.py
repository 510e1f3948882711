"""The human's approval of a tool marked ``confirm``, asked before the function is entered.

An approval is for one caller, one tool and one digest of the arguments
(:func:`~flask_mcp.protocol.canonical.arguments_digest`), used once, and only
for :attr:`~flask_mcp.core.approval.Approvals.ttl` seconds from the question
to the answer. It is asked one of two ways:

* a form elicitation (:mod:`flask_mcp.core.approval_forms`), in both eras: the
  client shows the question; a model driving the client could answer it;
* the approval page (:mod:`flask_mcp.core.approval_pages`): the app's own
  page, where the signed-in user the call is made for says yes. Nothing the
  client sends can approve.

``MCP_CONFIRM_MODE`` chooses: ``"form"``, ``"url"``, or ``"auto"``: the page
when the client can open it (or cannot be shown a form) and the app can sign
the caller in, a form otherwise.
"""

from __future__ import annotations

import typing as t

from .approval import NOT_ASKED, Approval, ApprovalQuestion, Approvals, approval_message, unavailable
from .approval_forms import ask_in_round, ask_over_channel
from .approval_pages import FORM_QUESTION, URL_QUESTION, ask_on_page, ask_on_page_in_round
from .audit import arguments_digest
from .context import requests_unavailable
from .rounds import Round

if t.TYPE_CHECKING:
    from ..components.model import Tool
    from .client import Call

__all__ = ["approve"]


def approve(call: Call, tool: Tool, arguments: dict[str, t.Any]) -> Approval:
    """Ask the human to approve this call of *tool* with *arguments*, when the tool needs it.

    :returns: :data:`NOT_ASKED` for a tool without ``confirm``; otherwise how the question ended.
    :raises InputRequired: a modern call whose approval is still to be answered.
    :raises MissingCapability: a modern client that did not declare what it is asked by (-32021).
    :raises ApprovalUnavailable: a handshake-era client that cannot be asked, or a direct call without
        the approval page.
    :raises MCPError: -32042, a handshake-era call (or a direct one) sent to the approval page.
    """
    template = tool.confirmation
    if template is None:
        return NOT_ASKED
    approvals = call.server.approvals
    digest = arguments_digest(arguments)
    question = ApprovalQuestion(approval_message(tool, template, arguments), tool.name, digest)
    if _on_page(call, approvals):
        if isinstance(call.round, Round):
            return ask_on_page_in_round(call, call.round, approvals, question, arguments)
        return ask_on_page(call, approvals, question, arguments)
    if approvals.mode == "url":
        raise unavailable(
            question, "the approval page: an app that signs users in (OAuthServer or Flask-Login) and a signed-in user"
        )
    if isinstance(call.round, Round):
        return ask_in_round(call, call.round, approvals, question)
    return ask_over_channel(call, approvals, question)


def _on_page(call: Call, approvals: Approvals) -> bool:
    """Whether this call's approval is asked on the approval page (URL mode)."""
    pages, principal = approvals.pages, call.principal
    if approvals.mode == "form" or pages is None or principal is None or principal.machine or not pages.available():
        return False  # nobody signed in to approve for: a page would be anyone's
    if approvals.mode == "url":
        return True
    capabilities = call.state.capabilities
    if URL_QUESTION.declared(capabilities):
        return True
    if isinstance(call.round, Round):
        return False  # a modern client is asked what it declared: a form
    # A handshake client that cannot be shown a form is sent to the page by the -32042 error.
    return requests_unavailable(call.channel) is not None or not FORM_QUESTION.declared(capabilities)
