"""How many handlers of one caller wait in this process for that caller's answers.

A handler that asks the client something in a handshake session
(``ctx.elicit``, ``ctx.sample``, ``ctx.list_roots``) waits for the answer
for up to ``MCP_CLIENT_REQUEST_TIMEOUT`` seconds, and holds a thread of this
process meanwhile: the request's own (inline) or one of its own
(``MCP_STREAM_THREADS``). A caller that starts such calls and never answers,
or leaves, would otherwise hold every thread, and the server would stop
answering anybody else. So one caller (its principal, else its address) has
at most ``MCP_MAX_WAITING_PER_CALLER`` handlers waiting at once in a
process; the next question fails at once with a
:class:`~flask_mcp.core.context.NoAnswer` that says so, which the tool may
handle like any question left unanswered. This is a count of this process's
own threads, so it lives in process memory (like ``MCP_MAX_STREAMS``): no
other process's threads are at stake.
"""

from __future__ import annotations

import threading

__all__ = ["WaitingSlots"]


class WaitingSlots:
    """The handlers of each caller waiting for its answers in this process, at most *limit* a caller.

    :param limit: ``MCP_MAX_WAITING_PER_CALLER``.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        # Only callers with a handler waiting have an entry: at most one a waiting thread.
        self._held: dict[str, int] = {}
        self._lock = threading.Lock()

    def take(self, caller: str) -> bool:
        """One more handler of *caller* waits; ``False`` (nothing taken): it has :attr:`limit` waiting already."""
        with self._lock:
            held = self._held.get(caller, 0)
            if held >= self.limit:
                return False
            self._held[caller] = held + 1
            return True

    def give_back(self, caller: str) -> None:
        """A handler of *caller* is done waiting."""
        with self._lock:
            held = self._held.get(caller, 0) - 1
            if held > 0:
                self._held[caller] = held
            else:
                self._held.pop(caller, None)

    def waiting(self, caller: str) -> int:
        """How many handlers of *caller* wait now."""
        with self._lock:
            return self._held.get(caller, 0)
