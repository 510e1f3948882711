"""The approval page: where the signed-in user approves (or denies) one call of a tool marked ``confirm``.

``GET <endpoint>/approvals/<id>`` shows the tool and its exact arguments to
the user the call was made for, and only to them (others get 403, nobody
signed in is sent to the app's login page); ``POST`` records their decision
once. The form carries a CSRF token bound to the browser session, the user
and the approval; the page may not be framed and is never cached. Override
``mcp_approval/approve.html`` in the app's templates to restyle it.
"""

from __future__ import annotations

import json
import typing as t

from flask import Flask, Response, current_app, redirect, request, url_for

from ..core.approval_pages import PageApproval
from ..globals import current_state
from ..stores.approval_pages import CacheApprovalPages
from .form_tokens import FormTokens, form_page
from .sign_in import sign_in_of

__all__ = ["TEMPLATE", "add_route", "approval_view", "page_url"]

#: The page's template; an app overrides it with its own of the same name.
TEMPLATE = "mcp_approval/approve.html"
_TOKENS = FormTokens("flask-mcp.approval", "_mcp_approval_nonce")
_ENDPOINT = "approval_page"


def add_route(app: Flask, endpoint_prefix: str, mcp_path: str) -> None:
    """Route ``<mcp_path>/approvals/<id>`` to the page of the server named *endpoint_prefix*."""
    app.add_url_rule(
        mcp_path.rstrip("/") + "/approvals/<approval_id>",
        f"{endpoint_prefix}.{_ENDPOINT}",
        approval_view,
        methods=["GET", "POST"],
    )


def page_url(endpoint_prefix: str, approval_id: str) -> str:
    """The absolute URL of the page of *approval_id*."""
    return url_for(f"{endpoint_prefix}.{_ENDPOINT}", approval_id=approval_id, _external=True)


def _page(status: int, **context: t.Any) -> Response:
    context.setdefault("approval", None)
    context.setdefault("decided", None)
    return form_page(TEMPLATE, status, **context)


def _error(status: int, title: str, description: str) -> Response:
    return _page(status, title=title, description=description)


def approval_view(approval_id: str) -> Response:
    """Show the call to its user, or record their decision."""
    state = current_state()
    approvals = state.server.approvals
    pages = approvals.pages
    sign_in = sign_in_of(current_app)
    approval = pages.get(approval_id) if isinstance(pages, CacheApprovalPages) else None
    if approval is None or sign_in is None:
        return _error(404, "Nothing to approve", "This approval is unknown, was used already, or has expired.")
    subject = sign_in.subject()
    if subject is None:
        login = sign_in.login_url(request.path)
        if login is None:
            return _error(401, "Sign in first", "Sign in to this site, then open this page again.")
        return t.cast(Response, redirect(login))
    if subject != approval.subject:
        # Nothing of the call is shown: it is another user's.
        return _error(403, "Not yours to approve", "This call was made for another user: sign in as them.")
    outcome = approval.outcome(approvals.clock(), approvals.ttl)
    if outcome == "expired":
        return _error(410, "Too late", "This approval has expired: ask your AI client to call the tool again.")
    if request.method == "POST":
        return _decide(t.cast(CacheApprovalPages, pages), approval, subject, approvals.clock())
    if approval.decision is not None:
        return _page(200, title="Decided", decided=approval.decision)
    return _page(
        200,
        title=f"Approve {approval.tool}?",
        approval=approval,
        subject=subject,
        question=approval.message.split("\n\n", 1)[0],
        arguments=json.dumps(approval.arguments, indent=2, ensure_ascii=False, sort_keys=True, default=str),
        minutes=max(1, round(approvals.ttl / 60)),
        action=request.path,
        csrf_token=_TOKENS.token(subject, approval.id),
    )


def _decide(pages: CacheApprovalPages, approval: PageApproval, subject: str, now: float) -> Response:
    max_age = max(1, round(current_state().server.approvals.ttl))
    if not _TOKENS.valid(request.form.get("csrf_token"), subject, approval.id, max_age):
        return _error(400, "Expired form", "This form is stale or was not sent from this page: open it again.")
    decision: t.Literal["accept", "decline"] = "accept" if request.form.get("decision") == "approve" else "decline"
    pages.decide(approval.id, decision, subject, now)
    kept = pages.get(approval.id)  # the first decision stands
    return _page(200, title="Decided", decided=kept.decision if kept is not None else decision)
