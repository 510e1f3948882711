"""Redirect URIs: which may be registered, and when a requested one matches a registered one.

Matching is exact string comparison, with the one exception of RFC 8252
section 7.3: a native client's loopback redirect (``http://127.0.0.1`` or
``http://[::1]``) may come back on any port, since the client opens it when
it starts. ``localhost`` by name is never given that freedom (it may resolve
elsewhere), and nothing is ever matched by prefix or wildcard.
"""

from __future__ import annotations

from urllib.parse import SplitResult, urlsplit

__all__ = ["LOOPBACK_HOSTS", "redirect_matches", "redirect_problem"]

#: Hosts whose redirects may change port (RFC 8252 section 7.3): IP literals only.
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "[::1]"})
#: Schemes a browser must never be sent to, whatever a client registers.
_REFUSED_SCHEMES = frozenset({"javascript", "data", "file", "vbscript", "blob", "about"})


def _split(uri: str) -> SplitResult | None:
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018  (raises on a malformed port)
    except ValueError:
        return None
    return parts


def _loopback(parts: SplitResult) -> bool:
    host = parts.netloc.rpartition("@")[2]
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    return parts.scheme == "http" and "@" not in parts.netloc and name in LOOPBACK_HOSTS


def redirect_matches(registered: str, requested: str) -> bool:
    """Whether *requested* is *registered*, or differs from a loopback *registered* only by its port."""
    if not isinstance(requested, str) or not requested:
        return False
    if requested == registered:
        return True
    ours, theirs = _split(registered), _split(requested)
    if ours is None or theirs is None or not _loopback(ours) or not _loopback(theirs):
        return False
    return (
        ours.hostname == theirs.hostname
        and ours.path == theirs.path
        and ours.query == theirs.query
        and not theirs.fragment
        and not ours.fragment
    )


def redirect_problem(uri: object) -> str | None:
    """Why *uri* may not be registered as a redirect URI, or ``None`` when it may.

    Allowed: ``https`` URLs; ``http`` only to a loopback address or
    ``localhost`` (native clients, RFC 8252 section 7.3); and private-use
    schemes in reverse domain form (``com.example.app:/callback``, section 7.1).
    Never a fragment, user info, or a scheme a browser would run.
    """
    if not isinstance(uri, str) or not uri or len(uri) > 2000 or any(ord(c) < 33 for c in uri):
        return "a redirect URI is an absolute URL without spaces"
    parts = _split(uri)
    if parts is None or not parts.scheme:
        return f"{uri!r} is not an absolute URL"
    if parts.fragment or "#" in uri:
        return f"{uri!r} has a fragment"
    scheme = parts.scheme.lower()
    if scheme in _REFUSED_SCHEMES:
        return f"the {scheme!r} scheme is refused"
    if scheme in ("https", "http"):
        if not parts.hostname or "@" in parts.netloc:
            return f"{uri!r} needs a host and no user info"
        if scheme == "http" and not (_loopback(parts) or parts.hostname == "localhost"):
            return f"{uri!r}: http is allowed only for loopback redirects; use https"
        return None
    if "." not in scheme:
        return f"{uri!r}: a private-use scheme is in reverse domain form (com.example.app:/callback)"
    return None
