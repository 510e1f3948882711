"""A client as the core sees it: what the server remembers of it, and its request being handled.

A transport keeps a :class:`ClientState` per client (in a session, or fresh
for each stateless request) and hands it to
:meth:`~flask_mcp.core.server.Server.handle`, which wraps each request in a
:class:`Call` for its method handler.
"""

from __future__ import annotations

import dataclasses
import typing as t

from ..policies.ratelimit import caller_key
from ..protocol import jsonrpc
from ..protocol.jsonrpc import MCPError
from ..protocol.versions import DEFAULT_NEGOTIATED_VERSION, MODERN_PROTOCOL_VERSIONS
from .audit import Surface
from .context import Channel, Context
from .subscriptions import LocalSubscriptions, Subscriptions

if t.TYPE_CHECKING:
    from ..policies.principal import Principal
    from .approval import Approval
    from .rounds import Answers
    from .server import Server

__all__ = ["Call", "ClientState"]


@dataclasses.dataclass
class ClientState:
    """What the server remembers about one client between messages.

    A transport loads it (from a session, or fresh for stateless requests),
    passes it to :meth:`Server.handle` and stores it back when
    :attr:`changed` is true.
    """

    protocol_version: str = DEFAULT_NEGOTIATED_VERSION
    client_info: dict[str, t.Any] | None = None
    capabilities: dict[str, t.Any] = dataclasses.field(default_factory=dict)
    log_level: str | None = None
    #: Resource URIs the client subscribed to; not persisted with the rest
    #: (the transport supplies a store-backed set for sessions).
    subscriptions: Subscriptions = dataclasses.field(default_factory=LocalSubscriptions, compare=False)
    #: Set by handlers that modified the state; not persisted.
    changed: bool = dataclasses.field(default=False, compare=False)
    #: The transport's session id, if any; not persisted.
    session_id: str | None = dataclasses.field(default=None, compare=False)
    #: Where the client's calls come in (``"mcp"``, ``"stdio"``, ``"cli"``), as the audit trail records it;
    #: set by the transport, not persisted.
    surface: Surface = dataclasses.field(default="mcp", compare=False)

    @property
    def modern(self) -> bool:
        """Whether this client speaks a modern-era revision (2026-07-28 and later), request by request."""
        return self.protocol_version in MODERN_PROTOCOL_VERSIONS

    def to_dict(self) -> dict[str, t.Any]:
        """Compact form for storage; empty members are left out."""
        data: dict[str, t.Any] = {"v": self.protocol_version}
        if self.client_info:
            data["i"] = self.client_info
        if self.capabilities:
            data["c"] = self.capabilities
        if self.log_level:
            data["l"] = self.log_level
        return data

    @classmethod
    def from_dict(cls, data: dict[str, t.Any], subscriptions: Subscriptions | None = None) -> ClientState:
        """Inverse of :meth:`to_dict`.

        :param subscriptions: the client's subscriptions (kept apart from the
            record); new, empty ones in this process when not given.
        """
        return cls(
            data.get("v", DEFAULT_NEGOTIATED_VERSION),
            data.get("i"),
            data.get("c") or {},
            data.get("l"),
            LocalSubscriptions() if subscriptions is None else subscriptions,
        )


@dataclasses.dataclass
class Call:
    """One request being handled, as a method handler sees it."""

    server: Server
    state: ClientState
    method: str
    params: dict[str, t.Any]
    request_id: jsonrpc.RequestId | None = None
    #: The transport's way back to the client while the request runs.
    channel: Channel | None = None
    #: The authenticated caller, when the transport has an auth backend.
    principal: Principal | None = None
    #: The answers a modern ``tools/call``, ``prompts/get`` or ``resources/read`` brought
    #: (:mod:`flask_mcp.core.rounds`); ``None`` in the handshake era.
    round: Answers | None = None
    #: The tool, resource or prompt the request resolved to, once its handler found it.
    component: t.Any = None
    #: ``"hit"`` or ``"miss"`` for a call of a tool whose results are cached (:mod:`flask_mcp.core.result_cache`).
    cache_outcome: str | None = None
    #: Whether kept results may answer this call and its result be kept: not for a direct call
    #: (REST, CGI, the CLI), which answers the tool's plain value, not the ``CallToolResult`` kept.
    cacheable: bool = True
    #: ``(arguments digest, caller)`` of a call that missed the cache, to keep its result under;
    #: cleared when the run asks the client something the key cannot hold (:mod:`flask_mcp.core.result_cache`).
    cache_key: tuple[str, str] | None = None
    #: What became of the human's approval of this call (:mod:`flask_mcp.core.approval`), once asked.
    approval: Approval | None = None

    @property
    def caller(self) -> str:
        """Whose budgets and store quotas this request spends: the principal, else the client's address.

        See :func:`~flask_mcp.policies.ratelimit.caller_key`.
        """
        return caller_key(self.principal, self.server.client_key)

    def context(self) -> Context:
        """A :class:`~flask_mcp.Context` for the handler of this request."""
        return Context(self, self.channel, self.server.client_request_timeout)

    def param(self, name: str, kind: type | tuple[type, ...], *, required: bool = True) -> t.Any:
        """Return ``params[name]`` checked against *kind*, or raise -32602."""
        if name not in self.params or self.params[name] is None:
            if required:
                raise MCPError(jsonrpc.INVALID_PARAMS, f"Invalid params: missing '{name}'")
            return None
        value = self.params[name]
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
            names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
            raise MCPError(jsonrpc.INVALID_PARAMS, f"Invalid params: '{name}' must be of type {names}")
        return value
