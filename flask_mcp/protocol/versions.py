"""Protocol revisions this server speaks, and the vocabulary they share (log levels).

Two eras share one endpoint. The handshake era negotiates a revision once,
with ``initialize``, and keeps it in a session; the modern era (2026-07-28
and later) carries the revision in every request's ``_meta`` and keeps
nothing between requests.
"""

from __future__ import annotations

__all__ = [
    "ALL_PROTOCOL_VERSIONS",
    "DEFAULT_NEGOTIATED_VERSION",
    "LATEST_PROTOCOL_VERSION",
    "LOG_LEVELS",
    "MODERN_PROTOCOL_VERSIONS",
    "SUPPORTED_PROTOCOL_VERSIONS",
]

#: Handshake-era revisions, newest first.
SUPPORTED_PROTOCOL_VERSIONS: tuple[str, ...] = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
#: The revision offered when the client asks for one we do not speak.
LATEST_PROTOCOL_VERSION = SUPPORTED_PROTOCOL_VERSIONS[0]
#: What a request without ``MCP-Protocol-Version`` is assumed to speak (per the spec).
DEFAULT_NEGOTIATED_VERSION = "2025-03-26"
#: Modern-era (stateless) revisions, newest first.
MODERN_PROTOCOL_VERSIONS: tuple[str, ...] = ("2026-07-28",)
#: Every revision served, newest first: ``supportedVersions`` of ``server/discover``.
ALL_PROTOCOL_VERSIONS: tuple[str, ...] = MODERN_PROTOCOL_VERSIONS + SUPPORTED_PROTOCOL_VERSIONS

#: RFC 5424 severities, lowest first, as ``logging/setLevel`` accepts them.
LOG_LEVELS: tuple[str, ...] = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
