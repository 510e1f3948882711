"""The modern era's per-request envelope: what every 2026-07-28 request says about its client.

A modern request carries, in ``params._meta``, the protocol revision it
speaks, the client's capabilities and (optionally) its name and the log
level it wants; the server remembers none of it between requests. This
module names those keys, tells a modern request from a handshake-era one,
and checks the envelope: a missing required member is -32602, a revision
the server does not serve is -32022 with ``{"supported", "requested"}``.
"""

from __future__ import annotations

import dataclasses
import typing as t

from .jsonrpc import INVALID_PARAMS, UNSUPPORTED_VERSION, MCPError
from .versions import ALL_PROTOCOL_VERSIONS, LOG_LEVELS, MODERN_PROTOCOL_VERSIONS

__all__ = [
    "CLIENT_CAPABILITIES",
    "CLIENT_INFO",
    "LOG_LEVEL",
    "PROTOCOL_VERSION",
    "SERVER_INFO",
    "SUBSCRIPTION_ID",
    "Envelope",
    "check_version_of",
    "is_modern",
    "read_envelope",
    "served_revision",
]

_PREFIX = "io.modelcontextprotocol/"
#: ``_meta`` key of the revision a modern request speaks (required).
PROTOCOL_VERSION = _PREFIX + "protocolVersion"
#: ``_meta`` key of the client's capabilities for this request (required; ``{}`` for none).
CLIENT_CAPABILITIES = _PREFIX + "clientCapabilities"
#: ``_meta`` key of the client's name and version (optional).
CLIENT_INFO = _PREFIX + "clientInfo"
#: ``_meta`` key of the lowest log level the client wants for this request (optional; no logs without it).
LOG_LEVEL = _PREFIX + "logLevel"
#: ``_meta`` key of the server's name and version on every modern result.
SERVER_INFO = _PREFIX + "serverInfo"
#: ``_meta`` key tying a notification to the ``subscriptions/listen`` request it belongs to.
SUBSCRIPTION_ID = _PREFIX + "subscriptionId"


@dataclasses.dataclass(frozen=True)
class Envelope:
    """The checked ``_meta`` of one modern request."""

    protocol_version: str
    capabilities: dict[str, t.Any]
    client_info: dict[str, t.Any] | None = None
    log_level: str | None = None


def is_modern(params: t.Any) -> bool:
    """Whether *params* belong to a modern-era request: its ``_meta`` names a protocol revision.

    The key alone decides, whatever its value: a modern request with a
    broken envelope must get the modern era's errors, not a handshake
    error about a missing session.
    """
    if not isinstance(params, dict):
        return False
    meta = params.get("_meta")
    return isinstance(meta, dict) and PROTOCOL_VERSION in meta


def _invalid(message: str) -> MCPError:
    return MCPError(INVALID_PARAMS, f"Invalid params: {message}")


def read_envelope(params: dict[str, t.Any], *, check_version: bool = True) -> Envelope:
    """Check the envelope of a modern request and return it.

    :param check_version: also refuse a revision the server does not serve;
        a transport that must compare its headers with the envelope first
        passes ``False`` and calls :func:`check_version` itself.
    :raises MCPError: -32602 when ``_meta`` or one of its required members is
        missing or of the wrong type, or ``logLevel`` is not a level; -32022
        for an unsupported revision.
    """
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        raise _invalid(f"params._meta must be an object with {PROTOCOL_VERSION!r} and {CLIENT_CAPABILITIES!r}")
    if PROTOCOL_VERSION not in meta or CLIENT_CAPABILITIES not in meta:
        missing = [key for key in (PROTOCOL_VERSION, CLIENT_CAPABILITIES) if key not in meta]
        raise _invalid(f"params._meta is missing {', '.join(repr(key) for key in missing)}")
    version, capabilities = meta[PROTOCOL_VERSION], meta[CLIENT_CAPABILITIES]
    if not isinstance(version, str):
        raise _invalid(f"{PROTOCOL_VERSION!r} must be a string")
    if not isinstance(capabilities, dict):
        raise _invalid(f"{CLIENT_CAPABILITIES!r} must be an object")
    client_info = meta.get(CLIENT_INFO)
    if client_info is not None and not (isinstance(client_info, dict) and isinstance(client_info.get("name"), str)):
        raise _invalid(f"{CLIENT_INFO!r} must be an object with a 'name'")
    log_level = meta.get(LOG_LEVEL)
    if log_level is not None and log_level not in LOG_LEVELS:
        raise _invalid(f"{LOG_LEVEL!r} must be one of {', '.join(LOG_LEVELS)}")
    envelope = Envelope(version, capabilities, client_info, log_level)
    if check_version:
        check_version_of(envelope)
    return envelope


def served_revision(meta: t.Any) -> str | None:
    """The revision a well-formed envelope names, when this server serves it; else ``None``.

    What :func:`read_envelope` and :func:`check_version_of` accept, without
    building the :class:`Envelope`, for a caller that only needs to know. ``None``
    also for an envelope they would accept but of another shape than JSON
    gives; :func:`read_envelope` then says what is wrong, if anything.
    """
    if type(meta) is not dict:
        return None
    version = meta.get(PROTOCOL_VERSION)
    if type(version) is not str or type(meta.get(CLIENT_CAPABILITIES)) is not dict:
        return None
    if CLIENT_INFO in meta or LOG_LEVEL in meta:  # the optional members: checked as read_envelope checks them
        try:
            read_envelope({"_meta": meta})  # the revision too
        except MCPError:
            return None
        return version
    return version if version in MODERN_PROTOCOL_VERSIONS else None


def check_version_of(envelope: Envelope) -> None:
    """Refuse an envelope whose revision is not a modern one this server serves.

    :raises MCPError: -32022 with ``data: {"supported": [...], "requested": ...}``;
        ``supported`` lists every revision served, handshake ones included, so a
        client that shares no modern revision with us knows it may ``initialize``.
    """
    if envelope.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        raise MCPError(
            UNSUPPORTED_VERSION,
            f"Unsupported protocol version: {envelope.protocol_version!r}",
            {"supported": list(ALL_PROTOCOL_VERSIONS), "requested": envelope.protocol_version},
        )
