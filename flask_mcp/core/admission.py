"""Admitting a caller: its permissions on a component, and a tool call counted against its rate limits."""

from __future__ import annotations

import logging
import typing as t

from ..policies.permissions import ComponentKind, PermissionContext, check_permissions, denied_by
from ..policies.ratelimit import CacheRateLimiter, caller_key, enforce

if t.TYPE_CHECKING:
    from ..components.model import Prompt, Resource, ResourceTemplate, Tool
    from ..policies.principal import Principal
    from .client import Call
    from .server import Server

__all__ = ["admit", "visible"]

logger = logging.getLogger("flask_mcp")

Component = t.Union["Tool", "Resource", "ResourceTemplate", "Prompt"]


def admit(server: Server, call: Call, kind: ComponentKind, component: Component, arguments: t.Any = None) -> None:
    """Check the caller may use *component*, and count a tool call against its rate limits.

    Runs before the arguments are validated. With no permissions and no
    limit it costs a few attribute reads and no cache round trip.

    :raises MCPError: :data:`~flask_mcp.protocol.jsonrpc.PERMISSION_DENIED` or
        :data:`~flask_mcp.protocol.jsonrpc.RATE_LIMITED`.
    """
    permissions = component.permissions
    if permissions is None:
        permissions = server.default_permissions
    if permissions:
        check_permissions(permissions, PermissionContext(call.principal, component, kind, arguments))
    if kind == "tool" and (server.rate_limit is not None or t.cast("Tool", component).rate_limit is not None):
        _limit_tool(server, call, t.cast("Tool", component))


def visible(server: Server, principal: Principal | None, kind: ComponentKind, component: Component) -> bool:
    """Whether a filtered listing shows *component* to *principal*."""
    permissions = component.permissions
    if permissions is None:
        permissions = server.default_permissions
    if component.always_listed or not permissions:
        return True
    return not denied_by(permissions, PermissionContext(principal, component, kind))


def _limit_tool(server: Server, call: Call, tool: Tool) -> None:
    limiter = server.limiter
    if limiter is None:
        # A limit without a shared cache (a stateless app that gave none):
        # counted in this process only, which is the best that can be done.
        logger.warning("rate limits are counted per process: no shared cache was given")
        limiter = server.limiter = CacheRateLimiter.in_process()
    who = caller_key(call.principal, server.client_key)
    if server.rate_limit is not None:
        enforce(limiter, f"*:{who}", server.rate_limit, "tool calls")
    if tool.rate_limit is not None:
        enforce(limiter, f"tool:{tool.name}:{who}", tool.rate_limit, f"tool {tool.name}")
