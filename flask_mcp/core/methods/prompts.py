"""``prompts/list`` and ``prompts/get``."""

from __future__ import annotations

import typing as t

import marshmallow as ma

from ...protocol.errors import describe_validation_error
from ...protocol.jsonrpc import INVALID_PARAMS, MCPError
from ...results.convert import prompt_messages
from ..hooks import prompt_got
from .listing import list_page

if t.TYPE_CHECKING:
    from ...components.model import Prompt
    from ..client import Call


def list_prompts(call: Call) -> dict[str, t.Any]:
    """One page of prompt descriptors."""
    return list_page(call, "prompts")


def get_prompt(call: Call) -> dict[str, t.Any]:
    """Render a prompt with the client's (string) arguments."""
    name = call.param("name", str)
    arguments = call.param("arguments", dict, required=False) or {}
    prompt = call.server.registry.prompts.get(name)
    if prompt is None:
        raise MCPError(INVALID_PARAMS, f"Unknown prompt: {name}")
    call.component = prompt
    call.server.admit(call, "prompt", prompt, arguments)
    try:
        kwargs = prompt.load_arguments(arguments)
    except ma.ValidationError as exc:
        raise MCPError(
            INVALID_PARAMS, f"Invalid arguments for prompt {name}: {describe_validation_error(exc)}"
        ) from None
    hooks = call.server.hooks
    if hooks.engaged(prompt_got):
        value = hooks.run(call, "prompt", name, kwargs, lambda args: _invoke(call, prompt, args), prompt_got)
    else:
        value = _invoke(call, prompt, kwargs)
    result: dict[str, t.Any] = {"messages": prompt_messages(value)}
    if prompt.description:
        result["description"] = prompt.description
    return result


def _invoke(call: Call, prompt: Prompt, kwargs: dict[str, t.Any]) -> t.Any:
    if prompt.context_param:
        kwargs = {**kwargs, prompt.context_param: call.context()}
    return call.server.invoke(prompt.func, kwargs)
