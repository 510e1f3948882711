"""The routes one server adds to an app when its blueprint is registered: the endpoint and what serves beside it."""

from __future__ import annotations

import typing as t

from ..transport import approval_page, health, rest
from ..transport.bad_host import answer_bad_hosts
from ..transport.http import endpoint_of
from ..transport.metadata import register_metadata_routes
from ..transport.rules import add_rule
from . import servers

if t.TYPE_CHECKING:
    from flask import Flask

    from .state import MCPState

__all__ = ["add_server_routes"]


def add_server_routes(app: Flask, state: MCPState, blueprint: str, path: str, subdomain: str | None) -> None:
    """Route *path* to the endpoint of *state*'s server, and add its REST, approval, health and metadata routes.

    :param blueprint: the registered blueprint's full name (the prefix of the endpoints' names).
    :raises RuntimeError: *path* is another server's already.
    """
    servers.check_path_free(app, state, path)
    # The rule takes every HTTP method (transport.rules), so the view answers
    # PUT, TRACE and the like with a JSON 405 itself instead of werkzeug's
    # HTML page; Blueprint.add_url_rule cannot express "any method".
    served = ("POST", "OPTIONS") if state.settings.stateless else ("GET", "POST", "DELETE", "OPTIONS")
    add_rule(app, path, f"{blueprint}.endpoint", endpoint_of(state), served, subdomain=subdomain)
    # Requests to this blueprint's routes are this server's (globals.current_state).
    servers.routed(app, state, blueprint, path)
    # A Host the router cannot use fails before any view or blueprint handler (transport.bad_host).
    answer_bad_hosts(app, servers.serves_path)
    # The REST routes live at MCP_REST_PREFIX, an absolute path, whichever way the blueprint was registered.
    rest.add_routes(app, state, blueprint, path)
    # Where the signed-in user approves a call of a tool marked confirm (URL mode).
    approval_page.add_route(app, blueprint, path)
    # What a load balancer asks: serving, or up with its store away (transport.health).
    health.add_route(app, blueprint, path)
    if state.auth is not None:
        register_metadata_routes(app, state, blueprint, path)
