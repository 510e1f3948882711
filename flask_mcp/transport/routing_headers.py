"""The routing headers of a modern (2026-07-28) request, checked against its body.

Over HTTP a modern request repeats what proxies and load balancers route on
in headers: ``MCP-Protocol-Version`` (the envelope's revision),
``Mcp-Method`` (the method), ``Mcp-Name`` (the tool or prompt name, or the
resource URI) and one ``Mcp-Param-<Name>`` per tool argument whose schema
carries ``"x-mcp-header": "<Name>"``. A header that is missing or says
something else than the body is -32020 (HTTP 400): a proxy must never route
on a value the server does not act on.

Values that are not plain ASCII travel as ``=?base64?<base64 of UTF-8>?=``;
a sentinel that is not canonical base64 matches nothing.
"""

from __future__ import annotations

import base64
import binascii
import re
import typing as t

from ..protocol.jsonrpc import HEADER_MISMATCH, MCPError

if t.TYPE_CHECKING:
    from _typeshed.wsgi import WSGIEnvironment

    from ..components.registry import Registry

__all__ = [
    "check_routing_headers",
    "decode_header_value",
    "encode_header_value",
    "header_params",
    "plain_tool_call_headers",
    "tool_header_params",
]

#: Methods whose target travels in ``Mcp-Name``, and the param that names it.
NAME_PARAMS = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    # The tasks extension routes its methods by the task they name.
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}
_SENTINEL = re.compile(r"=\?base64\?([A-Za-z0-9+/=]*)\?=")
_PLAIN = re.compile(r"[\x20-\x7e]*")
_HEADER = "x-mcp-header"


def _mismatch(message: str) -> MCPError:
    return MCPError(HEADER_MISMATCH, f"Header mismatch: {message}")


def decode_header_value(value: str) -> str | None:
    """The value a header carries: itself, or what its base64 sentinel encodes.

    ``None`` for a value no client may send: a broken sentinel or characters
    outside visible ASCII.
    """
    value = value.strip(" \t")
    found = _SENTINEL.fullmatch(value)
    if found is None:
        return value if _PLAIN.fullmatch(value) else None
    encoded = found.group(1)
    try:
        raw = base64.b64decode(encoded, validate=True)
        decoded = raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    # Only the canonical encoding counts: the same value has exactly one header form.
    return decoded if base64.b64encode(raw).decode("ascii") == encoded else None


def encode_header_value(value: str) -> str:
    """*value* as a client sends it: itself when plain visible ASCII, else its base64 sentinel."""
    if _PLAIN.fullmatch(value) and value == value.strip(" \t") and _SENTINEL.fullmatch(value) is None:
        return value
    return f"=?base64?{base64.b64encode(value.encode('utf-8')).decode('ascii')}?="


def _header(environ: WSGIEnvironment, name: str) -> str | None:
    key = _ENVIRON_KEYS.get(name)
    if key is None:
        key = "HTTP_" + name.upper().replace("-", "_")
    return environ.get(key)


_VERSION_KEY = "HTTP_MCP_PROTOCOL_VERSION"
_METHOD_KEY = "HTTP_MCP_METHOD"
_NAME_KEY = "HTTP_MCP_NAME"
#: The environ keys of the headers every modern request carries.
_ENVIRON_KEYS = {
    name: "HTTP_" + name.upper().replace("-", "_") for name in ("MCP-Protocol-Version", "Mcp-Method", "Mcp-Name")
}


def _expect(environ: WSGIEnvironment, name: str, expected: str, what: str) -> None:
    raw = _header(environ, name)
    if raw is None:
        raise _mismatch(f"the {name} header is missing; it must be {expected!r} ({what})")
    # The common case, a plain value equal to the body's, needs no decoding. A
    # value shaped like a sentinel is always decoded, even when it equals the
    # body literally: a proxy decodes it and would route on something else.
    if (raw != expected or raw.startswith("=?")) and decode_header_value(raw) != expected:
        raise _mismatch(f"the {name} header does not match {what}")


def header_params(schema: dict[str, t.Any]) -> list[tuple[tuple[str, ...], str, str | None]]:
    """The ``x-mcp-header`` annotations of an input schema: (argument path, header name, JSON type).

    Only properties reached through ``properties`` alone count, as the
    specification says; annotations anywhere else are not headers.
    """
    found: list[tuple[tuple[str, ...], str, str | None]] = []

    def walk(node: t.Any, path: tuple[str, ...]) -> None:
        properties = node.get("properties") if isinstance(node, dict) else None
        if not isinstance(properties, dict):
            return
        for key, sub in properties.items():
            if not isinstance(sub, dict):
                continue
            name = sub.get(_HEADER)
            if isinstance(name, str) and name:
                kind = sub.get("type")
                found.append(((*path, key), name, kind if isinstance(kind, str) else None))
            walk(sub, (*path, key))

    walk(schema, ())
    return found


def _argument(arguments: t.Any, path: tuple[str, ...]) -> t.Any:
    for part in path:
        if not isinstance(arguments, dict):
            return None
        arguments = arguments.get(part)
    return arguments


def _header_form(value: t.Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


#: A tool's schema does not change once registered: its annotations are found once. Kept by the
#: tool (an app's, never a caller's) in a plain dictionary, whose lookup costs a fifth of a weak
#: one's; tools replaced since are let go with all the others past _TOOLS_KEPT.
_TOOL_HEADERS: dict[t.Any, list[tuple[tuple[str, ...], str, str | None]]] = {}
_TOOLS_KEPT = 4096


def tool_header_params(tool: t.Any) -> list[tuple[tuple[str, ...], str, str | None]]:
    """:func:`header_params` of a registered tool's input schema, computed once per tool."""
    found = _TOOL_HEADERS.get(tool)
    if found is None:
        if len(_TOOL_HEADERS) >= _TOOLS_KEPT:
            _TOOL_HEADERS.clear()
        found = _TOOL_HEADERS[tool] = header_params(tool.descriptor.get("inputSchema") or {})
    return found


def plain_tool_call_headers(environ: WSGIEnvironment, tool: t.Any, name: str, version: str) -> bool:
    """Whether a modern ``tools/call`` of *tool* (called *name*) carries the common routing headers.

    That is: plain values equal to the envelope's *version*, the method and
    the name, and *tool* takes no argument in a header. ``True`` means
    :func:`check_routing_headers` has nothing to refuse; ``False`` that it
    must look (and say what is wrong, if anything).
    """
    if (
        environ.get(_NAME_KEY) != name
        or environ.get(_VERSION_KEY) != version
        or environ.get(_METHOD_KEY) != "tools/call"
        # A value shaped like a sentinel is decoded even when it equals the body (see _expect).
        or name.startswith("=?")
        or version.startswith("=?")
    ):
        return False
    found = _TOOL_HEADERS.get(tool)  # tool_header_params, its lookup spelled out: this runs on every modern call
    return not (found if found is not None else tool_header_params(tool))


def _check_params(environ: WSGIEnvironment, registry: Registry, params: dict[str, t.Any]) -> None:
    name = params.get("name")
    tool = registry.tools.get(name) if isinstance(name, str) else None
    if tool is None:
        return  # the core answers for an unknown tool (or a name that is not a string)
    arguments = params.get("arguments") or {}
    for path, name, kind in tool_header_params(tool):
        header = f"Mcp-Param-{name}"
        raw = _header(environ, header)
        value = _argument(arguments, path)
        if value is None:
            if raw is not None:
                raise _mismatch(f"the {header} header is present but the argument {'.'.join(path)!r} is not")
            continue
        if raw is None:
            raise _mismatch(f"the {header} header is missing; it must carry the argument {'.'.join(path)!r}")
        decoded = decode_header_value(raw)
        matches = decoded == _header_form(value)
        if not matches and kind in ("integer", "number") and decoded is not None:
            try:  # numbers compare by value: 42 and 42.0 are the same argument
                matches = float(decoded) == float(value)
            except (TypeError, ValueError):
                matches = False
        if not matches:
            raise _mismatch(f"the {header} header does not match the argument {'.'.join(path)!r}")


def check_routing_headers(
    environ: WSGIEnvironment, method: str, params: dict[str, t.Any], registry: Registry, version: str
) -> None:
    """Check every routing header of a modern request to *method* with *params* against its body.

    :param version: the envelope's protocol revision.
    :raises MCPError: -32020 naming the header that is missing or disagrees.
    """
    # The common case, both plain and equal to the body's, needs no more (see _expect).
    if not (
        environ.get(_VERSION_KEY) == version
        and environ.get(_METHOD_KEY) == method
        and not version.startswith("=?")
        and not method.startswith("=?")
    ):
        _expect(environ, "MCP-Protocol-Version", version, "the protocolVersion of the request's _meta")
        _expect(environ, "Mcp-Method", method, "the request's method")
    target = NAME_PARAMS.get(method)
    if target is not None and isinstance(params.get(target), str):
        _expect(environ, "Mcp-Name", params[target], f"the request's {target!r}")
    if method == "tools/call":
        _check_params(environ, registry, params)
