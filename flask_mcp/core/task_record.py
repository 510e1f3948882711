"""One task as every process sees it (:mod:`flask_mcp.core.tasks`), and whose it is.

A task has an *owner*, who may read, answer and cancel it, and an
*account*, whose budgets it spends (the live cap, what is kept, a share of
the workers):

====================================  ==============================  ===================
caller                                owner                           account
====================================  ==============================  ===================
authenticated                         the subject (and the session)   the subject
anonymous, in a session               the session                     the session
anonymous, without a session          nobody: :data:`OWNERLESS`       the remote address
====================================  ==============================  ===================

An ownerless task (a stateless 2025-11-25 request, or an anonymous
2026-07-28 one) is readable by whoever holds its id and by nobody else:
the id is long and random, it is handed only to the caller that made the
task, and no listing shows ownerless tasks.
"""

from __future__ import annotations

import dataclasses
import datetime
import time
import typing as t

from ..protocol import jsonrpc

if t.TYPE_CHECKING:
    from ..policies.principal import Principal

__all__ = ["OWNERLESS", "TERMINAL", "TaskRecord", "account_of", "owner_of"]

#: Statuses a task never leaves.
TERMINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})
#: The owner of a task made by a caller that is neither authenticated nor in a session.
OWNERLESS = "\x00"


def owner_of(principal: Principal | None, session_id: str | None) -> str:
    """Whose a task is: the authenticated subject, and the handshake session when there is one.

    :data:`OWNERLESS` for a caller that has neither: such a task is read by its id alone.
    """
    subject = principal.subject if principal is not None else ""
    return f"{subject}\x00{session_id or ''}"


def account_of(principal: Principal | None, session_id: str | None, address: str | None) -> str:
    """Whose budgets a new task spends: the subject, else the session, else the remote *address*.

    Every session of a principal shares its budget; anonymous callers
    without a session share one per address, as they share the budget of
    new sessions (``MCP_SESSION_RATE_LIMIT``).
    """
    if principal is not None:
        return "p:" + principal.subject
    if session_id:
        return "s:" + session_id
    return "a:" + (address or "anonymous")


def _iso(moment: float) -> str:
    stamp = datetime.datetime.fromtimestamp(moment, datetime.UTC).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")


@dataclasses.dataclass
class TaskRecord:
    """One task as the store keeps it: what to run, and what became of it."""

    task_id: str
    owner: str
    #: ``"modern"`` (the extension) or ``"handshake"`` (2025-11-25): the wire form of its answers.
    era: str
    tool: str
    arguments: dict[str, t.Any]
    #: The request's client state (revision, capabilities, log level), to run the tool as that client.
    client: dict[str, t.Any]
    #: The caller, as the principal's fields (``subject``, ``scopes``, ``claims``); ``None``: nobody.
    principal: dict[str, t.Any] | None
    created_at: float
    ttl_ms: int | None
    poll_interval_ms: int
    status: str = "working"
    status_message: str | None = None
    last_updated_at: float = 0.0
    #: The original request's result, once ``completed``.
    result: dict[str, t.Any] | None = None
    #: The JSON-RPC error object, once ``failed``.
    error: dict[str, t.Any] | None = None
    #: The questions outstanding while ``input_required``, by key.
    input_requests: dict[str, t.Any] = dataclasses.field(default_factory=dict)
    #: Every answer given so far, by key; the tool's next run finds them.
    answers: dict[str, t.Any] = dataclasses.field(default_factory=dict)
    #: The request's ``_meta`` (its progress token...).
    meta: dict[str, t.Any] = dataclasses.field(default_factory=dict)
    #: When the run under way last said it is alive; ``None`` while no run gave a sign yet.
    heartbeat_at: float | None = None
    #: Whose budgets it spends (:func:`account_of`); its owner's when not given.
    account: str = ""
    #: Runs handed to the runner that have not returned yet (queued or running its tool).
    runs: int = 0
    #: What the store counts of it against its bounds (the store's own bookkeeping).
    charge: dict[str, t.Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.last_updated_at:
            self.last_updated_at = self.created_at
        if not self.account:
            self.account = "o:" + self.owner

    @property
    def terminal(self) -> bool:
        """Whether the task has ended (its tool may still be running: see :meth:`in_use`)."""
        return self.status in TERMINAL

    def in_use(self, now: float, lost_after: float | None) -> bool:
        """Whether its tool runs or waits to run, on a worker that still gives signs of life.

        A cancelled task whose tool has not returned yet is in use: it holds a
        worker, so it stays counted (and kept) until the tool ends, whatever
        its ``ttl``.
        """
        if self.runs <= 0:
            return False
        beat = self.heartbeat_at
        return beat is None or lost_after is None or now - beat <= lost_after

    def live(self, now: float, lost_after: float | None) -> bool:
        """Whether it counts against its caller's live tasks: not ended, or its tool still running."""
        return not self.terminal or self.in_use(now, lost_after)

    def expired(self, now: float, lost_after: float | None = None) -> bool:
        """Whether the task is past its ``ttl``, counted from its creation, and its tool is not running."""
        past = self.ttl_ms is not None and now > self.created_at + self.ttl_ms / 1000
        return past and not self.in_use(now, lost_after)

    def to_dict(self) -> dict[str, t.Any]:
        """The stored form (its members as they are: the store serializes them)."""
        return {field.name: getattr(self, field.name) for field in _FIELDS}

    @classmethod
    def from_dict(cls, data: t.Mapping[str, t.Any]) -> TaskRecord:
        """Inverse of :meth:`to_dict`."""
        return cls(**{key: value for key, value in data.items() if key in _NAMES})

    def moved(self, status: str, message: str | None = None, now: float | None = None) -> None:
        """Set *status* (and its message), stamping the update."""
        self.status = status
        self.status_message = message
        self.last_updated_at = time.time() if now is None else now

    def shed(self) -> None:
        """Drop what an ended task no longer needs: its arguments, questions, answers and caller.

        What is left is what ``tasks/get``, ``tasks/result`` and
        ``tasks/list`` answer with: its status, result or error.
        """
        self.arguments, self.client, self.principal, self.meta = {}, {}, None, {}
        self.input_requests, self.answers = {}, {}

    # -- wire forms -----------------------------------------------------

    def _wire(self, ttl: str, poll: str) -> dict[str, t.Any]:
        task: dict[str, t.Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": _iso(self.created_at),
            "lastUpdatedAt": _iso(self.last_updated_at),
            ttl: self.ttl_ms,
            poll: self.poll_interval_ms,
        }
        if self.status_message is not None:
            task["statusMessage"] = self.status_message
        return task

    def modern_task(self) -> dict[str, t.Any]:
        """The extension's ``Task`` (``ttlMs``, ``pollIntervalMs``)."""
        return self._wire("ttlMs", "pollIntervalMs")

    def modern_detailed(self) -> dict[str, t.Any]:
        """The extension's ``DetailedTask``: the task with its result, error or questions."""
        task = self.modern_task()
        if self.status == "completed" and self.result is not None:
            task["result"] = {**self.result, "resultType": "complete"}
        elif self.status == "failed":
            task["error"] = self.error or {"code": jsonrpc.INTERNAL_ERROR, "message": "Internal error"}
        elif self.status == "input_required":
            task["inputRequests"] = self.input_requests
        return task

    def handshake_task(self) -> dict[str, t.Any]:
        """The 2025-11-25 ``Task`` (``ttl``, ``pollInterval``)."""
        return self._wire("ttl", "pollInterval")


_FIELDS = dataclasses.fields(TaskRecord)
_NAMES = frozenset(field.name for field in _FIELDS)
