"""Checks of the decorators' options that stand apart from the schemas: headers, caching, tasks.

Each returns the option's checked value for the component, or raises
:class:`ValueError` naming the component and saying what to write instead.
"""

from __future__ import annotations

import datetime
import re
import typing as t

from ..schemas.json_schema import schema_to_json_schema

if t.TYPE_CHECKING:
    from .model import TaskSupport

__all__ = ["cache_hints", "confirm_option", "param_headers", "result_ttl", "task_support", "with_result_ttl"]

# RFC 9110 tokens: what an x-mcp-header name may be.
_HEADER_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
#: The JSON types an argument travelling in a header may have.
_HEADER_TYPES = frozenset({"string", "integer", "boolean"})


def cache_hints(options: t.Mapping[str, t.Any], what: str) -> dict[str, t.Any]:
    """``cache_ttl_ms`` and ``cache_scope`` of a component, from its ``cache_ttl=`` and ``cache_scope=``."""
    ttl = options.get("cache_ttl")
    if isinstance(ttl, datetime.timedelta):
        ttl = ttl.total_seconds()
    if ttl is not None and (isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or ttl < 0):
        raise ValueError(f"{what}: cache_ttl must be a number of seconds (>= 0) or a timedelta, not {ttl!r}")
    scope = options.get("cache_scope")
    if scope not in (None, "public", "private"):
        raise ValueError(f'{what}: cache_scope must be "public" or "private", not {scope!r}')
    return {"cache_ttl_ms": None if ttl is None else round(ttl * 1000), "cache_scope": scope}


def param_headers(name: str, headers: t.Mapping[str, str] | None, schema: t.Any) -> dict[str, str] | None:
    """The checked ``headers=`` of a tool: existing plain arguments, token names, unique whatever the case."""
    if not headers:
        return None
    json_schema = schema if isinstance(schema, dict) else schema_to_json_schema(schema)
    properties = json_schema.get("properties") or {}
    seen: set[str] = set()
    for argument, header in headers.items():
        if argument not in properties:
            raise ValueError(f"tool {name!r}: headers= names {argument!r}, which is not an argument")
        if properties[argument].get("type") not in _HEADER_TYPES:
            raise ValueError(f"tool {name!r}: argument {argument!r} cannot travel in a header: only strings, "
                             "integers and booleans can")  # fmt: skip
        if not isinstance(header, str) or not _HEADER_NAME.match(header) or header.lower() in seen:
            raise ValueError(f"tool {name!r}: header name {header!r} must be a distinct HTTP token (letters, "
                             "digits, '-', ...)")  # fmt: skip
        seen.add(header.lower())
    return dict(headers)


def result_ttl(name: str, options: t.Mapping[str, t.Any]) -> float | None:
    """Seconds a tool's results are kept (``cache=``), checked: a number, and a read-only tool."""
    ttl = options.get("cache")
    if isinstance(ttl, datetime.timedelta):
        ttl = ttl.total_seconds()
    if ttl is None:
        return None
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or ttl <= 0:
        raise ValueError(f"tool {name!r}: cache must be a positive number of seconds or a timedelta, not {ttl!r}")
    if not (options.get("annotations") or {}).get("readOnlyHint"):
        raise ValueError(
            f"tool {name!r}: cache= keeps results for tools that change nothing; "
            'declare it with annotations={"readOnlyHint": True}'
        )
    return float(ttl)


def with_result_ttl(options: t.Mapping[str, t.Any]) -> t.Mapping[str, t.Any]:
    """*options*, with a cached tool's ``cache_ttl`` defaulting to its ``cache``.

    A cached tool's results may be reused by clients as long as the server reuses them.
    """
    if options.get("cache") is None or options.get("cache_ttl") is not None:
        return options
    return {**options, "cache_ttl": options["cache"]}


def task_support(name: str, task: t.Any, ask_first: t.Any) -> TaskSupport:
    """The ``execution.taskSupport`` of tool *name* from its ``task`` option (``None``: ``"forbidden"``).

    :raises ValueError: not one of the three values, or ``ask_first`` on a tool that never runs as a task.
    """
    support = "forbidden" if task is None else task
    if support not in ("forbidden", "optional", "required"):
        raise ValueError(f"tool {name!r}: task must be 'forbidden', 'optional' or 'required', not {task!r}")
    if ask_first and support == "forbidden":
        raise ValueError(f"tool {name!r}: ask_first= is for tools that run as tasks (task='optional' or 'required')")
    return t.cast("TaskSupport", support)


def confirm_option(name: str, confirm: t.Any) -> bool | str | None:
    """The ``confirm`` option of tool *name*: ``True``, ``False``, a message template, or ``None``.

    :raises ValueError: anything else, or an empty message.
    """
    if confirm is None or isinstance(confirm, bool):
        return confirm
    if not isinstance(confirm, str) or not confirm.strip():
        raise ValueError(
            f"tool {name!r}: confirm must be True, False or a message such as 'Delete {{id}}?', not {confirm!r}"
        )
    return confirm
