"""flask_mcp: serve the Model Context Protocol from a Flask app."""

from __future__ import annotations

from .components.bulk import ToolDefinition
from .core.context import Context, ElicitResult
from .extension import MCP
from .policies.options import ArgumentBinding, ErrorFormat, KwargsPrecedence, OutputFormat, UnknownArguments
from .policies.principal import Principal
from .protocol.errors import NotFoundError, ToolError
from .protocol.jsonrpc import MCPError
from .protocol.versions import LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS
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

__version__ = "0.1.0"

__all__ = [
    "LATEST_PROTOCOL_VERSION",
    "MCP",
    "SUPPORTED_PROTOCOL_VERSIONS",
    "ArgumentBinding",
    "AudioContent",
    "Content",
    "Context",
    "ElicitResult",
    "EmbeddedResource",
    "ErrorFormat",
    "ImageContent",
    "KwargsPrecedence",
    "MCPError",
    "NotFoundError",
    "OutputFormat",
    "Principal",
    "PromptMessage",
    "ResourceLink",
    "TextContent",
    "ToolDefinition",
    "ToolError",
    "ToolResult",
    "UnknownArguments",
]
