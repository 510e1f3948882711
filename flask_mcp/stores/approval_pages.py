"""Approval pages' questions and decisions in the shared store (:class:`~flask_mcp.core.approval_pages.ApprovalPages`).

Each question is one entry, found by its unguessable id (the page's address)
and, for a call sent again after the user approved, by a digest of caller,
tool and arguments. The decision is a second entry written with the store's
atomic ``add``: of two answers on the page, the first is the one kept. Both
live for twice the approval's TTL (the question, then the decision's use),
and each question counts against its caller's store quota of
``"approval"``, since the arguments it shows may be large.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import secrets
import typing as t

from ..core.approval_pages import PageApproval, PageDecision
from ..policies.store_keys import key as store_key

__all__ = ["CacheApprovalPages"]

_QUESTION = "approval-page"
_DECISION = "approval-decision"
_BY_CALL = "approval-call"

#: Counts a question against its caller's quota: ``(caller, kind, item, size, ttl)``.
Reserve = t.Callable[[str, str, str, int, float], None]


class CacheApprovalPages:
    """Approval pages kept in a flask-caching cache (the ephemeral one).

    :param cache: the flask-caching ``Cache``.
    :param url_of: the absolute URL of the page of an approval id.
    :param available: whether the app can sign users in (asked on each call: an ``OAuthServer`` may
        be set up after the extension).
    :param ttl: the approval's TTL (``MCP_CONFIRM_TTL``); entries live twice as long.
    :param reserve: counts each question against its caller's quota; ``None``: nothing is counted.
    """

    def __init__(
        self,
        cache: t.Any,
        url_of: t.Callable[[str], str],
        available: t.Callable[[], bool],
        ttl: float,
        reserve: Reserve | None = None,
    ) -> None:
        self.cache = cache
        self.url_of = url_of
        self._available = available
        self.timeout = max(1, math.ceil(2 * ttl))
        self.reserve = reserve

    def available(self) -> bool:
        """Whether a user can sign in to approve."""
        return self._available()

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
        """A new question, kept for its page and for the call sent again."""
        approval_id = secrets.token_urlsafe(24)
        approval = PageApproval(approval_id, self.url_of(approval_id), subject, tool, digest, message, arguments, asked)
        record = {key: value for key, value in dataclasses.asdict(approval).items() if not key.startswith("decid")}
        if self.reserve is not None:
            size = len(message.encode("utf-8", "surrogatepass")) + 2 * len(str(arguments))
            self.reserve(caller, "approval", approval_id, size, self.timeout)
        # Two writes: the keys carry different tags (nodes of a cluster).
        self.cache.set(store_key(_QUESTION, approval_id), record, timeout=self.timeout)
        self.cache.set(self._call_key(subject, tool, digest), approval_id, timeout=self.timeout)
        return approval

    def get(self, approval_id: str) -> PageApproval | None:
        """The question *approval_id* with its decision, or ``None``."""
        # One read: both keys carry the approval's tag.
        record, decision = self.cache.get_many(store_key(_QUESTION, approval_id), store_key(_DECISION, approval_id))
        if not isinstance(record, dict):
            return None
        approval = PageApproval(**record)
        if isinstance(decision, dict):
            approval.decision = decision.get("decision")
            approval.decided_by = decision.get("by")
            approval.decided_at = decision.get("at")
        return approval

    def for_call(self, subject: str, tool: str, digest: str) -> PageApproval | None:
        """The latest question of this caller, tool and digest, if it is still kept."""
        approval_id = self.cache.get(self._call_key(subject, tool, digest))
        return self.get(approval_id) if isinstance(approval_id, str) else None

    def decide(self, approval_id: str, decision: PageDecision, by: str, at: float) -> bool:
        """Record the user's *decision*; ``False`` when one was recorded before (it stands)."""
        entry = {"decision": decision, "by": by, "at": at}
        return bool(self.cache.add(store_key(_DECISION, approval_id), entry, timeout=self.timeout))

    def close(self, approval: PageApproval) -> None:
        """Forget the question and its decision (the decision's use was spent in the ledger already)."""
        self.cache.delete_many(store_key(_QUESTION, approval.id), store_key(_DECISION, approval.id))
        call_key = self._call_key(approval.subject, approval.tool, approval.digest)
        if self.cache.get(call_key) == approval.id:  # not a newer question of the same call
            self.cache.delete(call_key)

    @staticmethod
    def _call_key(subject: str, tool: str, digest: str) -> str:
        text = f"{subject}\x00{tool}\x00{digest}"
        return store_key(_BY_CALL, hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:40])
