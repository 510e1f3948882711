"""Several MCP servers on one app: keeping them apart, and knowing which one a request is for.

Each :class:`~flask_mcp.MCP` set up on an app has a state of its own
(:class:`~flask_mcp.binding.state.MCPState`), kept in the app's
:class:`~flask_mcp.globals.Servers`; the first one is also the app's default
(``app.extensions["mcp"]``). What two servers must not share is refused
when the second is set up, with what to change: a configuration prefix,
a blueprint name, a URL.
"""

from __future__ import annotations

import typing as t

from ..config.prefix import DEFAULT_PREFIX, derived_prefix, spelled
from ..globals import EXTENSION_KEY, SERVERS_KEY, Servers

if t.TYPE_CHECKING:
    from flask import Flask

    from ..extension import MCP
    from .state import MCPState

__all__ = ["add", "check_another", "check_path_free", "config_prefix_on", "routed", "serves_path"]


def config_prefix_on(app: Flask, mcp: MCP) -> str:
    """The prefix of the keys *mcp* reads on *app*: its ``config_prefix``; without one ``MCP`` when no
    server of *app* reads ``MCP_*`` yet, else the prefix derived from its blueprint name (``ADMIN_MCP``).

    :raises RuntimeError: none can be derived from the blueprint name.
    """
    if mcp.config_prefix is not None:
        return mcp.config_prefix
    servers: Servers | None = app.extensions.get(SERVERS_KEY)
    if servers is None or all(state.settings.config_prefix != DEFAULT_PREFIX for state in servers.by_name.values()):
        return DEFAULT_PREFIX
    derived = derived_prefix(mcp.blueprint.name)
    if derived is None:
        raise RuntimeError(
            f"no config_prefix can be derived from the blueprint name {mcp.blueprint.name!r} of this further MCP "
            'server: give it one, for example MCP(config_prefix="ADMIN_MCP", ...)'
        )
    return derived


def check_another(app: Flask, mcp: MCP, prefix: str) -> None:
    """Refuse to set *mcp* up, reading the keys of *prefix*, beside a server of *app* that has its
    configuration prefix or blueprint name.

    :raises RuntimeError: saying what the new server needs of its own.
    """
    servers: Servers | None = app.extensions.get(SERVERS_KEY)
    if servers is None:
        return
    for state in servers.by_name.values():
        if state.mcp.blueprint.name == mcp.blueprint.name:
            raise RuntimeError(
                f"another MCP extension with the blueprint name {mcp.blueprint.name!r} is already set up on this "
                'app: give this one its own, MCP(blueprint_name="admin"), from which its config_prefix '
                "(ADMIN_MCP) is derived"
            )
        if state.settings.config_prefix == prefix:
            raise RuntimeError(
                f"another MCP extension reading the {prefix}_* keys is already set up on this app: give each "
                "further server its own blueprint_name, from which its config_prefix is derived "
                '(MCP(blueprint_name="admin") reads ADMIN_MCP_*), or a config_prefix of its own'
            )


def add(app: Flask, state: MCPState) -> None:
    """Keep *state* among *app*'s servers; the first one set up is the default."""
    servers: Servers = app.extensions.setdefault(SERVERS_KEY, Servers())
    servers.by_name[state.mcp.blueprint.name] = state
    app.extensions.setdefault(EXTENSION_KEY, state)


def check_path_free(app: Flask, state: MCPState, path: str) -> None:
    """Refuse a second server endpoint at a path another server's endpoint already has.

    :raises RuntimeError: naming the key that moves it.
    """
    for other in app.extensions[SERVERS_KEY].by_name.values():
        if other is not state and other.endpoint_path == path:
            key = spelled("MCP_URL_PREFIX", state.settings.config_prefix)
            raise RuntimeError(
                f"the MCP server {state.mcp.blueprint.name!r} would be routed at {path!r}, where the server "
                f"{other.mcp.blueprint.name!r} already is: set {key} (or register its blueprint elsewhere)"
            )


def routed(app: Flask, state: MCPState, blueprint: str, path: str) -> None:
    """Note that requests to the routes of *blueprint* (full dotted name) are *state*'s, its endpoint at *path*."""
    app.extensions[SERVERS_KEY].by_blueprint[blueprint] = state
    if state.endpoint_path is None:
        state.endpoint_path = path


def serves_path(app: Flask, path: str) -> bool:
    """Whether *path* is one of *app*'s MCP servers': its endpoint, or one of its REST routes.

    Paths below the endpoint are the app's (an endpoint at ``/`` has every path below it).
    """
    servers: Servers | None = app.extensions.get(SERVERS_KEY)
    for state in servers.by_name.values() if servers is not None else ():
        if path == state.endpoint_path or (state.rest_site is not None and state.rest_site.serves(path)):
            return True
    return False
