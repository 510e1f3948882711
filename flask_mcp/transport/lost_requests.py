"""Telling a resumed stream that its request died with the worker running it.

A client resumes a request's event stream (``GET`` with ``Last-Event-ID``)
in whichever process it reaches. If the worker running the request was
killed, nothing more will ever be logged for that stream: without this, the
resumed stream would stay open, empty, until its idle timeout, and then the
client would resume it again. Instead, once the request is known lost (its
in-flight marker expired and no response was logged), the stream ends with
a JSON-RPC error for that request, which the client can retry.
"""

from __future__ import annotations

import typing as t

from ..protocol import jsonrpc
from ..protocol.jsonrpc import MCPError
from ..stores.events import BROADCAST, GAP_GRACE

if t.TYPE_CHECKING:
    from ..binding.state import MCPState
    from ..stores.events import EventLog

__all__ = ["LOST_MESSAGE", "LostRequest"]

#: What the error that ends a lost request's stream says.
LOST_MESSAGE = "the request was lost with its worker; retry"


class LostRequest:
    """Tells, for a resumed stream of a request, whether that request is still running anywhere.

    A live worker keeps the request's in-flight marker (:class:`~flask_mcp.stores.mailbox.Mailbox`);
    when the marker is gone and no response was logged, the request died with
    its worker, and the stream will never bring anything more. A worker that
    finishes gives the marker back a moment before it logs the response, so
    the marker must stay gone for :data:`~flask_mcp.stores.events.GAP_GRACE`
    seconds, and the log be read once more, before the request counts as lost.
    """

    def __init__(self, state: MCPState, session_id: str, stream: str, request_id: t.Any, marker: str) -> None:
        self.state = state
        self.session_id = session_id
        self.stream = stream
        self.request_id = request_id
        self.marker = marker
        #: The marker's value as last read (``None``: gone).
        self.present: t.Any = True
        #: Since when (monotonic) the marker has been seen gone.
        self.missing_since: float | None = None

    @classmethod
    def of(cls, state: MCPState, session_id: str, stream: str) -> LostRequest | None:
        """The watch of *stream*'s request, or ``None`` for a stream that carries no request (or is unknown)."""
        if stream == BROADCAST or state.events is None or state.mailbox is None:
            return None
        carried = state.events.carried(session_id, stream)
        if carried is None:
            return None
        request_id = carried["request"]
        return cls(state, session_id, stream, request_id, state.mailbox.inflight_key(session_id, request_id))

    def look(self, now: float, behind: bool) -> bool | None:
        """``True``: the request is lost; ``False``: it ended without a response (cancelled); ``None``: wait on.

        :param behind: the stream's reader waits for an event counted but not yet stored.
        """
        events = t.cast("EventLog", self.state.events)
        self.present = events.cache.get(self.marker)
        if self.present is not None or behind:
            self.missing_since = None
            return None
        if self.missing_since is None:
            self.missing_since = now
            return None
        if now - self.missing_since < GAP_GRACE:
            return None
        carried = events.carried(self.session_id, self.stream)
        return not (carried is not None and carried.get("ended"))

    def failure(self) -> dict[str, t.Any]:
        """The JSON-RPC error that ends the stream of a lost request."""
        error = MCPError(
            jsonrpc.INTERNAL_ERROR,
            LOST_MESSAGE,
            {"reason": "request_lost", "requestId": self.request_id},
        )
        return jsonrpc.failure(self.request_id, error)
