"""marshmallow schemas of the MCP messages the server accepts.

Every request's ``params`` are checked by :func:`validate_params` before its
method handler runs (:meth:`flask_mcp.core.server.Server.handle` calls it), so a
mistyped or missing parameter of *any* method gets the same -32602 error,
naming each offending field::

    {"code": -32602,
     "message": "Invalid params: name: Not a valid string.",
     "data": {"fields": {"name": ["Not a valid string."]}}}

The schemas follow the MCP schema: ``_meta`` (an object) is accepted
everywhere, keys a schema does not declare are kept (the specification lets
clients add members), declared ones are type-checked, and an optional member
may be ``null``, which handlers treat as absent. Free-form objects such as
``tools/call``'s ``arguments`` only have to be objects: their own keys are
checked by the tool's input schema.
"""

from __future__ import annotations

import typing as t

import marshmallow as ma
from marshmallow import fields, validate, validates_schema
from marshmallow.types import ErrorMessages

from ..schemas.fields import ObjectField, OpenSchema
from ..schemas.hints import JSONBoolean
from .errors import describe_validation_error
from .jsonrpc import ID_BOUNDS, INVALID_PARAMS, MCPError, is_request_id
from .versions import LOG_LEVELS

__all__ = [
    "NOTIFICATION_SCHEMAS",
    "PARAMS_SCHEMAS",
    "CancelledParamsSchema",
    "CompleteParamsSchema",
    "CompletionArgumentSchema",
    "CompletionContextSchema",
    "GetPromptParamsSchema",
    "ImplementationSchema",
    "InitializeParamsSchema",
    "InputResponseParamsSchema",
    "ListenParamsSchema",
    "PaginatedParamsSchema",
    "ReferenceSchema",
    "RequestIdField",
    "RequestParamsSchema",
    "ResourceParamsSchema",
    "SetLevelParamsSchema",
    "SubscriptionFilterSchema",
    "ToolCallSchema",
    "validate_notification_params",
    "validate_params",
]


class RequestIdField(fields.Field):  # type: ignore[type-arg]
    """A JSON-RPC request id, within the bounds :func:`flask_mcp.protocol.jsonrpc.is_request_id` sets."""

    # marshmallow merges these along the MRO, as a class attribute.
    default_error_messages: ErrorMessages = {"invalid": f"Not a valid request id: {ID_BOUNDS}."}  # noqa: RUF012

    def _deserialize(self, value: t.Any, attr: str | None, data: t.Any, **kwargs: t.Any) -> t.Any:
        if not is_request_id(value):
            raise self.make_error("invalid")
        return value


class RequestParamsSchema(OpenSchema):
    """The params every request may have: only ``_meta`` (``progressToken`` and the like).

    Used as is by ``ping``.
    """

    _meta = fields.Dict(allow_none=True)


class ImplementationSchema(OpenSchema):
    """``clientInfo`` of ``initialize``: the client's ``name`` and ``version``.

    ``version`` may be left out: the server only stores it, and refusing the
    handshake of a client that forgot it would help nobody.
    """

    name = fields.String(required=True)
    version = fields.String(allow_none=True)
    title = fields.String(allow_none=True)


class InitializeParamsSchema(RequestParamsSchema):
    """``initialize``: the requested ``protocolVersion``, capabilities and client info.

    ``capabilities`` and ``clientInfo`` are optional here, as the server has
    always accepted clients that leave them out.
    """

    protocolVersion = fields.String(required=True)  # the wire names
    capabilities = fields.Dict(allow_none=True)
    clientInfo = ObjectField(ImplementationSchema, allow_none=True)


class PaginatedParamsSchema(RequestParamsSchema):
    """The ``*/list`` methods: an optional opaque ``cursor``."""

    cursor = fields.String(allow_none=True)


class InputResponseParamsSchema(RequestParamsSchema):
    """The retry of a request that answered ``input_required`` (2026-07-28).

    ``inputResponses`` maps the keys of the server's input requests to the
    client's answers (each answer is checked against what was asked when
    the handler reads it); ``requestState`` is the server's sealed state,
    echoed unchanged.
    """

    inputResponses = fields.Dict(keys=fields.String())  # the wire names
    requestState = fields.String()


class ToolCallSchema(InputResponseParamsSchema):
    """``tools/call``: the tool ``name`` and its ``arguments``.

    ``arguments`` must be an object; its keys are free, as only the tool's
    own input schema knows them.
    """

    name = fields.String(required=True)
    arguments = fields.Dict(allow_none=True)


class ResourceParamsSchema(InputResponseParamsSchema):
    """``resources/read``, ``resources/subscribe`` and ``resources/unsubscribe``: the ``uri``."""

    uri = fields.String(required=True)


class GetPromptParamsSchema(InputResponseParamsSchema):
    """``prompts/get``: the prompt ``name`` and its ``arguments`` object.

    The argument values are checked by the prompt's own schema.
    """

    name = fields.String(required=True)
    arguments = fields.Dict(allow_none=True)


class SubscriptionFilterSchema(OpenSchema):
    """``notifications`` of ``subscriptions/listen``: which change notifications the client wants."""

    toolsListChanged = JSONBoolean()  # the wire names
    promptsListChanged = JSONBoolean()
    resourcesListChanged = JSONBoolean()
    resourceSubscriptions = fields.List(fields.String())


class ListenParamsSchema(RequestParamsSchema):
    """``subscriptions/listen`` (2026-07-28): the ``notifications`` filter."""

    notifications = ObjectField(SubscriptionFilterSchema, required=True)


class TaskParamsSchema(RequestParamsSchema):
    """``tasks/get``, ``tasks/result`` and ``tasks/cancel``: the ``taskId``."""

    taskId = fields.String(required=True)  # the wire name


class TaskUpdateParamsSchema(TaskParamsSchema):
    """``tasks/update`` (the 2026-07-28 tasks extension): answers to the task's questions, by key."""

    inputResponses = fields.Dict(keys=fields.String(), required=True)  # the wire name


class UriParamsSchema(RequestParamsSchema):
    """``skills/get`` (the skills extension): the ``uri`` of a skill's ``SKILL.md``."""

    uri = fields.String(required=True)


class DirectoryParamsSchema(UriParamsSchema):
    """``resources/directory/read`` (the skills extension): a folder's ``uri``, and a ``cursor``."""

    cursor = fields.String(allow_none=True)


class ReferenceSchema(OpenSchema):
    """``ref`` of ``completion/complete``: a prompt by ``name`` or a resource template by ``uri``."""

    type = fields.String(required=True, validate=validate.OneOf(["ref/prompt", "ref/resource"]))
    name = fields.String()
    uri = fields.String()

    @validates_schema
    def _check_target(self, data: dict[str, t.Any], **kwargs: t.Any) -> None:
        # Each kind of reference names its target by a different member.
        needed = "name" if data["type"] == "ref/prompt" else "uri"
        if needed not in data:
            raise ma.ValidationError(f"Required when type is {data['type']}.", field_name=needed)


class CompletionArgumentSchema(OpenSchema):
    """``argument`` of ``completion/complete``: which argument, and what was typed so far."""

    name = fields.String(required=True)
    value = fields.String(required=True)


class CompletionContextSchema(OpenSchema):
    """``context`` of ``completion/complete``: the arguments already chosen."""

    arguments = fields.Dict(allow_none=True)


class CompleteParamsSchema(RequestParamsSchema):
    """``completion/complete``: ``ref``, ``argument`` and the optional ``context``."""

    ref = ObjectField(ReferenceSchema, required=True)
    argument = ObjectField(CompletionArgumentSchema, required=True)
    context = ObjectField(CompletionContextSchema, allow_none=True)


class SetLevelParamsSchema(RequestParamsSchema):
    """``logging/setLevel``: one of the eight RFC 5424 ``level`` names."""

    level = fields.String(required=True, validate=validate.OneOf(LOG_LEVELS))


class CancelledParamsSchema(RequestParamsSchema):
    """``notifications/cancelled``: the ``requestId`` to stop and an optional ``reason``.

    The id is bounded like every request id: it names a cache entry while
    the cancellation is pending.
    """

    requestId = RequestIdField()  # the wire names
    reason = fields.String(allow_none=True)


#: Request method -> the schema its params must satisfy, built once.
PARAMS_SCHEMAS: dict[str, ma.Schema] = {
    "initialize": InitializeParamsSchema(),
    "ping": RequestParamsSchema(),
    "logging/setLevel": SetLevelParamsSchema(),
    "tools/list": PaginatedParamsSchema(),
    "tools/call": ToolCallSchema(),
    "resources/list": PaginatedParamsSchema(),
    "resources/templates/list": PaginatedParamsSchema(),
    "resources/read": ResourceParamsSchema(),
    "resources/subscribe": ResourceParamsSchema(),
    "resources/unsubscribe": ResourceParamsSchema(),
    "prompts/list": PaginatedParamsSchema(),
    "prompts/get": GetPromptParamsSchema(),
    "completion/complete": CompleteParamsSchema(),
    "server/discover": RequestParamsSchema(),
    "subscriptions/listen": ListenParamsSchema(),
    "tasks/get": TaskParamsSchema(),
    "tasks/result": TaskParamsSchema(),
    "tasks/list": PaginatedParamsSchema(),
    "tasks/cancel": TaskParamsSchema(),
    "tasks/update": TaskUpdateParamsSchema(),
    "skills/list": PaginatedParamsSchema(),
    "skills/get": UriParamsSchema(),
    "resources/directory/read": DirectoryParamsSchema(),
}

#: Notification method -> the schema its params must satisfy. Others pass as they are.
NOTIFICATION_SCHEMAS: dict[str, ma.Schema] = {
    "notifications/cancelled": CancelledParamsSchema(),
}

# Methods whose schema accepts empty params: most requests of most clients
# (ping, a first page) then cost a set lookup.
_EMPTY_OK = frozenset(method for method, schema in PARAMS_SCHEMAS.items() if not schema.validate({}))


def _optional_dict(params: dict[str, t.Any], key: str) -> bool:
    value = params.get(key)
    return value is None or isinstance(value, dict)


def _plain_tool_call(params: dict[str, t.Any]) -> bool:
    """Whether *params* is a valid ``tools/call`` without asking marshmallow.

    ``tools/call`` is the busiest method; this accepts only what
    :class:`ToolCallSchema` accepts, and anything else goes through the schema,
    which then words the errors.
    """
    return (
        isinstance(params.get("name"), str)
        and _optional_dict(params, "arguments")
        and _optional_dict(params, "_meta")
        and "inputResponses" not in params
        and "requestState" not in params
    )


def validate_params(method: str, params: dict[str, t.Any]) -> dict[str, t.Any]:
    """Check the ``params`` of a request to *method* against its schema.

    Methods without a schema in :data:`PARAMS_SCHEMAS` pass through.

    :returns: *params* itself: the schemas check, they do not convert.
    :raises flask_mcp.MCPError: -32602 ``Invalid params: <field>: <message>;
        ...`` with the marshmallow messages in ``data.fields``.
    """
    if method == "tools/call" and _plain_tool_call(params):
        return params
    if not params and method in _EMPTY_OK:
        return params
    return _checked(PARAMS_SCHEMAS.get(method), params)


def validate_notification_params(method: str, params: dict[str, t.Any]) -> dict[str, t.Any]:
    """Check the ``params`` of a notification to *method*, like :func:`validate_params`.

    A notification is never answered, so a transport calls this before the
    params reach anything: the HTTP transport answers 400, stdio drops it.

    :raises flask_mcp.MCPError: -32602, as :func:`validate_params`.
    """
    return _checked(NOTIFICATION_SCHEMAS.get(method), params)


def _checked(schema: ma.Schema | None, params: dict[str, t.Any]) -> dict[str, t.Any]:
    if schema is None:
        return params
    try:
        schema.load(params)
    except ma.ValidationError as exc:
        raise MCPError(
            INVALID_PARAMS, f"Invalid params: {describe_validation_error(exc)}", {"fields": exc.messages}
        ) from None
    return params
