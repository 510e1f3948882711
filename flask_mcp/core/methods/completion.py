"""``completion/complete``: suggestions for prompt arguments and template variables."""

from __future__ import annotations

import typing as t

from ...protocol.jsonrpc import INVALID_PARAMS, MCPError

if t.TYPE_CHECKING:
    from ...components.model import Completer
    from ..client import Call

#: The spec caps one response at 100 values.
MAX_VALUES = 100


def _completers(call: Call, ref: dict[str, t.Any]) -> dict[str, Completer]:
    registry = call.server.registry
    if ref.get("type") == "ref/prompt":
        prompt = registry.prompts.get(ref.get("name"))  # type: ignore[arg-type]
        if prompt is None:
            raise MCPError(INVALID_PARAMS, f"Unknown prompt: {ref.get('name')}")
        call.server.admit(call, "prompt", prompt)
        return prompt.completers
    if ref.get("type") == "ref/resource":
        uri = ref.get("uri")
        template = registry.templates.get(call.server.bounded_uri(uri, "ref.uri")) if isinstance(uri, str) else None
        if template is None:
            raise MCPError(INVALID_PARAMS, f"Unknown resource template: {uri}")
        call.server.admit(call, "resource", template)
        return template.completers
    raise MCPError(INVALID_PARAMS, "Invalid params: ref.type must be 'ref/prompt' or 'ref/resource'")


def complete(call: Call) -> dict[str, t.Any]:
    """Suggest values for one argument.

    A fixed list is filtered by the typed prefix (case-insensitively); a
    callable receives the typed value and the other arguments already given
    and returns the suggestions itself.
    """
    ref = call.param("ref", dict)
    argument = call.param("argument", dict)
    name, value = argument.get("name"), argument.get("value", "")
    if not isinstance(name, str) or not isinstance(value, str):
        raise MCPError(INVALID_PARAMS, "Invalid params: argument needs string 'name' and 'value'")
    context = call.param("context", dict, required=False) or {}
    completer = _completers(call, ref).get(name)
    if completer is None:
        values: list[str] = []
    elif callable(completer):
        values = [str(v) for v in completer(value, dict(context.get("arguments") or {}))]
    else:
        prefix = value.casefold()
        values = [v for v in completer if v.casefold().startswith(prefix)]
    return {"completion": {"values": values[:MAX_VALUES], "total": len(values), "hasMore": len(values) > MAX_VALUES}}
