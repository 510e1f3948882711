"""What a tool function asks for that nothing can give it: refused at registration, not on every call.

Two mistakes a signature can make, each named with the way out:

* a parameter with a name the server fills (``user``, ``request``, ``data``,
  ``context``) but annotated as a plain JSON value (``user: str``): it was
  meant as the client's argument, which the server would never pass;
* under ``argument_binding="spread"``, a ``data`` parameter that cannot be
  what the server passes in it, the validated arguments as a dict: one
  annotated as something else (``data: list[str]``), or one with no
  argument beside it (``def save(data: dict)``), which would always arrive
  empty; both were meant as the client's argument named ``data``;
* a required parameter that no argument, ``kwargs`` provider or reserved
  name supplies (``tenant_id`` beside a bundled ``data``): every call would
  fail with a ``TypeError``. Beside an explicit input schema, such a
  parameter may be left to the URL of a route the function is the view of
  (``customer`` of ``@app.post("/orders/<int:customer>")``), which is known
  only once the app's routes are: it is then checked when the route is found
  (:mod:`flask_mcp.integrations.routes.view_arguments`), and a call of a tool
  whose function turns out to be no such view answers :func:`unsupplied_message`.
"""

from __future__ import annotations

import collections.abc
import inspect
import types
import typing as t

from ..policies.options import ArgumentBinding
from .binding import RESERVED_NAMES

__all__ = ["check_parameters", "unsupplied_message"]

#: Annotations that mark a value the client sends, not one the server fills.
_PLAIN = (str, int, float, bool)
#: What the server passes in each reserved name.
_FILLED = {
    "user": "the authenticated caller (the app's user object, or the Principal)",
    "request": "Flask's request",
    "data": "the validated arguments",
    "context": "the Context",
}


#: Annotations a dict of the validated arguments satisfies (besides none at all).
_MAPPINGS = (dict, collections.abc.Mapping, collections.abc.MutableMapping, t.Any, object)


def _holds_arguments(hint: t.Any) -> bool:
    """Whether a ``data`` parameter annotated with *hint* can take the validated arguments (a dict)."""
    if hint is None or hint in _MAPPINGS or t.get_origin(hint) in _MAPPINGS:
        return True
    if t.get_origin(hint) in (t.Union, types.UnionType):
        return any(_holds_arguments(member) for member in t.get_args(hint) if member is not type(None))
    return False


def _check_spread_data(name: str, hint: t.Any, declared: t.Collection[str]) -> None:
    """Refuse a spread tool's ``data`` parameter that was meant as the client's argument (see the module docstring)."""
    if _holds_arguments(hint) and declared:
        return
    why = (
        "no argument is declared beside it, so it would always be empty"
        if _holds_arguments(hint)
        else f"it is annotated with {getattr(hint, '__name__', hint)}, which the arguments are not"
    )
    raise ValueError(
        f"tool {name!r}: parameter 'data' has a reserved name: the server passes {_FILLED['data']} in it "
        f"(a dict), never the client's argument, and {why}; rename it (for example 'data_value') to take it "
        "from the client, or use argument_binding='bundle' with input_schema= for the whole arguments object"
    )


def _plain(hint: t.Any) -> bool:
    if t.get_origin(hint) in (t.Union, types.UnionType):
        members = [member for member in t.get_args(hint) if member is not type(None)]
        return bool(members) and all(_plain(member) for member in members)
    return hint in _PLAIN


def unsupplied_message(name: str, parameters: t.Collection[str], where: str | None = None) -> str:
    """Why tool *name* cannot be called: its required *parameters* are supplied by nothing (*where* says why)."""
    listed = ", ".join(repr(parameter) for parameter in sorted(parameters))
    which = f"parameter {listed} is" if len(parameters) == 1 else f"parameters {listed} are"
    why = where or "the input schema does not declare it, nor the URL of a route whose view the function is"
    return (
        f"tool {name!r}: {which} required, but nothing supplies it ({why}); "
        "give it a default, declare it in the input schema, or supply it with a kwargs= provider"
    )


def check_parameters(
    name: str,
    func: t.Callable[..., t.Any],
    binding: ArgumentBinding,
    declared: t.Collection[str],
    context_param: str | None,
    has_provider: bool,
    *,
    leave_to_route: bool = False,
) -> frozenset[str]:
    """Refuse a signature a call could never satisfy (see the module docstring).

    :param declared: the argument names the input schema declares.
    :param leave_to_route: return the required parameters nothing supplies
        rather than refusing them: the URL of a route may (an explicit input
        schema on a function that may be a view).
    :returns: the parameters left to a route's URL.
    :raises ValueError: naming the parameter and what to do.
    """
    left: set[str] = set()
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
            if parameter.name == "data" and binding is ArgumentBinding.SPREAD:
                _check_spread_data(name, hints.get("data"), supplied)
            continue
        if parameter.default is not parameter.empty or has_provider or parameter.name in supplied:
            continue
        if leave_to_route:
            left.add(parameter.name)
            continue
        where = (
            "with argument_binding='bundle' the arguments arrive in 'data'"
            if binding is ArgumentBinding.BUNDLE
            else "the input schema does not declare it"
        )
        raise ValueError(unsupplied_message(name, (parameter.name,), where))
    return frozenset(left)
