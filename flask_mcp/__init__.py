"""flask_mcp: serve the Model Context Protocol from a Flask app."""

from __future__ import annotations

from .content import (
    AudioContent,
    Content,
    EmbeddedResource,
    ImageContent,
    PromptMessage,
    ResourceLink,
    TextContent,
    ToolResult,
)
from .context import Context, ElicitResult
from .definitions import ToolDefinition
from .errors import NotFoundError, ToolError
from .extension import MCP
from .jsonrpc import MCPError
from .policies import ArgumentBinding, ErrorFormat, KwargsPrecedence, OutputFormat, UnknownArguments
from .principal import Principal
from .versions import LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS

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
