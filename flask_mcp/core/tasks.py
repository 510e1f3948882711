"""Tasks: a tool call that outlives its request.

The call answers at once with a task; the tool runs elsewhere (a thread of
this process, or a worker on another host) and writes its status and
outcome to a :class:`TaskStore` shared by every process, where any request,
on any process, reads it. Two wire forms serve the same record:

- the 2026-07-28 ``io.modelcontextprotocol/tasks`` extension: the server
  decides to answer a ``tools/call`` of a client that declared the extension
  with a task (``resultType: "task"``); ``tasks/get`` returns it with its
  ``result``, ``error`` or ``inputRequests``; ``tasks/update`` answers those;
  ``tasks/cancel`` asks it to stop;
- the 2025-11-25 revision's experimental tasks: the client asks for one
  (``params.task``), ``tasks/get``, ``tasks/result`` (waits for the end),
  ``tasks/list`` and ``tasks/cancel``.

A task belongs to its caller (the principal, and the session in the
handshake era): anyone else is told it does not exist. A caller with
neither makes ownerless tasks, read by their id alone and never listed
(:mod:`flask_mcp.core.task_record`). Questions the tool asks
(``ctx.elicit``...) put the task in ``input_required``; once they are
answered the tool runs again from the start with the answers, exactly as
modern ``input_required`` rounds do (:mod:`flask_mcp.core.rounds`).

What a caller may hold is bounded (:class:`TaskLimits`): its live tasks,
what the store keeps of its tasks (ended ones included), and what the
store keeps in all. A task whose tool still runs stays live, readable and
cancellable until the tool returns, whatever its ``ttl``.

Nothing here knows where records live or how a job runs: the Flask
integration hands in a :class:`TaskStore` and a :class:`TaskRunner`.
"""

from __future__ import annotations

import dataclasses
import secrets
import time
import typing as t

from ..protocol import jsonrpc
from ..protocol.jsonrpc import INVALID_PARAMS, MCPError
from .heartbeats import HEARTBEATS
from .task_record import OWNERLESS, TERMINAL, TaskRecord, account_of, owner_of

if t.TYPE_CHECKING:
    from ..policies.principal import Principal


__all__ = [
    "EXTENSION",
    "LOST",
    "OWNERLESS",
    "RELATED_TASK",
    "TERMINAL",
    "TaskLimit",
    "TaskLimits",
    "TaskRecord",
    "TaskRunner",
    "TaskStore",
    "Tasks",
    "TasksFull",
    "account_of",
    "answer",
    "cancel",
    "end",
    "owner_of",
    "ran",
]

#: The id of the 2026-07-28 tasks extension, in ``capabilities.extensions``.
EXTENSION = "io.modelcontextprotocol/tasks"
#: The ``_meta`` key that ties a 2025-11-25 ``tasks/result`` answer to its task.
RELATED_TASK = "io.modelcontextprotocol/related-task"


@dataclasses.dataclass(frozen=True)
class TaskLimits:
    """What the store keeps of tasks, per caller (account) and in all; ``None``: no bound.

    :param max_live: tasks of one caller that have not ended or whose tool still runs
        (``MCP_TASK_MAX_PER_CALLER``): past it, a new one gets -31429.
    :param max_kept: tasks of one caller the store keeps, ended ones included
        (``MCP_TASK_MAX_KEPT_PER_CALLER``): past it, the caller's oldest ended task is let go.
    :param max_kept_bytes: bytes of one caller's kept tasks (``MCP_TASK_MAX_BYTES_PER_CALLER``):
        past it, its oldest ended tasks are let go; when its live ones alone fill it, -31429.
    :param max_total: tasks the store keeps in all (``MCP_TASK_MAX_TOTAL``): past it, -31503;
        nobody's task is let go to make room.
    :param max_total_bytes: bytes of all tasks kept (``MCP_TASK_MAX_TOTAL_BYTES``): past it, -31503.
    :param lost_after: seconds without a sign of life after which a running tool no longer counts.
    """

    max_live: int | None = 100
    max_kept: int | None = 200
    max_kept_bytes: int | None = 32 * 1024 * 1024
    max_total: int | None = 10_000
    max_total_bytes: int | None = 256 * 1024 * 1024
    lost_after: float | None = 30.0


class TaskStore(t.Protocol):
    """Where task records live, shared by every process that may answer for them."""

    def create(self, record: TaskRecord, limits: TaskLimits) -> None:
        """Keep a new *record*, readable by :meth:`load` before this returns, within *limits*.

        :raises TaskLimit: its account is at one of its bounds.
        :raises TasksFull: the store keeps as many tasks (or bytes of them) as it may.
        """
        ...

    def load(self, task_id: str) -> TaskRecord | None:
        """The record of *task_id*; ``None`` when there is none (or it expired)."""
        ...

    def update(self, task_id: str, change: t.Callable[[TaskRecord], bool]) -> TaskRecord | None:
        """Apply *change* to the record under a lock and keep it when *change* returns true; the record after."""
        ...

    def owned(self, account: str, owner: str) -> list[TaskRecord]:
        """The kept records of *account* that belong to *owner*, oldest first."""
        ...

    def request_cancel(self, task_id: str) -> None:
        """Note that *task_id* should stop (read by the running tool's ``ctx.cancelled``)."""
        ...

    def cancel_requested(self, task_id: str) -> bool:
        """Whether :meth:`request_cancel` was called for *task_id*."""
        ...


class TaskRunner(t.Protocol):
    """Runs a task's job somewhere other than the request that created it."""

    def submit(self, task_id: str, account: str) -> None:
        """Run the task *task_id* (its record says what) soon, outside the current request.

        *account* is whose it is: a runner shares its workers fairly among accounts.
        """
        ...


class TaskLimit(MCPError):
    """The caller is at one of its bounds (:class:`TaskLimits`): a -31429, HTTP 429."""

    def __init__(self, limit: int, message: str | None = None) -> None:
        super().__init__(
            jsonrpc.RATE_LIMITED,
            message or f"Too many tasks: at most {limit} of yours may run at once; wait for one to end or cancel one",
            {"limit": limit},
        )


class TasksFull(MCPError):
    """The store keeps as many tasks as it may: a -31503, HTTP 503, with ``retryAfter``."""

    def __init__(self, retry_after: int = 30) -> None:
        super().__init__(
            jsonrpc.SERVICE_UNAVAILABLE,
            f"Service Unavailable: the server keeps as many tasks as it can; retry in {retry_after} s",
            {"retryAfter": retry_after},
        )


@dataclasses.dataclass
class Tasks:
    """A server's tasks: where they are kept, what runs them, and their limits.

    :param store: the records.
    :param runner: runs the jobs.
    :param ttl_ms: how long a task is kept from its creation (a client's ``ttl`` may ask for less).
    :param poll_interval_ms: how often clients are told to poll.
    :param limits: what one caller, and everybody, may have kept.
    :param page_size: tasks per page of ``tasks/list``.
    :param heartbeat: seconds between two signs of life of a running task.
    :param lost_after: seconds without one after which a running task is failed as lost
        (its worker died); ``None``: never.
    :param admit: counts a new ownerless task against its caller's budget (the remote
        address's budget of new sessions, ``MCP_SESSION_RATE_LIMIT``); raises
        :class:`~flask_mcp.protocol.jsonrpc.MCPError` past it. ``None``: no budget.
    """

    store: TaskStore
    runner: TaskRunner
    ttl_ms: int = 3_600_000
    poll_interval_ms: int = 500
    limits: TaskLimits = dataclasses.field(default_factory=TaskLimits)
    page_size: int = 50
    heartbeat: float = 5.0
    lost_after: float | None = 30.0
    admit: t.Callable[[str], None] | None = None

    def new_record(
        self,
        *,
        era: str,
        tool: str,
        arguments: dict[str, t.Any],
        client: dict[str, t.Any],
        principal: Principal | None,
        session_id: str | None,
        address: str | None = None,
        ttl_ms: int | None = None,
        meta: dict[str, t.Any] | None = None,
        answers: dict[str, t.Any] | None = None,
    ) -> TaskRecord:
        """A new record, kept in the store (durably, before the task is announced) and submitted to run.

        *address* tells anonymous callers without a session apart (:func:`account_of`).

        :raises MCPError: the caller is past a bound (:class:`TaskLimit`, or its budget of new
            ownerless tasks), or the store is full (:class:`TasksFull`).
        """
        ttl = self.ttl_ms if ttl_ms is None else max(1, min(ttl_ms, self.ttl_ms))
        owner = owner_of(principal, session_id)
        account = account_of(principal, session_id, address)
        if owner == OWNERLESS and self.admit is not None:
            # Each ownerless task is something kept for an hour on one request, as a new session is.
            self.admit(account)
        record = TaskRecord(
            # Long and random: in the modern era a task id is all a request names.
            task_id=secrets.token_urlsafe(24),
            owner=owner,
            era=era,
            tool=tool,
            arguments=arguments,
            client=client,
            principal=None
            if principal is None
            else {"subject": principal.subject, "scopes": sorted(principal.scopes), "claims": dict(principal.claims)},
            created_at=time.time(),
            ttl_ms=ttl,
            poll_interval_ms=self.poll_interval_ms,
            meta=meta or {},
            answers=answers or {},
            account=account,
            runs=1,  # handed to the runner below: live until that run returns
        )
        if getattr(self.runner, "runs_here", False):
            # Queued in this process: alive while the process is, watched from now on.
            record.heartbeat_at = record.created_at
        self.store.create(record, dataclasses.replace(self.limits, lost_after=self.lost_after))
        self.submit(record)
        return record

    def submit(self, record: TaskRecord) -> None:
        """Hand *record*'s task to the runner (its ``runs`` already counts this run).

        A runner that runs tasks in this process has them watched meanwhile.
        """
        if getattr(self.runner, "runs_here", False):
            HEARTBEATS.watch(self.store, record.task_id, self.heartbeat)
        self.runner.submit(record.task_id, record.account)

    def owned_record(self, task_id: t.Any, principal: Principal | None, session_id: str | None) -> TaskRecord:
        """The record of *task_id* when it is the caller's and has not expired (or its tool still runs).

        :raises MCPError: -32602 otherwise; another caller's task is "not found" as an unknown one is.
        """
        if not isinstance(task_id, str) or not task_id:
            raise MCPError(INVALID_PARAMS, "Invalid params: 'taskId' must be a non-empty string")
        record = self.store.load(task_id)
        if (
            record is None
            or record.owner != owner_of(principal, session_id)
            or record.expired(time.time(), self.lost_after)
        ):
            raise MCPError(INVALID_PARAMS, f"Failed to retrieve task: Task not found: {task_id}")
        return self.alive(record)

    def alive(self, record: TaskRecord) -> TaskRecord:
        """*record*, failed first when the run under way stopped giving signs of life (its worker died)."""
        beat, limit = record.heartbeat_at, self.lost_after
        if record.runs <= 0 or beat is None or limit is None or time.time() - beat <= limit:
            return record

        def lose(found: TaskRecord) -> bool:
            if found.runs <= 0 or found.heartbeat_at != beat:
                return False  # it moved on meanwhile
            found.heartbeat_at, found.runs = None, 0
            if not found.terminal:
                found.error = {"code": jsonrpc.INTERNAL_ERROR, "message": LOST.format(seconds=limit)}
                found.moved("failed", found.error["message"])
            return True

        return self.store.update(record.task_id, lose) or record


#: What a task whose worker stopped answering says, in ``statusMessage`` and its error.
LOST = (
    "the worker running this task stopped answering for {seconds:g} s (it was stopped or died); "
    "the task did not finish: call the tool again"
)


def answer(store: TaskStore, task_id: str, responses: dict[str, t.Any]) -> TaskRecord | None:
    """Keep the answers to outstanding questions of *task_id*; the record when it may run again now.

    Answers to keys the task is not waiting for are ignored, as the
    extension asks; the task runs again once none is outstanding, and the
    run to hand to the runner is already counted in the record returned.
    """
    ready = False

    def keep(record: TaskRecord) -> bool:
        nonlocal ready
        if record.status != "input_required":
            return False
        given = {key: value for key, value in responses.items() if key in record.input_requests}
        if not given:
            return False
        record.answers.update(given)
        record.input_requests = {k: v for k, v in record.input_requests.items() if k not in given}
        if not record.input_requests:
            record.moved("working")
            record.runs += 1
            ready = True
        return True

    record = store.update(task_id, keep)
    return record if ready else None


def cancel(store: TaskStore, task_id: str) -> TaskRecord | None:
    """Cancel *task_id* now (its status) and raise its stop flag (its running tool's ``ctx.cancelled``).

    A task that has ended is left as it is. The record after.
    """

    def stop(record: TaskRecord) -> bool:
        if record.terminal:
            return False
        record.input_requests = {}
        record.moved("cancelled", "cancelled by the client")
        return True

    record = store.update(task_id, stop)
    if record is not None and record.status == "cancelled":
        store.request_cancel(task_id)
    return record


def end(
    store: TaskStore,
    task_id: str,
    status: str,
    message: str | None = None,
    *,
    result: dict[str, t.Any] | None = None,
    error: MCPError | None = None,
    returned: bool = False,
) -> None:
    """End *task_id* with *status*, its *result* or *error* (and *message*, by default the error's).

    A task that has already ended is left as it is: one cancelled while its
    tool ran stays cancelled whatever the tool returned.

    :param returned: the run ending it has returned (see :func:`ran`), noted in the same
        update: a caller who sees the task ended finds it no longer counted as running.
    """

    def finish(record: TaskRecord) -> bool:
        came_back = returned and _returned(record)
        if record.terminal:
            return came_back  # cancelled while it ran: it stays cancelled
        record.result = result
        record.error = error.to_dict() if error is not None else None
        record.input_requests = {}
        record.moved(status, message if message is not None else (error.message if error is not None else None))
        return True

    store.update(task_id, finish)


def ran(store: TaskStore, task_id: str) -> None:
    """Note that one run of *task_id* returned: once none is left, its tool no longer holds a worker."""
    store.update(task_id, _returned)


def _returned(record: TaskRecord) -> bool:
    # One run fewer; with none left the task no longer holds a worker, and gives no sign of life.
    if record.runs <= 0:
        return False
    record.runs -= 1
    if record.runs == 0:
        record.heartbeat_at = None
    return True
