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
handshake era): anyone else is told it does not exist. Questions the tool
asks (``ctx.elicit``...) put the task in ``input_required``; once they are
answered the tool runs again from the start with the answers, exactly as
modern ``input_required`` rounds do (:mod:`flask_mcp.core.rounds`).

Nothing here knows where records live or how a job runs: the Flask
integration hands in a :class:`TaskStore` and a :class:`TaskRunner`.
"""

from __future__ import annotations

import dataclasses
import datetime
import secrets
import time
import typing as t

from ..protocol import jsonrpc
from ..protocol.jsonrpc import INVALID_PARAMS, MCPError
from .heartbeats import HEARTBEATS

if t.TYPE_CHECKING:
    from ..policies.principal import Principal


__all__ = [
    "EXTENSION",
    "LOST",
    "RELATED_TASK",
    "TERMINAL",
    "TaskLimit",
    "TaskRecord",
    "TaskRunner",
    "TaskStore",
    "Tasks",
    "answer",
    "cancel",
    "end",
    "owner_of",
]

#: The id of the 2026-07-28 tasks extension, in ``capabilities.extensions``.
EXTENSION = "io.modelcontextprotocol/tasks"
#: The ``_meta`` key that ties a 2025-11-25 ``tasks/result`` answer to its task.
RELATED_TASK = "io.modelcontextprotocol/related-task"
TaskStatus = t.Literal["working", "input_required", "completed", "failed", "cancelled"]
#: Statuses a task never leaves.
TERMINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})


def owner_of(principal: Principal | None, session_id: str | None) -> str:
    """Whose a task is: the authenticated subject, and the handshake session when there is one."""
    subject = principal.subject if principal is not None else ""
    return f"{subject}\x00{session_id or ''}"


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
    #: When the run under way last said it is alive; ``None`` while no run is under way.
    heartbeat_at: float | None = None

    def __post_init__(self) -> None:
        if not self.last_updated_at:
            self.last_updated_at = self.created_at

    @property
    def terminal(self) -> bool:
        """Whether the task has ended."""
        return self.status in TERMINAL

    def expired(self, now: float) -> bool:
        """Whether the task is past its ``ttl``, counted from its creation."""
        return self.ttl_ms is not None and now > self.created_at + self.ttl_ms / 1000

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


class TaskStore(t.Protocol):
    """Where task records live, shared by every process that may answer for them."""

    def create(self, record: TaskRecord, max_live: int | None) -> None:
        """Keep a new *record*, readable by :meth:`load` before this returns.

        :raises TaskLimit: its owner already has *max_live* tasks that have not ended.
        """
        ...

    def load(self, task_id: str) -> TaskRecord | None:
        """The record of *task_id*; ``None`` when there is none (or it expired)."""
        ...

    def update(self, task_id: str, change: t.Callable[[TaskRecord], bool]) -> TaskRecord | None:
        """Apply *change* to the record under a lock and keep it when *change* returns true; the record after."""
        ...

    def owned(self, owner: str) -> list[TaskRecord]:
        """The records of *owner*, oldest first."""
        ...

    def request_cancel(self, task_id: str) -> None:
        """Note that *task_id* should stop (read by the running tool's ``ctx.cancelled``)."""
        ...

    def cancel_requested(self, task_id: str) -> bool:
        """Whether :meth:`request_cancel` was called for *task_id*."""
        ...


class TaskRunner(t.Protocol):
    """Runs a task's job somewhere other than the request that created it."""

    def submit(self, task_id: str) -> None:
        """Run the task *task_id* (its record says what) soon, outside the current request."""
        ...


class TaskLimit(MCPError):
    """The caller has as many live tasks as it may (``MCP_TASK_MAX_PER_CALLER``)."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            jsonrpc.RATE_LIMITED,
            f"Too many tasks: at most {limit} of yours may run at once; wait for one to end or cancel one",
            {"limit": limit},
        )


@dataclasses.dataclass
class Tasks:
    """A server's tasks: where they are kept, what runs them, and their limits.

    :param store: the records.
    :param runner: runs the jobs.
    :param ttl_ms: how long a task is kept from its creation (a client's ``ttl`` may ask for less).
    :param poll_interval_ms: how often clients are told to poll.
    :param max_live: how many unfinished tasks one caller may have.
    :param page_size: tasks per page of ``tasks/list``.
    :param heartbeat: seconds between two signs of life of a running task.
    :param lost_after: seconds without one after which a running task is failed as lost
        (its worker died); ``None``: never.
    """

    store: TaskStore
    runner: TaskRunner
    ttl_ms: int = 3_600_000
    poll_interval_ms: int = 500
    max_live: int | None = 100
    page_size: int = 50
    heartbeat: float = 5.0
    lost_after: float | None = 30.0

    def new_record(
        self,
        *,
        era: str,
        tool: str,
        arguments: dict[str, t.Any],
        client: dict[str, t.Any],
        principal: Principal | None,
        session_id: str | None,
        ttl_ms: int | None = None,
        meta: dict[str, t.Any] | None = None,
        answers: dict[str, t.Any] | None = None,
    ) -> TaskRecord:
        """A new record, kept in the store (durably, before the task is announced) and submitted to run."""
        ttl = self.ttl_ms if ttl_ms is None else max(1, min(ttl_ms, self.ttl_ms))
        record = TaskRecord(
            # Long and random: in the modern era a task id is all a request names.
            task_id=secrets.token_urlsafe(24),
            owner=owner_of(principal, session_id),
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
        )
        local = getattr(self.runner, "runs_here", False)
        if local:
            # Queued in this process: alive while the process is, watched from now on.
            record.heartbeat_at = record.created_at
        self.store.create(record, self.max_live)
        self.submit(record.task_id)
        return record

    def submit(self, task_id: str) -> None:
        """Hand *task_id* to the runner; a runner that runs tasks in this process has them watched meanwhile."""
        if getattr(self.runner, "runs_here", False):
            HEARTBEATS.watch(self.store, task_id, self.heartbeat)
        self.runner.submit(task_id)

    def owned_record(self, task_id: t.Any, principal: Principal | None, session_id: str | None) -> TaskRecord:
        """The record of *task_id* when it is the caller's and has not expired.

        :raises MCPError: -32602 otherwise; another caller's task is "not found" as an unknown one is.
        """
        if not isinstance(task_id, str) or not task_id:
            raise MCPError(INVALID_PARAMS, "Invalid params: 'taskId' must be a non-empty string")
        record = self.store.load(task_id)
        if record is None or record.owner != owner_of(principal, session_id) or record.expired(time.time()):
            raise MCPError(INVALID_PARAMS, f"Failed to retrieve task: Task not found: {task_id}")
        return self.alive(record)

    def alive(self, record: TaskRecord) -> TaskRecord:
        """*record*, failed first when the run under way stopped giving signs of life (its worker died)."""
        beat, limit = record.heartbeat_at, self.lost_after
        if record.status != "working" or beat is None or limit is None or time.time() - beat <= limit:
            return record

        def lose(found: TaskRecord) -> bool:
            if found.status != "working" or found.heartbeat_at != beat:
                return False  # it moved on meanwhile
            found.error = {"code": jsonrpc.INTERNAL_ERROR, "message": LOST.format(seconds=limit)}
            found.heartbeat_at = None
            found.moved("failed", found.error["message"])
            return True

        return self.store.update(record.task_id, lose) or record


#: What a task whose worker stopped answering says, in ``statusMessage`` and its error.
LOST = (
    "the worker running this task stopped answering for {seconds:g} s (it was stopped or died); "
    "the task did not finish: call the tool again"
)


def answer(store: TaskStore, task_id: str, responses: dict[str, t.Any]) -> bool:
    """Keep the answers to outstanding questions of *task_id*; whether it may run again now.

    Answers to keys the task is not waiting for are ignored, as the
    extension asks; the task runs again once none is outstanding.
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
            ready = True
        return True

    store.update(task_id, keep)
    return ready


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
) -> None:
    """End *task_id* with *status*, its *result* or *error* (and *message*, by default the error's).

    A task that has already ended is left as it is: one cancelled while its
    tool ran stays cancelled whatever the tool returned.
    """

    def finish(record: TaskRecord) -> bool:
        if record.terminal:
            return False  # cancelled while it ran: it stays cancelled
        record.result = result
        record.error = error.to_dict() if error is not None else None
        record.input_requests = {}
        record.heartbeat_at = None
        record.moved(status, message if message is not None else (error.message if error is not None else None))
        return True

    store.update(task_id, finish)
