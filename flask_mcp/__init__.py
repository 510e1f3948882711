"""flask_mcp: serve the Model Context Protocol from a Flask app.

Everything an app needs is importable from here. The extension object is
``extension.py``, the Flask binding ``binding/`` (with ``globals.py`` and
``signals.py``), the surfaces ``transport/``, ``cli/`` and ``integrations/``
(routes, tasks, skills, views), the test tools ``testing/``; underneath,
``config``, ``stores``, ``auth`` and the Flask-free core (``schemas``,
``protocol``, ``policies``, ``results``, ``components``, ``core``). The
layers are described in ``docs/architecture.rst``.
"""

from __future__ import annotations

from .auth.gate import current_principal
from .components.bulk import ToolDefinition
from .config.settings import LateSettingWarning, ProcessLocalSessionsWarning, UnknownSettingWarning
from .core.context import Context
from .core.hooks import CallInfo
from .core.input_requests import Elicit, ElicitResult, InputRequest, ListRoots, Sample
from .extension import MCP
from .globals import current_mcp, current_state, state_of
from .policies.execution import ToolTimeout
from .policies.options import ArgumentBinding, ErrorFormat, KwargsPrecedence, OutputFormat, UnknownArguments
from .policies.permissions import (
    Authenticated,
    Permission,
    PermissionContext,
    ScopeRequired,
    UnprotectedToolError,
    UnprotectedToolWarning,
    permission,
)
from .policies.principal import Principal
from .policies.ratelimit import FixedWindow, TokenBucket
from .policies.tool import ConfigurationError
from .protocol.errors import NotFoundError, ToolError
from .protocol.jsonrpc import MCPError
from .protocol.versions import LATEST_PROTOCOL_VERSION, MODERN_PROTOCOL_VERSIONS, SUPPORTED_PROTOCOL_VERSIONS
from .results.content import (
    AudioContent,
    Content,
    EmbeddedResource,
    ImageContent,
    PromptMessage,
    ResourceLink,
    TextContent,
    ToolResult,
)
from .results.formats import ToonUnavailableWarning
from .results.status import status_result
from .stores.shared_registry import RuntimeRegistrationWarning
from .transport.cgi import serve_cgi
from .transport.stdio import serve_stdio

__version__ = "0.1.0"

__all__ = [
    "LATEST_PROTOCOL_VERSION",
    "MCP",
    "MODERN_PROTOCOL_VERSIONS",
    "SUPPORTED_PROTOCOL_VERSIONS",
    "ArgumentBinding",
    "AudioContent",
    "Authenticated",
    "CallInfo",
    "ConfigurationError",
    "Content",
    "Context",
    "Elicit",
    "ElicitResult",
    "EmbeddedResource",
    "ErrorFormat",
    "FixedWindow",
    "ImageContent",
    "InputRequest",
    "KwargsPrecedence",
    "LateSettingWarning",
    "ProcessLocalSessionsWarning",
    "ListRoots",
    "MCPError",
    "NotFoundError",
    "OutputFormat",
    "Permission",
    "PermissionContext",
    "Principal",
    "PromptMessage",
    "ResourceLink",
    "RuntimeRegistrationWarning",
    "Sample",
    "ScopeRequired",
    "TextContent",
    "TokenBucket",
    "ToolDefinition",
    "ToolError",
    "ToolResult",
    "ToolTimeout",
    "ToonUnavailableWarning",
    "UnknownArguments",
    "UnknownSettingWarning",
    "UnprotectedToolError",
    "UnprotectedToolWarning",
    "current_mcp",
    "current_principal",
    "current_state",
    "permission",
    "serve_cgi",
    "serve_stdio",
    "state_of",
    "status_result",
]
