"""Origin and Host checks against DNS rebinding.

A web page can make a browser send requests to a server on the user's own
machine; the ``Origin`` header tells whose page it is, and a rebound DNS name
shows up in ``Host``. Both are checked before anything else is read.

Both headers are parsed strictly, after RFC 3986's authority grammar
(``host [":" port]``; a host is a DNS name, a dotted IPv4 address or a
bracketed IPv6 address; a port is one to five ASCII digits up to 65535), and
an origin is exactly ``scheme "://" authority``, with no user info, path,
query or fragment. Values are compared whole, never by prefix or substring.
Anything that does not parse is refused, whatever the configuration.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import typing as t

from ..protocol.numerals import parse_numeral

if t.TYPE_CHECKING:
    from _typeshed.wsgi import WSGIEnvironment

__all__ = [
    "LOOPBACK_HOSTS",
    "Authority",
    "RequestGuard",
    "host_allowed",
    "is_json_request",
    "origin_allowed",
    "parse_authority",
    "parse_origin",
    "rejection",
    "split_host",
]

#: The names a server on a loopback address answers to, unless ``MCP_ALLOWED_HOSTS`` says otherwise.
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
#: Longest ``Host`` or ``Origin`` value parsed at all (a DNS name is at most 253 characters).
MAX_LENGTH = 300
_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\Z")
_SCHEME = re.compile(r"[a-z][a-z0-9+.-]{0,31}\Z")
_DEFAULT_PORTS = {"http": 80, "https": 443}
# A wildcard stands for one or more whole DNS labels, never for a dot-free
# stretch of text that could also swallow "/", ":" or "@".
_LABELS = r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*"


class Authority(t.NamedTuple):
    """A parsed ``host[:port]``: the host lower-cased, an IPv6 address without brackets."""

    host: str
    port: int | None


def _host_name(host: str) -> bool:
    """A DNS name of labels, or a dotted IPv4 address (which is made of such labels too)."""
    return 0 < len(host) <= 253 and all(_LABEL.match(label) for label in host.split("."))


def parse_authority(value: str) -> Authority | None:
    """``host[:port]`` parsed strictly; ``None`` for anything else."""
    value = value.strip().lower()
    if not value or len(value) > MAX_LENGTH or not value.isascii():
        return None
    if value.startswith("["):
        end = value.find("]")
        host, rest = value[1:end], value[end + 1 :]
        if end < 0 or not _ipv6(host):
            return None
    elif value.count(":") > 1:
        # A bare IPv6 address: what a server names its own bind address (SERVER_NAME), never with a port.
        return Authority(value, None) if _ipv6(value) else None
    else:
        host, colon, port = value.partition(":")
        rest = colon + port
        if not _host_name(host):
            return None
    if not rest:
        return Authority(host, None)
    number = _port(rest[1:]) if rest[0] == ":" else None
    return None if number is None else Authority(host, number)


def _port(text: str) -> int | None:
    """A port number: ASCII digits up to 65535 (:func:`~flask_mcp.protocol.numerals.parse_numeral`), else ``None``."""
    try:
        return parse_numeral(text, 65535)
    except ValueError:
        return None


def _ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return "%" not in text  # zone ids name an interface of the client's machine: never a server's name


class Origin(t.NamedTuple):
    """A parsed origin; the port is filled in for ``http`` and ``https``."""

    scheme: str
    host: str
    port: int | None


def parse_origin(value: str) -> Origin | None:
    """``scheme://host[:port]`` parsed strictly; ``None`` for anything else (including ``null``)."""
    value = value.strip().lower()
    scheme, separator, rest = value.partition("://")
    if not separator or not _SCHEME.match(scheme) or any(char in rest for char in "/?#@\\"):
        return None
    authority = parse_authority(rest)
    if authority is None:
        return None
    return Origin(scheme, authority.host, authority.port or _DEFAULT_PORTS.get(scheme))


def split_host(value: str) -> str:
    """The host name of a ``Host`` header value, without port or IPv6 brackets; ``""`` when it does not parse."""
    authority = parse_authority(value)
    return authority.host if authority is not None else ""


def _split_port(text: str) -> tuple[str, str]:
    """``("host", "port")`` of a configured ``host[:port]``; the port may be ``*`` or empty."""
    if (":" in text and not text.endswith("]") and text.count(":") == 1) or (text.startswith("[") and "]:" in text):
        host, _, port = text.rpartition(":")
        return host, port
    return text, ""


def _host_regex(host: str) -> str | None:
    """A configured host (``*`` for whole labels) as a regex over parsed host names; ``None`` if malformed."""
    if host.startswith("["):
        inner = host[1:-1] if host.endswith("]") else ""
        return re.escape(inner) if _ipv6(inner) else None
    labels = host.split(".")
    if not all(label == "*" or _LABEL.match(label) for label in labels):
        return None
    return r"\.".join(_LABELS if label == "*" else re.escape(label) for label in labels)


@functools.lru_cache(maxsize=256)
def _pattern(pattern: str, *, origin: bool) -> re.Pattern[str] | None:
    """A configured origin or host pattern as a regex over parsed values; ``None`` if it is malformed.

    Origins compare as ``scheme://host:port`` with the default port filled in,
    hosts as the bare host name (a port in the pattern is ignored). ``*`` in
    the host stands for one or more whole labels; as an origin's port
    (``http://localhost:*``), for any port.
    """
    pattern = pattern.strip().lower()
    prefix = ""
    if origin:
        scheme, separator, pattern = pattern.partition("://")
        if not separator or not _SCHEME.match(scheme):
            return None
        prefix = re.escape(scheme) + "://"
    host, port = _split_port(pattern)
    host_regex = _host_regex(host)
    if host_regex is None:
        return None
    if not origin:
        return re.compile(host_regex + r"\Z")
    if port == "*":
        port_regex = "[0-9]+"
    elif port:
        number = _port(port)
        if number is None:
            return None
        port_regex = str(number)
    else:
        port_regex = str(_DEFAULT_PORTS.get(scheme, ""))
    return re.compile(prefix + host_regex + ":" + port_regex + r"\Z")


def _origin_text(origin: Origin) -> str:
    return f"{origin.scheme}://{origin.host}:{origin.port if origin.port is not None else ''}"


def origin_allowed(origin: str, own_origin: str, allowed: t.Sequence[str]) -> bool:
    """Whether a request with ``Origin: origin`` may proceed.

    Allowed: the server's own origin, any loopback origin (``http`` or
    ``https``, any port), and the configured origins: exact origins, or
    patterns with ``*`` for whole labels of the host (``https://*.example.com``)
    or for the port (``http://localhost:*``); ``"*"`` allows every origin
    that parses, and ``null``. Nothing else that does not parse is ever allowed.
    """
    parsed = parse_origin(origin)
    if parsed is None:
        # "null" is the opaque origin of sandboxed frames and local files: only named, or "*", allows it.
        return origin.strip().lower() == "null" and any(p.strip().lower() in ("*", "null") for p in allowed)
    if parsed == parse_origin(own_origin):
        return True
    if parsed.scheme in _DEFAULT_PORTS and parsed.host in LOOPBACK_HOSTS:
        return True
    text = _origin_text(parsed)
    for pattern in allowed:
        if pattern.strip() == "*":
            return True
        regex = _pattern(pattern, origin=True)
        if regex is not None and regex.match(text):
            return True
    return False


def host_allowed(host_header: str, server_name: str, allowed: t.Sequence[str] | None) -> bool:
    """Whether the ``Host`` header is acceptable.

    With no configured list, a server listening on a loopback address only
    answers to loopback names (a rebound name is refused); other servers
    accept any host, which a reverse proxy usually checks already. Configured
    entries are host names (a port is ignored), with ``*`` for whole labels
    (``*.example.com``); ``"*"`` allows every host that parses.
    """
    authority = parse_authority(host_header)
    if authority is None:
        return False
    if allowed is None:
        return split_host(server_name) not in LOOPBACK_HOSTS or authority.host in LOOPBACK_HOSTS
    for pattern in allowed:
        if pattern.strip() == "*":
            return True
        regex = _pattern(pattern, origin=False)
        if regex is not None and regex.match(authority.host):
            return True
    return False


def is_json_request(environ: WSGIEnvironment) -> bool:
    """Whether the request body is declared ``application/json`` (parameters such as ``charset`` aside).

    A web page can send any other type across origins without asking the
    browser's permission first (text/plain, forms, multipart: the "simple
    requests" of CORS), so a body of another type never runs a tool.
    """
    return str(environ.get("CONTENT_TYPE", "")).partition(";")[0].strip().lower() == "application/json"


def rejection(
    environ: WSGIEnvironment, allowed_hosts: t.Sequence[str] | None, allowed_origins: t.Sequence[str]
) -> str | None:
    """Why a request must be refused with HTTP 403, or ``None`` when it may proceed.

    Every surface that answers HTTP (the MCP endpoint, the REST routes, the
    CGI adapter, the resource metadata) runs this one check, so they cannot
    drift apart; the endpoint's :class:`RequestGuard` runs it too.
    """
    host = environ.get("HTTP_HOST") or environ.get("SERVER_NAME", "")
    server_name = environ.get("SERVER_NAME", "")
    scheme = environ.get("wsgi.url_scheme", "http")
    origin = environ.get("HTTP_ORIGIN")
    hosts = None if allowed_hosts is None else tuple(allowed_hosts)
    if len(host) + len(origin or "") <= _CACHED_LENGTH:
        # A server sees few distinct hosts and origins: each verdict is worked out once.
        return _verdict(host, server_name, scheme, origin, hosts, tuple(allowed_origins))
    return _verdict.__wrapped__(host, server_name, scheme, origin, hosts, tuple(allowed_origins))


#: The longest Host plus Origin whose verdict is remembered (longer ones are rare and worked out each time).
_CACHED_LENGTH = 256
#: The most verdicts one :class:`RequestGuard` remembers (all are forgotten past it).
_VERDICTS_KEPT = 1024


@functools.lru_cache(maxsize=_VERDICTS_KEPT)
def _verdict(
    host: str,
    server_name: str,
    scheme: str,
    origin: str | None,
    allowed_hosts: tuple[str, ...] | None,
    allowed_origins: tuple[str, ...],
) -> str | None:
    if not host_allowed(host, server_name, allowed_hosts):
        return f"Forbidden: host {host[:MAX_LENGTH]!r} is not allowed"
    if origin is not None and not origin_allowed(origin, f"{scheme}://{host}", allowed_origins):
        return f"Forbidden: origin {origin[:MAX_LENGTH]!r} is not allowed"
    return None


class RequestGuard:
    """:func:`rejection` for one configuration, with its verdicts kept by the request's four values.

    The configuration is fixed when the guard is made, so a verdict depends
    on the request's ``Host``, ``Origin``, server name and scheme alone: one
    dictionary lookup finds it on every request but the first of each
    combination. What a caller can make it keep is bounded: a ``Host`` and
    an ``Origin`` longer than 256 characters together are worked out each
    time, and past 1,024 verdicts all are forgotten (a caller sending new
    hosts costs the others one verdict worked out again each, no more).

    :param allowed_hosts: as for :func:`host_allowed`.
    :param allowed_origins: as for :func:`origin_allowed`.
    """

    __slots__ = ("_verdicts", "allowed_hosts", "allowed_origins")

    def __init__(self, allowed_hosts: t.Sequence[str] | None, allowed_origins: t.Sequence[str]) -> None:
        self.allowed_hosts = None if allowed_hosts is None else tuple(allowed_hosts)
        self.allowed_origins = tuple(allowed_origins)
        self._verdicts: dict[tuple[str, str | None, str, str], str | None] = {}

    def rejection(self, environ: WSGIEnvironment) -> str | None:
        """Why the request of *environ* must be refused with HTTP 403, or ``None`` when it may proceed."""
        server_name = environ.get("SERVER_NAME", "")
        host = environ.get("HTTP_HOST") or server_name
        origin = environ.get("HTTP_ORIGIN")
        scheme = environ.get("wsgi.url_scheme", "http")
        key = (host, origin, server_name, scheme)
        try:
            return self._verdicts[key]
        except KeyError:
            pass
        verdict = _verdict.__wrapped__(host, server_name, scheme, origin, self.allowed_hosts, self.allowed_origins)
        if len(host) + len(origin or "") <= _CACHED_LENGTH:
            if len(self._verdicts) >= _VERDICTS_KEPT:
                self._verdicts.clear()
            self._verdicts[key] = verdict
        return verdict
