"""Tool results in status form: an outcome (``status``, ``data`` or ``error``) rather than a value.

Status form is opt-in: a tool returns :func:`status_result` (or builds its
own :class:`~flask_mcp.ToolResult`)::

    from flask_mcp import status_result

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
from marshmallow import fields, validates_schema

from ..schemas.fields import DictOrString, ObjectField, OpenSchema
from .content import ToolResult
from .convert import error_result, tool_result

__all__ = [
    "FAILURE_STATUSES",
    "ErrorDetailSchema",
    "StatusResultSchema",
    "status_result",
    "status_result_to_tool_result",
]

#: The ``status`` values of a status-form result that mean the tool failed.
FAILURE_STATUSES: frozenset[str] = frozenset({"failure"})


class ErrorDetailSchema(OpenSchema):
    """Why a tool failed: a machine-readable ``error_type``, a message and optional detail.

    ``error_details`` is an object (which parameter failed, the missing
    path...) or a plain string.
    """

    error_type = fields.String(required=True)
    error_message = fields.String(required=True)
    error_details = DictOrString(allow_none=True)


class StatusResultSchema(OpenSchema):
    """A tool result in status form: ``status``, then ``data`` or ``error``.

    ``status`` is free text (``"success"``, ``"no_change_needed"``...); the
    values in :data:`FAILURE_STATUSES` mean the tool failed, and such a result
    must carry ``error`` and no ``data``. ``data`` is a free-form object and
    ``explanation`` a summary for the reader.
    """

    status = fields.String(required=True)
    data = fields.Dict(allow_none=True)
    error = ObjectField(ErrorDetailSchema, allow_none=True)
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
