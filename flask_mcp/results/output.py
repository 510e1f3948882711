"""One rule for a tool's return value and its output schema.

The value is dumped through the schema, and what comes out is checked
against the JSON Schema the tool advertises (the one its ``outputSchema``
is, advertised or not). Any mismatch, whether the dump fails on a value of
the wrong type, a required field is missing or a value breaks a constraint,
is one error: :class:`OutputMismatch`, a JSON-RPC -32603 naming the fields
the way invalid arguments are named, and logged for the tool's author::

    Tool 'count' returned a value that does not match its output schema: total: Not a valid integer.

The tool broke its own contract: a client that validates
``structuredContent`` would refuse the result anyway, so none is sent.
"""

from __future__ import annotations

import logging
import typing as t
import weakref

import marshmallow as ma
from marshmallow import fields

from ..protocol.errors import describe_validation_error
from ..protocol.jsonrpc import INTERNAL_ERROR, MCPError
from ..schemas.json_schema import schema_to_json_schema
from ..schemas.messages import store_message

__all__ = ["OutputMismatch", "check_structured", "dump_output"]

logger = logging.getLogger("flask_mcp")

#: What a field raises when it cannot dump a value of the wrong type (int("abc"), None.isoformat()).
_DUMP_ERRORS = (TypeError, ValueError, AttributeError)
_REQUIRED = "Missing data for required field."
_UNKNOWN = "Unknown field."
_NULL = "Field may not be null."
#: marshmallow's words for a value of the wrong JSON type.
_TYPE_MESSAGES = {
    "integer": "Not a valid integer.",
    "number": "Not a valid number.",
    "string": "Not a valid string.",
    "boolean": "Not a valid boolean.",
    "array": "Not a valid list.",
    "object": "Not a valid mapping type.",
}

_validators: weakref.WeakKeyDictionary[ma.Schema, t.Any] = weakref.WeakKeyDictionary()


class OutputMismatch(MCPError):
    """A tool returned a value that does not fit its output schema: -32603, naming the fields.

    ``data`` is ``{"tool": name, "fields": messages}`` (no ``tool`` when the name is not known), *messages* shaped like
    marshmallow's (``{"total": ["Not a valid integer."]}``), as the
    ``fields`` of an invalid-params error are.
    """

    def __init__(self, tool: str | None, messages: dict[t.Any, t.Any]) -> None:
        who = f"Tool {tool!r}" if tool else "The tool"
        described = describe_validation_error(ma.ValidationError(messages))
        super().__init__(
            INTERNAL_ERROR,
            f"{who} returned a value that does not match its output schema: {described}",
            {"tool": tool, "fields": messages} if tool else {"fields": messages},
        )
        self.messages = messages


def _validator(schema: ma.Schema) -> t.Any:
    # Built once per schema: the same JSON Schema the tool advertises.
    validator = _validators.get(schema)
    if validator is None:
        import jsonschema

        validator = _validators[schema] = jsonschema.Draft202012Validator(schema_to_json_schema(schema, "output"))
    return validator


def _json_schema_problems(validator: t.Any, instance: t.Any) -> dict[t.Any, t.Any]:
    """What the JSON Schema finds wrong with *instance*, in marshmallow's words where it has them."""
    messages: dict[t.Any, t.Any] = {}
    for error in validator.iter_errors(instance):
        path = list(error.absolute_path)
        if error.validator == "required" and isinstance(error.instance, dict):
            for name in error.validator_value:
                if name not in error.instance:
                    store_message(messages, [*path, name], _REQUIRED)
        elif error.validator == "additionalProperties" and isinstance(error.instance, dict):
            declared = error.schema.get("properties") or {}
            for name in error.instance:
                if name not in declared:
                    store_message(messages, [*path, name], _UNKNOWN)
        elif error.validator == "type" and error.instance is None:
            store_message(messages, path, _NULL)
        elif error.validator == "type" and isinstance(error.validator_value, str):
            store_message(messages, path, _TYPE_MESSAGES.get(error.validator_value, error.message))
        else:
            store_message(messages, path, error.message)
    return messages


def _locate(schema: ma.Schema, obj: t.Any) -> dict[t.Any, t.Any]:
    """The fields of *schema* that cannot dump their value in *obj*, with why."""
    messages: dict[t.Any, t.Any] = {}
    for name, field in schema.dump_fields.items():
        try:
            field.serialize(name, obj, accessor=schema.get_attribute)
        except _DUMP_ERRORS:
            messages[field.data_key or name] = _field_problem(field, field.get_value(obj, name, schema.get_attribute))
    return messages


def _field_problem(field: fields.Field[t.Any], value: t.Any) -> t.Any:
    """Why *field* cannot dump *value*: nested fields say which of their own fields fail."""
    if isinstance(field, fields.Nested) and isinstance(field.schema, ma.Schema):
        items = value if field.many and isinstance(value, (list, tuple)) else None
        if items is None:
            return _locate(field.schema, value) or [_invalid(field)]
        found = {index: _locate(field.schema, item) for index, item in enumerate(items)}
        return {index: problem for index, problem in found.items() if problem} or [_invalid(field)]
    if isinstance(field, fields.List) and isinstance(value, (list, tuple)):
        found = {}
        for index, item in enumerate(value):
            try:
                field.inner._serialize(item, None, None)
            except _DUMP_ERRORS:
                found[index] = _field_problem(field.inner, item)
        return found or [_invalid(field)]
    return [_invalid(field)]


def _invalid(field: fields.Field[t.Any]) -> str:
    message = str(field.error_messages.get("invalid", "Not a valid value."))
    try:  # "Not a valid {obj_type}." (dates and times)
        return message.format(obj_type=getattr(field, "OBJ_TYPE", "value"))
    except (KeyError, IndexError, ValueError):
        return message


def _mismatch(tool: str | None, messages: dict[t.Any, t.Any], cause: BaseException | None = None) -> OutputMismatch:
    error = OutputMismatch(tool, messages)
    logger.error("%s", error.message, exc_info=cause)
    return error


def dump_output(schema: ma.Schema, value: t.Any, tool: str | None = None) -> t.Any:
    """*value* dumped through *schema*, checked against the schema's JSON Schema.

    :param tool: the tool's name, for the message.
    :raises OutputMismatch: the value does not fit (logged).
    """
    try:
        dumped = schema.dump(value)
    except ma.ValidationError as exc:  # schemas that validate while they dump (pydantic models)
        raise _mismatch(tool, exc.messages if isinstance(exc.messages, dict) else {"_schema": exc.messages}) from None
    except _DUMP_ERRORS as exc:
        raise _mismatch(tool, _locate(schema, value) or {"_schema": ["Not a valid value."]}, exc) from None
    problems = _json_schema_problems(_validator(schema), dumped)
    if problems:
        raise _mismatch(tool, problems)
    return dumped


def check_structured(schema: ma.Schema, structured: t.Any, tool: str | None = None) -> None:
    """Check ``structuredContent`` a tool built itself (a :class:`~flask_mcp.ToolResult`) against *schema*.

    :raises OutputMismatch: it does not fit (logged).
    """
    problems = _json_schema_problems(_validator(schema), structured)
    if problems:
        raise _mismatch(tool, problems)
