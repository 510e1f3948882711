"""Origin and Host checks against DNS rebinding.

A web page can make a browser send requests to a server on the user's own
machine; the ``Origin`` header tells whose page it is, and a rebound DNS name
shows up in ``Host``. Both are checked before anything else is read.
"""

from __future__ import annotations

import fnmatch
import typing as t
from urllib.parse import urlsplit

if t.TYPE_CHECKING:
    from _typeshed.wsgi import WSGIEnvironment

__all__ = ["LOOPBACK_HOSTS", "host_allowed", "origin_allowed", "rejection", "split_host"]

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


def split_host(value: str) -> str:
    """The host name of a ``Host`` header value, without port or IPv6 brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def _matches(value: str, patterns: t.Iterable[str]) -> bool:
    return any(value == p or ("*" in p and fnmatch.fnmatchcase(value, p)) for p in patterns)


def origin_allowed(origin: str, own_origin: str, allowed: t.Sequence[str]) -> bool:
    """Whether a request with ``Origin: origin`` may proceed.

    Allowed: the server's own origin, any loopback origin (any port), and the
    configured origins (exact, or ``fnmatch`` patterns such as
    ``https://*.example.com``; ``"*"`` allows all).
    """
    origin = origin.strip().lower()
    if origin == own_origin.lower() or _matches(origin, (p.lower() for p in allowed)):
        return True
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and (parts.hostname or "") in LOOPBACK_HOSTS


def host_allowed(host_header: str, server_name: str, allowed: t.Sequence[str] | None) -> bool:
    """Whether the ``Host`` header is acceptable.

    With no configured list, a server listening on a loopback address only
    answers to loopback names (a rebound name is refused); other servers
    accept any host, which a reverse proxy usually checks already.
    """
    host = split_host(host_header)
    if allowed is None:
        return split_host(server_name) not in LOOPBACK_HOSTS or host in LOOPBACK_HOSTS
    return _matches(host, (split_host(p) if "*" not in p else p.lower() for p in allowed))


def rejection(
    environ: WSGIEnvironment, allowed_hosts: t.Sequence[str] | None, allowed_origins: t.Sequence[str]
) -> str | None:
    """Why a request must be refused with HTTP 403, or ``None`` when it may proceed.

    Every transport that answers HTTP (the MCP endpoint, the REST routes)
    runs this one check, so they cannot drift apart.
    """
    host = environ.get("HTTP_HOST") or environ.get("SERVER_NAME", "")
    if not host_allowed(host, environ.get("SERVER_NAME", ""), allowed_hosts):
        return f"Forbidden: host {host!r} is not allowed"
    origin = environ.get("HTTP_ORIGIN")
    if origin is not None and not origin_allowed(origin, f"{environ['wsgi.url_scheme']}://{host}", allowed_origins):
        return f"Forbidden: origin {origin!r} is not allowed"
    return None
