"""MCP method handlers, one module per feature, and the table that routes to them.

A handler takes a :class:`flask_mcp.core.server.Call` and returns the ``result``
object, or raises :class:`flask_mcp.MCPError`. Adding a method is
writing its function in the module of its feature and naming it in
:data:`HANDLERS` (or :data:`NOTIFICATION_HANDLERS`) below: the table is
explicit, so what the server answers can be read in one place.
"""

from __future__ import annotations

import typing as t

from . import completion, discover, lifecycle, prompts, resources, skills, subscriptions, tasks, tools

if t.TYPE_CHECKING:
    from ..client import Call

__all__ = ["HANDLERS", "MODERN_HANDLERS", "NOTIFICATION_HANDLERS"]

Handler = t.Callable[["Call"], dict[str, t.Any]]
NotificationHandler = t.Callable[["Call"], None]

#: Request method name -> handler, in the handshake era (2025-11-25 and older).
HANDLERS: dict[str, Handler] = {
    "initialize": lifecycle.initialize,
    "ping": lifecycle.ping,
    "logging/setLevel": lifecycle.set_level,
    "tools/list": tools.list_tools,
    "tools/call": tools.call_tool,
    "resources/list": resources.list_resources,
    "resources/templates/list": resources.list_templates,
    "resources/read": resources.read_resource,
    "resources/subscribe": resources.subscribe,
    "resources/unsubscribe": resources.unsubscribe,
    "prompts/list": prompts.list_prompts,
    "prompts/get": prompts.get_prompt,
    "completion/complete": completion.complete,
    "tasks/get": tasks.get_task,
    "tasks/result": tasks.task_result,
    "tasks/list": tasks.list_tasks,
    "tasks/cancel": tasks.cancel_task,
    "skills/list": skills.list_skills,
    "skills/get": skills.get_skill,
    "resources/directory/read": skills.read_directory,
}

#: Request method name -> handler, in the modern era (2026-07-28): no handshake, no
#: ping, no log level, no per-resource subscriptions; discovery and listen streams instead.
#: The handlers are the handshake era's where the method is the same: the era shows in
#: the request (:class:`~flask_mcp.core.client.ClientState.modern`), not in the code.
MODERN_HANDLERS: dict[str, Handler] = {
    "server/discover": discover.discover,
    "tools/list": tools.list_tools,
    "tools/call": tools.call_tool,
    "resources/list": resources.list_resources,
    "resources/templates/list": resources.list_templates,
    "resources/read": resources.read_resource,
    "prompts/list": prompts.list_prompts,
    "prompts/get": prompts.get_prompt,
    "completion/complete": completion.complete,
    "subscriptions/listen": subscriptions.listen,
    "tasks/get": tasks.modern_get_task,
    "tasks/update": tasks.update_task,
    "tasks/cancel": tasks.modern_cancel_task,
    "skills/list": skills.list_skills,
    "skills/get": skills.get_skill,
    "resources/directory/read": skills.read_directory,
}

#: Notification method name -> handler. Unknown notifications are ignored.
NOTIFICATION_HANDLERS: dict[str, NotificationHandler] = {
    "notifications/initialized": lifecycle.initialized,
    "notifications/cancelled": lifecycle.cancelled,
}
