"""``resources/list``, ``resources/templates/list`` and ``resources/read``."""

from __future__ import annotations

import logging
import typing as t

import marshmallow as ma

from ...components.model import ResourceTemplate
from ...protocol.errors import NotFoundError, describe_validation_error
from ...protocol.jsonrpc import INVALID_PARAMS, RESOURCE_NOT_FOUND, MCPError
from ...results.convert import resource_contents
from ...results.spill import spill_token
from .listing import list_page

if t.TYPE_CHECKING:
    from ..server import Call

logger = logging.getLogger("flask_mcp")


def not_found(uri: str) -> MCPError:
    """The -32002 error for a URI no resource answers to."""
    return MCPError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}", {"uri": uri})


def list_resources(call: Call) -> dict[str, t.Any]:
    """One page of static resources."""
    return list_page(call, "resources")


def list_templates(call: Call) -> dict[str, t.Any]:
    """One page of resource templates."""
    return list_page(call, "templates")


def read_resource(call: Call) -> dict[str, t.Any]:
    """Read a static resource, or the first template that matches the URI.

    A handler signals a missing item by raising
    :class:`~flask_mcp.NotFoundError` (``flask.abort(404)`` does that too);
    the client gets -32002 with the URI in ``data``.
    """
    uri = call.server.bounded_uri(call.param("uri", str))
    token = spill_token(uri)
    if token is not None:
        return _read_spilled(call, uri, token)
    found = call.server.registry.find_resource(uri)
    if found is None:
        raise not_found(uri)
    resource, variables = found
    call.server.admit(call, "resource", resource, variables)
    kwargs: dict[str, t.Any] = {}
    if isinstance(resource, ResourceTemplate):
        try:
            kwargs = resource.load_variables(variables)
        except ma.ValidationError as exc:
            raise MCPError(INVALID_PARAMS, f"Invalid params: {describe_validation_error(exc)}", {"uri": uri}) from None
    if resource.context_param:
        kwargs[resource.context_param] = call.context()
    try:
        value = call.server.invoke(resource.func, kwargs)
    except NotFoundError:
        raise not_found(uri) from None
    return {"contents": resource_contents(value, uri, resource.mime_type, resource.output_schema)}


def _read_spilled(call: Call, uri: str, token: str) -> dict[str, t.Any]:
    # A tool's oversized result, kept for the session that produced it.
    store = call.server.result_store
    stored = store.get(token, call.state.session_id) if store is not None else None
    if stored is None:
        raise not_found(uri)
    text, mime_type = stored
    return {"contents": [{"uri": uri, "mimeType": mime_type, "text": text}]}


def subscribe(call: Call) -> dict[str, t.Any]:
    """Remember that the client wants ``notifications/resources/updated`` for a URI."""
    uri = call.server.bounded_uri(call.param("uri", str))
    limit = call.server.max_subscriptions
    if not call.state.subscriptions.add(uri, limit):
        raise MCPError(
            INVALID_PARAMS,
            f"Invalid params: this session has {limit} subscriptions, the most allowed; unsubscribe from one first",
        )
    return {}


def unsubscribe(call: Call) -> dict[str, t.Any]:
    """Stop the updates for a URI."""
    call.state.subscriptions.discard(call.server.bounded_uri(call.param("uri", str)))
    return {}
