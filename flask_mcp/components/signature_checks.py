"""What a tool function asks for that nothing can give it: refused at registration, not on every call.

Two mistakes a signature can make, each named with the way out:

* a parameter with a name the server fills (``user``, ``request``, ``data``,
  ``context``) but annotated as a plain JSON value (``user: str``): it was
  meant as the client's argument, which the server would never pass;
* a required parameter that no argument, ``kwargs`` provider or reserved
  name supplies (``tenant_id`` beside a bundled ``data``): every call would
  fail with a ``TypeError``.
"""

from __future__ import annotations

import inspect
import types
import typing as t

from ..policies.options import ArgumentBinding
from .binding import RESERVED_NAMES

__all__ = ["check_parameters"]

#: Annotations that mark a value the client sends, not one the server fills.
_PLAIN = (str, int, float, bool)
#: What the server passes in each reserved name.
_FILLED = {
    "user": "the authenticated caller (the app's user object, or the Principal)",
    "request": "Flask's request",
    "data": "the validated arguments",
    "context": "the Context",
}


def _plain(hint: t.Any) -> bool:
    if t.get_origin(hint) in (t.Union, types.UnionType):
        members = [member for member in t.get_args(hint) if member is not type(None)]
        return bool(members) and all(_plain(member) for member in members)
    return hint in _PLAIN


def check_parameters(
    name: str,
    func: t.Callable[..., t.Any],
    binding: ArgumentBinding,
    declared: t.Collection[str],
    context_param: str | None,
    has_provider: bool,
) -> None:
    """Refuse a signature a call could never satisfy (see the module docstring).

    :param declared: the argument names the input schema declares.
    :raises ValueError: naming the parameter and what to do.
    """
    try:
        hints = t.get_type_hints(func)
    except Exception:  # unresolvable forward references: nothing to tell from them
        hints = {}
    supplied = set(declared) if binding is ArgumentBinding.SPREAD else set()
    for parameter in inspect.signature(func).parameters.values():
        if parameter.kind not in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY):
            continue
        if parameter.name == context_param:
            continue
        if parameter.name in RESERVED_NAMES:
            if _plain(hints.get(parameter.name)):
                example = f"{parameter.name}_name" if parameter.name == "user" else f"{parameter.name}_value"
                raise ValueError(
                    f"tool {name!r}: parameter {parameter.name!r} has a reserved name: the server passes "
                    f"{_FILLED[parameter.name]} in it, never the client's argument; rename it "
                    f"(for example {example!r}) to take it from the client"
                )
            continue
        if parameter.default is not parameter.empty or has_provider or parameter.name in supplied:
            continue
        where = (
            "with argument_binding='bundle' the arguments arrive in 'data'"
            if binding is ArgumentBinding.BUNDLE
            else "the input schema does not declare it"
        )
        raise ValueError(
            f"tool {name!r}: parameter {parameter.name!r} is required, but nothing supplies it ({where}); "
            "give it a default, declare it in the input schema, or supply it with a kwargs= provider"
        )
