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

The module also describes a tool result in *status form*, for tools that
report an outcome rather than a value. It is opt-in: a tool returns
:func:`status_result` (or builds its own :class:`~flask_mcp.ToolResult`)::

    from flask_mcp.protocol.params import status_result

    @mcp.tool()
    def rename(path: str, new_name: str) -> ToolResult:
        if not exists(path):
            return status_result({
                "status": "failure",
                "error": {"error_type": "FileNotFound", "error_message": f"no file {path}"},
            })
        return status_result({
            "status": "success",
            "data": {"path": move(path, new_name)},
            "explanation": "Renamed the file.",
        })

The success result carries ``data`` as ``structuredContent`` and as JSON
text, then the explanation as a second text block; the failure is a result
with ``isError`` whose text reads ``Error executing tool: no file ...``.
"""

from __future__ import annotations

import typing as t

import marshmallow as ma
from marshmallow import fields, validate, validates_schema
from marshmallow.types import ErrorMessages

from ..core.context import LOG_LEVELS
from ..results.content import ToolResult
from ..results.convert import error_result, tool_result
from .errors import describe_validation_error
from .jsonrpc import ID_BOUNDS, INVALID_PARAMS, MCPError, is_request_id

__all__ = [
    "FAILURE_STATUSES",
    "NOTIFICATION_SCHEMAS",
    "PARAMS_SCHEMAS",
    "CancelledParamsSchema",
    "CompleteParamsSchema",
    "CompletionArgumentSchema",
    "CompletionContextSchema",
    "ErrorDetailSchema",
    "GetPromptParamsSchema",
    "ImplementationSchema",
    "InitializeParamsSchema",
    "PaginatedParamsSchema",
    "ReferenceSchema",
    "RequestIdField",
    "RequestParamsSchema",
    "ResourceParamsSchema",
    "SetLevelParamsSchema",
    "StatusResultSchema",
    "ToolCallSchema",
    "status_result",
    "status_result_to_tool_result",
    "validate_notification_params",
    "validate_params",
]

#: The ``status`` values of a status-form result that mean the tool failed.
FAILURE_STATUSES: frozenset[str] = frozenset({"failure"})


class _OpenSchema(ma.Schema):
    """Keeps undeclared keys: MCP objects may carry members a later revision adds."""

    class Meta:
        unknown = ma.INCLUDE


class _Object(fields.Nested):
    """A nested object whose non-object values are refused like a ``Dict`` field's.

    (``Nested`` alone reports them as ``<field>._schema: Invalid input type.``)
    """

    # marshmallow merges these along the MRO, as a class attribute.
    default_error_messages: ErrorMessages = {"type": "Not a valid mapping type."}  # noqa: RUF012

    def _deserialize(
        self,
        value: t.Any,
        attr: str | None,
        data: t.Mapping[str, t.Any] | None,
        partial: bool | t.Sequence[str] | t.AbstractSet[str] | None = None,
        **kwargs: t.Any,
    ) -> t.Any:
        if not isinstance(value, t.Mapping):
            raise self.make_error("type")
        return super()._deserialize(value, attr, data, partial, **kwargs)


class RequestIdField(fields.Field):  # type: ignore[type-arg]
    """A JSON-RPC request id, within the bounds :func:`flask_mcp.protocol.jsonrpc.is_request_id` sets."""

    # marshmallow merges these along the MRO, as a class attribute.
    default_error_messages: ErrorMessages = {"invalid": f"Not a valid request id: {ID_BOUNDS}."}  # noqa: RUF012

    def _deserialize(self, value: t.Any, attr: str | None, data: t.Any, **kwargs: t.Any) -> t.Any:
        if not is_request_id(value):
            raise self.make_error("invalid")
        return value


class RequestParamsSchema(_OpenSchema):
    """The params every request may have: only ``_meta`` (``progressToken`` and the like).

    Used as is by ``ping``.
    """

    _meta = fields.Dict(allow_none=True)


class ImplementationSchema(_OpenSchema):
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
    clientInfo = _Object(ImplementationSchema, allow_none=True)


class PaginatedParamsSchema(RequestParamsSchema):
    """The ``*/list`` methods: an optional opaque ``cursor``."""

    cursor = fields.String(allow_none=True)


class ToolCallSchema(RequestParamsSchema):
    """``tools/call``: the tool ``name`` and its ``arguments``.

    ``arguments`` must be an object; its keys are free, as only the tool's
    own input schema knows them.
    """

    name = fields.String(required=True)
    arguments = fields.Dict(allow_none=True)


class ResourceParamsSchema(RequestParamsSchema):
    """``resources/read``, ``resources/subscribe`` and ``resources/unsubscribe``: the ``uri``."""

    uri = fields.String(required=True)


class GetPromptParamsSchema(RequestParamsSchema):
    """``prompts/get``: the prompt ``name`` and its ``arguments`` object.

    The argument values are checked by the prompt's own schema.
    """

    name = fields.String(required=True)
    arguments = fields.Dict(allow_none=True)


class ReferenceSchema(_OpenSchema):
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


class CompletionArgumentSchema(_OpenSchema):
    """``argument`` of ``completion/complete``: which argument, and what was typed so far."""

    name = fields.String(required=True)
    value = fields.String(required=True)


class CompletionContextSchema(_OpenSchema):
    """``context`` of ``completion/complete``: the arguments already chosen."""

    arguments = fields.Dict(allow_none=True)


class CompleteParamsSchema(RequestParamsSchema):
    """``completion/complete``: ``ref``, ``argument`` and the optional ``context``."""

    ref = _Object(ReferenceSchema, required=True)
    argument = _Object(CompletionArgumentSchema, required=True)
    context = _Object(CompletionContextSchema, allow_none=True)


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
        isinstance(params.get("name"), str) and _optional_dict(params, "arguments") and _optional_dict(params, "_meta")
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


# -- results in status form ------------------------------------------------------


class DictOrString(fields.Field):  # type: ignore[type-arg]
    """An object or a string, passed through as is."""

    # marshmallow merges these along the MRO, as a class attribute.
    default_error_messages: ErrorMessages = {"invalid": "Not a valid mapping type or string."}  # noqa: RUF012

    def _deserialize(self, value: t.Any, attr: str | None, data: t.Any, **kwargs: t.Any) -> t.Any:
        if not isinstance(value, (dict, str)):
            raise self.make_error("invalid")
        return value


class ErrorDetailSchema(_OpenSchema):
    """Why a tool failed: a machine-readable ``error_type``, a message and optional detail.

    ``error_details`` is an object (which parameter failed, the missing
    path...) or a plain string.
    """

    error_type = fields.String(required=True)
    error_message = fields.String(required=True)
    error_details = DictOrString(allow_none=True)


class StatusResultSchema(_OpenSchema):
    """A tool result in status form: ``status``, then ``data`` or ``error``.

    ``status`` is free text (``"success"``, ``"no_change_needed"``...); the
    values in :data:`FAILURE_STATUSES` mean the tool failed, and such a result
    must carry ``error`` and no ``data``. ``data`` is a free-form object and
    ``explanation`` a summary for the reader.
    """

    status = fields.String(required=True)
    data = fields.Dict(allow_none=True)
    error = _Object(ErrorDetailSchema, allow_none=True)
    explanation = fields.String(allow_none=True)

    @validates_schema
    def _check_failure(self, data: dict[str, t.Any], **kwargs: t.Any) -> None:
        if data["status"] not in FAILURE_STATUSES:
            return
        errors: dict[str, list[str]] = {}
        if data.get("error") is None:
            errors["error"] = ["Required when status is a failure."]
        if data.get("data") is not None:
            errors["data"] = ["Must be omitted when status is a failure."]
        if errors:
            raise ma.ValidationError(errors)


_status_result_schema = StatusResultSchema()


def status_result_to_tool_result(value: t.Mapping[str, t.Any]) -> dict[str, t.Any]:
    """Convert a status-form result into an MCP ``CallToolResult`` dict.

    * failure: ``isError`` with the text ``Error executing tool: <error_message>``;
    * otherwise: ``data`` as JSON text and ``structuredContent``, then
      ``explanation`` as a second text block; without ``data`` or
      ``explanation`` the text is the status itself.

    :raises marshmallow.ValidationError: *value* is not a valid
        :class:`StatusResultSchema` (from a tool, an error result naming the fields).
    """
    loaded = _status_result_schema.load(value)
    if loaded["status"] in FAILURE_STATUSES:
        return error_result(loaded["error"]["error_message"])
    data, explanation = loaded.get("data"), loaded.get("explanation")
    result: dict[str, t.Any] = tool_result(data) if data is not None else {"content": []}
    if explanation:
        result["content"].append({"type": "text", "text": explanation})
    if not result["content"]:
        result["content"].append({"type": "text", "text": loaded["status"]})
    return result


def status_result(value: t.Mapping[str, t.Any]) -> ToolResult:
    """:func:`status_result_to_tool_result` as a :class:`~flask_mcp.ToolResult`, for a tool to return."""
    result = status_result_to_tool_result(value)
    return ToolResult(
        content=result["content"],
        structured_content=result.get("structuredContent"),
        is_error=result.get("isError", False),
    )
