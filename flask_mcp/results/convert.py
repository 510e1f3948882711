"""Turning what a handler returned into MCP result objects.

The conversions are the documented contract of the decorators:

* tools: ``str`` -> one text block; ``dict`` -> ``structuredContent`` plus the
  same JSON as text; another JSON value -> ``structuredContent``
  ``{"result": value}`` plus its JSON as text; :class:`~flask_mcp.ToolResult`
  and content objects pass through.
* resources: ``str`` -> text, ``bytes`` -> base64 ``blob``, ``dict``/``list``
  -> JSON text (``application/json`` unless a MIME type was given).
* prompts: ``str`` -> one user message; a list of messages for full control.

A tool's output schema dumps its value and must accept what comes out
(:mod:`flask_mcp.results.output`).
"""

from __future__ import annotations

import base64
import dataclasses
import sys
import typing as t

import marshmallow as ma

from ..policies.options import OutputFormat
from ..protocol import jsonrpc
from .content import Content, EmbeddedResource, PromptMessage, ToolResult, content_block
from .formats import error_result, render_text
from .output import check_structured, dump_output

__all__ = [
    "PLAIN_VALUES",
    "error_result",
    "plain_value_result",
    "prompt_messages",
    "resource_contents",
    "tool_result",
    "tool_value",
]

JSON_MIME_TYPE = "application/json"


def _is_content_list(value: t.Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(item, Content) for item in value)


_JSON_TYPES = (dict, list, str, int, float, bool, type(None))
#: Values whose result needs no more than their type to build (a list may hold content objects):
#: what :func:`plain_value_result` takes.
PLAIN_VALUES = frozenset({dict, str, int, float, bool, type(None)})


def _plain(value: t.Any) -> t.Any:
    if isinstance(value, _JSON_TYPES):
        return value
    # Dataclass instances and pydantic models are structured results like dicts.
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    pydantic = sys.modules.get("pydantic")  # a model cannot exist unless the app imported pydantic
    if pydantic is not None and isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    return value


def tool_result(
    value: t.Any,
    output_schema: ma.Schema | None = None,
    *,
    output_format: OutputFormat = OutputFormat.JSON,
    structured: bool = True,
    tool: str | None = None,
) -> dict[str, t.Any]:
    """Build the ``CallToolResult`` for a tool's return value.

    :param output_format: how the text block writes a structured value.
    :param structured: include ``structuredContent`` (the text block always
        carries the full value).
    :param tool: the tool's name, for the message of an output mismatch.
    :raises ~flask_mcp.results.output.OutputMismatch: the value, or the
        ``structuredContent`` of a :class:`~flask_mcp.ToolResult`, does not
        fit *output_schema*.
    :raises ValueError: a value JSON cannot represent (``NaN``, ``Infinity``).
    :raises TypeError: a value of a type that has no JSON form.
    """
    if type(value) in PLAIN_VALUES and output_schema is None:
        # Most tools return a plain value: what the steps below make of it, without asking each.
        return plain_value_result(value, output_format, structured)
    if isinstance(value, ToolResult):
        if output_schema is not None and value.structured_content is not None and not value.is_error:
            check_structured(output_schema, value.structured_content, tool)
        return value.to_dict()
    if isinstance(value, Content):
        return {"content": [value.to_dict()]}
    if _is_content_list(value):
        return {"content": [item.to_dict() for item in value]}
    value = tool_value(value, output_schema, tool=tool)
    if isinstance(value, str):
        return {"content": [{"type": "text", "text": value}]}
    result: dict[str, t.Any] = {"content": [{"type": "text", "text": render_text(value, output_format)}]}
    if structured:
        result["structuredContent"] = value if isinstance(value, dict) else {"result": value}
    return result


def plain_value_result(value: t.Any, output_format: OutputFormat, structured: bool) -> dict[str, t.Any]:
    """The ``CallToolResult`` of a plain value (``dict``, ``str``, ``int``, ``float``, ``bool``, ``None``).

    What :func:`tool_result` makes of one for a tool without an output
    schema, for a caller that knows both already.

    :raises ValueError: a value JSON cannot represent (``NaN``, ``Infinity``).
    :raises TypeError: a value inside a dict that has no JSON form.
    """
    kind = type(value)
    if kind is str:
        return {"content": [{"type": "text", "text": value}]}
    plain: dict[str, t.Any] = {"content": [{"type": "text", "text": render_text(value, output_format)}]}
    if structured:
        plain["structuredContent"] = value if kind is dict else {"result": value}
    return plain


def tool_value(value: t.Any, output_schema: ma.Schema | None = None, *, tool: str | None = None) -> t.Any:
    """The plain JSON-ready value of a tool's return value, for transports that send the value itself.

    The output schema, when there is one, dumps it and must accept the
    result (as for ``structuredContent``); a dataclass or a pydantic model
    becomes a dict; a :class:`~flask_mcp.ToolResult` or content objects
    become their wire form. Values JSON cannot hold are left for the encoder
    to refuse.

    :param tool: the tool's name, for the message of an output mismatch.
    :raises ~flask_mcp.results.output.OutputMismatch: the value does not fit *output_schema*.
    """
    if isinstance(value, (ToolResult, Content)):
        return value.to_dict()
    if _is_content_list(value):
        return [item.to_dict() for item in value]
    if output_schema is not None:
        return dump_output(output_schema, value, tool)
    return _plain(value)


def resource_contents(
    value: t.Any, uri: str, mime_type: str | None, output_schema: ma.Schema | None = None
) -> list[dict[str, t.Any]]:
    """Build the ``contents`` list of ``resources/read`` for a handler's return value.

    :param uri: the concrete URI that was read (not the template).
    """
    if isinstance(value, EmbeddedResource):
        return [value.to_dict()["resource"]]
    if output_schema is not None:
        value = output_schema.dump(value)
    value = _plain(value)
    entry: dict[str, t.Any] = {"uri": uri}
    if isinstance(value, str):
        entry["text"] = value
    elif isinstance(value, (bytes, bytearray, memoryview)):
        entry["blob"] = base64.b64encode(bytes(value)).decode("ascii")
    else:
        entry["text"] = jsonrpc.dumps(value)
        mime_type = mime_type or JSON_MIME_TYPE
    if mime_type:
        entry["mimeType"] = mime_type
    return [entry]


def prompt_messages(value: t.Any) -> list[dict[str, t.Any]]:
    """Build the ``messages`` of ``prompts/get`` for a prompt's return value.

    Accepts a string, a :class:`~flask_mcp.PromptMessage`, a content object, a
    ``{"role", "content"}`` dict, or a list of any of these (bare strings and
    content objects in a list are user messages).
    """
    items = value if isinstance(value, (list, tuple)) else [value]
    messages = []
    for item in items:
        if isinstance(item, PromptMessage):
            messages.append(item.to_dict())
        elif isinstance(item, (str, Content)):
            messages.append({"role": "user", "content": content_block(item)})
        elif isinstance(item, dict) and "role" in item and "content" in item:
            messages.append(PromptMessage(item["role"], item["content"]).to_dict())
        else:
            raise TypeError(f"a prompt cannot return {type(item).__name__} as a message")
    return messages
