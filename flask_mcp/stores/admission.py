"""Whether a new session may be created: the caller's quota, then the store's room.

Sessions are the one thing a client can make the server keep for an hour
with a single request. Without a bound, a flood of ``initialize`` from one
client fills the session store until the store evicts, and then other
clients lose their sessions. Two checks run before a session is stored, so
the store never gets there:

* every caller (the authenticated principal, else the remote address) has a
  budget of new sessions (``MCP_SESSION_RATE_LIMIT``): past it, HTTP 429;
* the store must have room (:mod:`flask_mcp.stores.capacity`, ``MCP_MAX_SESSIONS``
  and ``MCP_STORE_HIGH_WATER``): when it has none, HTTP 503.

Both answers carry ``Retry-After``. The defaults are far above what an
ordinary client or the conformance suites need from one address.
"""

from __future__ import annotations

import typing as t

from ..policies.ratelimit import enforce
from ..protocol.jsonrpc import SERVICE_UNAVAILABLE, MCPError

if t.TYPE_CHECKING:
    from ..policies.ratelimit import Limit, RateLimiter
    from .capacity import Capacity

__all__ = ["SessionAdmission"]


class SessionAdmission:
    """The checks a transport runs before it creates a session.

    :param limiter: counts new sessions per caller; ``None`` skips the quota.
    :param limit: each caller's budget of new sessions; ``None`` for none.
    :param capacity: the store's probe; ``None`` when the backend has none.
    :param retry_after: seconds a client refused for lack of room is told to wait.
    """

    def __init__(
        self,
        limiter: RateLimiter | None,
        limit: Limit | None,
        capacity: Capacity | None,
        *,
        retry_after: int = 30,
    ) -> None:
        self.limiter = limiter
        self.limit = limit
        self.capacity = capacity
        self.retry_after = retry_after

    def admit(self, caller: str) -> None:
        """Count one new session for *caller* (see :func:`~flask_mcp.policies.ratelimit.caller_key`).

        :raises MCPError: :data:`~flask_mcp.protocol.jsonrpc.RATE_LIMITED` past the
            caller's budget, :data:`~flask_mcp.protocol.jsonrpc.SERVICE_UNAVAILABLE`
            when the store has no room; both with ``data.retryAfter``.
        """
        if self.limiter is not None and self.limit is not None:
            enforce(self.limiter, f"session:{caller}", self.limit, "new sessions")
        if self.capacity is not None and not self.capacity.has_room():
            raise MCPError(
                SERVICE_UNAVAILABLE,
                f"Service Unavailable: the server holds as many sessions as it can; retry in {self.retry_after} s",
                {"retryAfter": self.retry_after},
            )
