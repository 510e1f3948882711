"""One ``subscriptions/listen`` stream, as the protocol sees it (2026-07-28).

A transport keeps the stream open and feeds it the server's change
notifications (from every process, through the store); this class says
which of them the client asked for and how each is written: every message
carries ``_meta["io.modelcontextprotocol/subscriptionId"]``, the listen
request's id with its JSON type, so a client can hold several streams.
"""

from __future__ import annotations

import typing as t

from ..protocol import jsonrpc
from ..protocol.envelope import SUBSCRIPTION_ID

__all__ = ["ACKNOWLEDGED", "Subscription"]

#: The first message of every listen stream.
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"

#: Change notification -> the filter flag that asks for it.
_FLAG_OF = {
    "notifications/tools/list_changed": "toolsListChanged",
    "notifications/prompts/list_changed": "promptsListChanged",
    "notifications/resources/list_changed": "resourcesListChanged",
}


class Subscription:
    """What one listen stream delivers.

    :param request_id: the listen request's id, echoed in every message.
    :param accepted: the filter the server accepted (``listen``'s result).
    """

    def __init__(self, request_id: jsonrpc.RequestId, accepted: dict[str, t.Any]) -> None:
        self.request_id = request_id
        self.accepted = accepted
        self._uris = frozenset(accepted.get("resourceSubscriptions") or ())

    def _meta(self) -> dict[str, t.Any]:
        return {SUBSCRIPTION_ID: self.request_id}

    def acknowledgement(self) -> dict[str, t.Any]:
        """The ``notifications/subscriptions/acknowledged`` message."""
        params = {"notifications": self.accepted, "_meta": self._meta()}
        return {"jsonrpc": "2.0", "method": ACKNOWLEDGED, "params": params}

    def wants(self, message: dict[str, t.Any]) -> bool:
        """Whether the change notification *message* is one this stream asked for."""
        method = message.get("method")
        if method == "notifications/resources/updated":
            params = message.get("params") or {}
            return params.get("uri") in self._uris
        flag = _FLAG_OF.get(method)  # type: ignore[arg-type]
        return flag is not None and self.accepted.get(flag) is True

    def tagged(self, message: dict[str, t.Any]) -> dict[str, t.Any]:
        """*message* with this stream's subscription id in its ``params._meta``."""
        params = dict(message.get("params") or {})
        params["_meta"] = {**(params.get("_meta") or {}), **self._meta()}
        return {"jsonrpc": "2.0", "method": message["method"], "params": params}

    def closing(self) -> dict[str, t.Any]:
        """The response that ends the stream gracefully."""
        return jsonrpc.success(self.request_id, {"resultType": "complete", "_meta": self._meta()})
