"""Running a tool function: inside a transaction when it is atomic, within its time limit.

Both wrappers are only applied to tools that ask for them, so an ordinary
call is exactly one function call.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import typing as t

from ..protocol.errors import ToolError

__all__ = ["ToolTimeout", "Transaction", "in_transaction", "with_timeout"]

#: What ``MCP(transaction=...)`` accepts: a session-like object with
#: ``commit()`` and ``rollback()`` (Flask-SQLAlchemy's ``db.session``), or a
#: callable returning a context manager that commits on success and rolls
#: back on an exception (``lambda: db.session.begin()``, ``transaction.atomic``).
Transaction = t.Any


class ToolTimeout(ToolError):
    """A tool did not finish within its ``timeout``."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the tool did not finish within {seconds:g} seconds and was abandoned")
        self.seconds = seconds


def in_transaction(transaction: Transaction, run: t.Callable[[], t.Any]) -> t.Any:
    """Call *run* inside *transaction*: committed when it returns, rolled back when it raises."""
    if hasattr(transaction, "commit") and hasattr(transaction, "rollback"):
        try:
            value = run()
        except BaseException:
            transaction.rollback()
            raise
        transaction.commit()
        return value
    manager = transaction()
    if not isinstance(manager, contextlib.AbstractContextManager) and not hasattr(manager, "__exit__"):
        raise TypeError(f"the transaction hook must return a context manager, not {manager!r}")
    with manager:
        return run()


def with_timeout(seconds: float, run: t.Callable[[], t.Any]) -> t.Any:
    """Call *run* in a worker thread and wait at most *seconds* for it.

    The worker runs in a copy of the caller's context variables, so Flask's
    application and request contexts (context variables since Flask 2.3)
    are there as usual. Python cannot stop a thread: on time-out the call is
    answered at once and the worker is abandoned to finish on its own; a
    tool that should stop early checks :attr:`~flask_mcp.Context.cancelled`
    or its own deadline.

    :raises ToolTimeout: when *run* has not returned in time.
    """
    outcome: list[t.Any] = []
    failure: list[BaseException] = []
    context = contextvars.copy_context()

    def work() -> None:
        try:
            outcome.append(context.run(run))
        except BaseException as exc:  # handed to the waiting caller, raised there
            failure.append(exc)

    worker = threading.Thread(target=work, name="mcp-tool", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise ToolTimeout(seconds)
    if failure:
        raise failure[0]
    return outcome[0]
