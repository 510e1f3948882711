"""The OpenTelemetry MCP semantic conventions: span names and attributes of one message.

Plain functions of a message and its answer, with no OpenTelemetry import, so
that what a span says is decided (and tested) in one place. The names are
those of the GenAI conventions' MCP page (``mcp.*``, ``gen_ai.*``,
``jsonrpc.*``, ``rpc.*``, ``network.*``, ``error.type``).

What comes from the client is bounded, so that no client can make span
names or metric attribute values without end: a method no table of the
server names is ``_OTHER``; a tool or prompt name that is not registered is
``_OTHER`` in the span name and the metric attributes (the span's own
``gen_ai.tool.name`` keeps it, truncated); a revision the server does not
know is ``_OTHER`` in the metric attributes; a resource URI is never a
metric attribute (only the span's, truncated); and every string attribute
is cut at :data:`MAX_ATTRIBUTE_LENGTH`.
"""

from __future__ import annotations

import typing as t

from ..core.methods import HANDLERS, MODERN_HANDLERS, NOTIFICATION_HANDLERS
from ..protocol.envelope import PROTOCOL_VERSION
from ..protocol.versions import MODERN_PROTOCOL_VERSIONS, SUPPORTED_PROTOCOL_VERSIONS

if t.TYPE_CHECKING:
    from ..components.registry import Registry
    from ..core.client import ClientState
    from ..protocol.jsonrpc import RequestId

__all__ = [
    "ERROR_TYPE",
    "KNOWN_METHODS",
    "KNOWN_VERSIONS",
    "MAX_ATTRIBUTE_LENGTH",
    "METHOD_NAME",
    "OTHER",
    "Outcome",
    "TOOL_ERROR",
    "bounded",
    "message_attributes",
    "method_of",
    "metric_attributes",
    "outcome_of",
    "protocol_attributes",
    "span_name",
]

METHOD_NAME = "mcp.method.name"
PROTOCOL_VERSION_ATTRIBUTE = "mcp.protocol.version"
SESSION_ID = "mcp.session.id"
RESOURCE_URI = "mcp.resource.uri"
REQUEST_ID = "jsonrpc.request.id"
OPERATION_NAME = "gen_ai.operation.name"
TOOL_NAME = "gen_ai.tool.name"
PROMPT_NAME = "gen_ai.prompt.name"
TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_RESULT = "gen_ai.tool.call.result"
ERROR_TYPE = "error.type"
STATUS_CODE = "rpc.response.status_code"
NETWORK_TRANSPORT = "network.transport"
NETWORK_PROTOCOL_NAME = "network.protocol.name"
NETWORK_PROTOCOL_VERSION = "network.protocol.version"
CLIENT_ADDRESS = "client.address"

#: The value of ``mcp.method.name`` for a method the server does not know (any string a client sends).
OTHER = "_OTHER"
#: ``error.type`` of a ``CallToolResult`` with ``isError``, as the conventions name it.
TOOL_ERROR = "tool_error"
#: Longest string attribute taken from a message.
MAX_ATTRIBUTE_LENGTH = 256

#: Methods with a ``uri`` param the conventions record as ``mcp.resource.uri``.
_URI_METHODS = frozenset({"resources/read", "resources/subscribe", "resources/unsubscribe"})
#: Every method the server has a handler for, in either era, and the notifications it takes.
KNOWN_METHODS = frozenset(HANDLERS) | frozenset(MODERN_HANDLERS) | frozenset(NOTIFICATION_HANDLERS)
#: The revisions the server speaks, in either era: any other is ``_OTHER`` in a metric.
KNOWN_VERSIONS = frozenset(SUPPORTED_PROTOCOL_VERSIONS) | frozenset(MODERN_PROTOCOL_VERSIONS)
#: Attributes that also describe the operation in ``mcp.server.operation.duration``, as they are
#: (each of a small set the server decides); the names and the revision are bounded on the way.
_METRIC_KEYS = (
    METHOD_NAME,
    OPERATION_NAME,
    NETWORK_TRANSPORT,
    NETWORK_PROTOCOL_NAME,
    NETWORK_PROTOCOL_VERSION,
    ERROR_TYPE,
    STATUS_CODE,
)


def bounded(value: t.Any) -> str:
    """*value* as a string attribute: cut at :data:`MAX_ATTRIBUTE_LENGTH`."""
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= MAX_ATTRIBUTE_LENGTH else text[:MAX_ATTRIBUTE_LENGTH]


def method_of(method: str) -> str:
    """``mcp.method.name``: *method* itself when the server knows it, else :data:`OTHER`."""
    return method if method in KNOWN_METHODS else OTHER


def _registered(registry: Registry, method: str, name: t.Any) -> bool:
    if not isinstance(name, str):
        return False
    if method == "tools/call":
        return name in registry.tools
    return method == "prompts/get" and name in registry.prompts


def span_name(method: str, params: t.Mapping[str, t.Any], registry: Registry) -> str:
    """``{mcp.method.name} {target}``: the tool or prompt named, :data:`OTHER` when it is not registered."""
    name = method_of(method)
    if name in ("tools/call", "prompts/get"):
        target = params.get("name")
        return f"{name} {target if _registered(registry, name, target) else OTHER}"
    return name


def message_attributes(
    method: str, params: t.Mapping[str, t.Any], request_id: RequestId | None, registry: Registry
) -> dict[str, t.Any]:
    """What the conventions record of a message as it arrives."""
    name = method_of(method)
    attributes: dict[str, t.Any] = {METHOD_NAME: name}
    if request_id is not None:
        attributes[REQUEST_ID] = bounded(request_id)
    target = params.get("name")
    if name == "tools/call":
        attributes[OPERATION_NAME] = "execute_tool"
        if isinstance(target, str):
            attributes[TOOL_NAME] = bounded(target)
    elif name == "prompts/get" and isinstance(target, str):
        attributes[PROMPT_NAME] = bounded(target)
    elif name in _URI_METHODS and isinstance(params.get("uri"), str):
        attributes[RESOURCE_URI] = bounded(params["uri"])
    return attributes


def protocol_attributes(params: t.Mapping[str, t.Any], state: ClientState) -> dict[str, t.Any]:
    """``mcp.protocol.version`` (and ``mcp.session.id`` in the handshake era), read once the message was answered.

    A modern request names its revision in its ``_meta``; a handshake-era
    message is of its session's (``initialize`` has just negotiated it).
    """
    meta = params.get("_meta")
    version = meta.get(PROTOCOL_VERSION) if isinstance(meta, dict) else None
    if isinstance(version, str):
        return {PROTOCOL_VERSION_ATTRIBUTE: bounded(version)}
    attributes: dict[str, t.Any] = {PROTOCOL_VERSION_ATTRIBUTE: state.protocol_version}
    if state.session_id:
        attributes[SESSION_ID] = state.session_id
    return attributes


class Outcome(t.NamedTuple):
    """How a message ended: ``error_type`` is ``None`` on success."""

    error_type: str | None = None
    #: The JSON-RPC error code, as ``rpc.response.status_code``.
    status_code: str | None = None
    #: The span status' description: the JSON-RPC error's message.
    description: str | None = None


def outcome_of(response: t.Mapping[str, t.Any] | None) -> Outcome:
    """The :class:`Outcome` of a response envelope: its error, or a tool result with ``isError``."""
    if response is None:
        return Outcome()
    error = response.get("error")
    if isinstance(error, dict):
        code = str(error.get("code"))
        return Outcome(code, code, bounded(error.get("message", "")))
    result = response.get("result")
    if isinstance(result, dict) and result.get("isError") is True:
        return Outcome(TOOL_ERROR, None, _tool_error_text(result))
    return Outcome()


def _tool_error_text(result: t.Mapping[str, t.Any]) -> str | None:
    content = result.get("content")
    if isinstance(content, list) and content and isinstance(content[0], dict):
        text = content[0].get("text")
        if isinstance(text, str):
            return bounded(text)
    return None


def metric_attributes(attributes: t.Mapping[str, t.Any], registry: Registry) -> dict[str, t.Any]:
    """The attributes of ``mcp.server.operation.duration``: each from a set the server bounds.

    A tool or prompt name is itself only when it is registered, and a
    revision only when the server speaks it: :data:`OTHER` otherwise (a
    client can send any string). A resource URI is not one of them.
    """
    kept = {key: attributes[key] for key in _METRIC_KEYS if key in attributes}
    method = attributes.get(METHOD_NAME, "")
    for key in (TOOL_NAME, PROMPT_NAME):
        if key in attributes:
            kept[key] = attributes[key] if _registered(registry, method, attributes[key]) else OTHER
    version = attributes.get(PROTOCOL_VERSION_ATTRIBUTE)
    if version is not None:
        kept[PROTOCOL_VERSION_ATTRIBUTE] = version if version in KNOWN_VERSIONS else OTHER
    return kept
