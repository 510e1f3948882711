"""Fetching a small JSON document from a URL a stranger gave, without being turned against the network.

A ``client_id`` that is a URL makes the server send a request wherever the
URL points: to its own loopback services, the cloud's metadata address, the
private network behind it. :func:`fetch_json` closes each way there:

- ``https`` only, no user info, an ASCII host;
- the host is resolved once, and *every* address it resolves to must be
  public (not private, loopback, link-local, multicast, reserved,
  unspecified, shared, documentation or benchmark space; IPv4-mapped, 6to4
  and NAT64 IPv6 addresses are judged by the IPv4 address inside);
- the connection goes to an address that was checked (the TLS name, SNI and
  ``Host`` stay the URL's host), so a second resolution answering otherwise
  (DNS rebinding) is never made;
- no proxy from the environment, no redirect followed, no compressed body;
- one deadline for the whole exchange (connect, TLS handshake, headers,
  body: every read is given only the time that is left), a bounded body,
  ``200`` only, a JSON content type.

Loopback addresses are allowed only when the caller says so (an app in
testing mode), for documents served by a test over local TLS.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import json
import socket
import ssl
import time
import typing as t
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3 import HTTPSConnectionPool
from urllib3.connection import HTTPSConnection
from urllib3.exceptions import ConnectTimeoutError, HTTPError, NewConnectionError
from werkzeug.datastructures import ResponseCacheControl
from werkzeug.http import parse_cache_control_header, parse_options_header

__all__ = ["FetchError", "FetchPolicy", "Fetched", "address_problem", "fetch_json", "open_connection", "resolve"]

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
#: IPv6 prefixes that carry an IPv4 address in their last 32 bits (RFC 6052 NAT64 well-known prefix).
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_SHARED_V4 = ipaddress.IPv4Network("100.64.0.0/10")


class FetchError(Exception):
    """The document could not be fetched safely; the message says why, in words a client developer can act on."""


@dataclasses.dataclass(frozen=True)
class FetchPolicy:
    """The bounds of one fetch."""

    #: Largest body read, in bytes.
    max_bytes: int = 5120
    #: Seconds for the whole exchange.
    timeout: float = 5.0
    #: Whether loopback addresses may be fetched (testing only).
    allow_loopback: bool = False
    #: A CA bundle (PEM file) to verify servers with instead of the default one.
    ca_bundle: str | None = None


@dataclasses.dataclass(frozen=True)
class Fetched:
    """A fetched document and how long its server lets it be cached."""

    document: t.Any
    #: Seconds from ``Cache-Control``: ``0`` for ``no-store``/``no-cache``/``max-age=0``, ``None`` when it says nothing.
    max_age: int | None


def resolve(host: str, port: int) -> list[str]:
    """Every address *host* resolves to (TCP), in the resolver's order.

    The one place names are resolved: tests replace it to point a name at an address.
    """
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def open_connection(address: str, port: int, timeout: float) -> socket.socket:
    """A TCP connection to *address* (an IP address already checked): the one place connections are opened."""
    return socket.create_connection((address, port), timeout=timeout)


def _embedded_v4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def address_problem(value: str, *, allow_loopback: bool = False) -> str | None:
    """Why the server must not connect to the address *value*, or ``None`` when it may."""
    try:
        address: Address = ipaddress.ip_address(value.split("%", 1)[0])
    except ValueError:
        return f"{value!r} is not an IP address"
    if isinstance(address, ipaddress.IPv6Address) and "%" not in value:
        inner = _embedded_v4(address)
        if inner is not None:
            address = inner
    if address.is_loopback:
        return None if allow_loopback else f"{value} is a loopback address"
    special = (
        address.is_private
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
        or not address.is_global
        or (isinstance(address, ipaddress.IPv4Address) and address in _SHARED_V4)
        or (isinstance(address, ipaddress.IPv6Address) and address.is_site_local)
        or "%" in value
    )
    return f"{value} is not a public address" if special else None


class _DeadlineContext(ssl.SSLContext):
    """A TLS client context whose sockets give every read and write only the time left before :attr:`deadline`."""

    deadline: float = 0.0


class _DeadlineSocket(ssl.SSLSocket):
    def _arm(self) -> None:
        remaining = t.cast(_DeadlineContext, self.context).deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("the time allowed for the fetch ran out")
        self.settimeout(remaining)

    def do_handshake(self, block: bool = False) -> None:
        self._arm()
        super().do_handshake(block)

    def recv(self, buflen: int = 1024, flags: int = 0) -> bytes:
        self._arm()
        return super().recv(buflen, flags)

    def recv_into(self, buffer: t.Any, nbytes: int | None = None, flags: int = 0) -> int:
        self._arm()
        return super().recv_into(buffer, nbytes, flags)

    def sendall(self, data: t.Any, flags: int = 0) -> None:
        self._arm()
        super().sendall(data, flags)


_DeadlineContext.sslsocket_class = _DeadlineSocket


class _PinnedConnection(HTTPSConnection):
    """urllib3's HTTPS connection to the URL's host, whose socket goes to the addresses checked for it."""

    addresses: t.Sequence[str] = ()
    deadline: float = 0.0

    def _new_conn(self) -> socket.socket:
        problem: OSError | None = None
        for address in self.addresses:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise ConnectTimeoutError(self, f"connecting to {self.host} took too long")
            try:
                return open_connection(address, self.port, remaining)
            except OSError as exc:
                problem = exc
        raise NewConnectionError(self, f"cannot connect to {self.host}: {problem}")


class _PinnedPool(HTTPSConnectionPool):
    ConnectionCls = _PinnedConnection

    def __init__(self, host: str, port: int, addresses: t.Sequence[str], deadline: float, **kwargs: t.Any) -> None:
        super().__init__(host, port, maxsize=1, block=False, **kwargs)
        self.addresses, self.deadline = addresses, deadline

    def _new_conn(self) -> HTTPSConnection:
        connection = super()._new_conn()
        assert isinstance(connection, _PinnedConnection)
        connection.addresses, connection.deadline = self.addresses, self.deadline
        return connection


class _PinnedAdapter(HTTPAdapter):
    """A requests transport adapter sending its one request over a :class:`_PinnedPool`."""

    def __init__(self, addresses: t.Sequence[str], context: _DeadlineContext) -> None:
        super().__init__(max_retries=0)
        self.addresses, self.context = addresses, context
        self.pools: list[_PinnedPool] = []

    def get_connection_with_tls_context(
        self, request: requests.PreparedRequest, verify: t.Any, proxies: t.Any = None, cert: t.Any = None
    ) -> HTTPSConnectionPool:
        parts = urlsplit(str(request.url))
        pool = _PinnedPool(
            str(parts.hostname), parts.port or 443, self.addresses, self.context.deadline, ssl_context=self.context
        )
        self.pools.append(pool)
        return pool

    def close(self) -> None:
        for pool in self.pools:
            pool.close()
        super().close()


def _context(deadline: float) -> _DeadlineContext:
    context = _DeadlineContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.deadline = deadline
    return context


def _checked_target(url: str, policy: FetchPolicy) -> tuple[str, list[str]]:
    parts = urlsplit(url)
    if parts.scheme != "https":
        raise FetchError("only https URLs are fetched")
    host = parts.hostname
    if not host or "@" in parts.netloc or not host.isascii():
        raise FetchError("the URL needs an ASCII host name and no user info")
    try:
        port = parts.port or 443
    except ValueError as exc:
        raise FetchError("the URL's port is not a number from 1 to 65535") from exc
    try:
        addresses = [host.strip("[]")] if _is_ip(host) else resolve(host, port)
    except (OSError, UnicodeError) as exc:
        raise FetchError(f"the host {host} does not resolve") from exc
    if not addresses:
        raise FetchError(f"the host {host} does not resolve")
    for address in addresses:
        problem = address_problem(address, allow_loopback=policy.allow_loopback)
        if problem is not None:
            raise FetchError(f"the host {host} resolves to an address this server does not fetch from ({problem})")
    return host, addresses


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return False
    return True


def fetch_json(url: str, policy: FetchPolicy) -> Fetched:
    """GET the JSON document at *url* within *policy*'s bounds.

    :raises FetchError: any rule broken or any failure, with the reason.
    """
    start = time.monotonic()
    deadline = start + policy.timeout
    _, addresses = _checked_target(url, policy)
    context = _context(deadline)
    adapter = _PinnedAdapter(addresses, context)
    with requests.Session() as session:
        session.trust_env = False  # no proxy, netrc or CA bundle from the environment
        session.mount("https://", adapter)
        session.mount("http://", HTTPAdapter(max_retries=0))  # never used: the scheme was checked
        try:
            with session.get(
                url,
                headers={"Accept": "application/json", "Accept-Encoding": "identity"},
                allow_redirects=False,
                stream=True,
                timeout=policy.timeout,
                verify=policy.ca_bundle or True,
            ) as response:
                return _read(response, policy)
        except FetchError:
            raise
        except (requests.RequestException, HTTPError, OSError, ValueError) as exc:
            if time.monotonic() >= deadline:
                raise FetchError(f"the server did not answer within {policy.timeout:g} seconds") from exc
            if isinstance(exc, requests.exceptions.SSLError):
                raise FetchError("the server's TLS certificate could not be verified") from exc
            raise FetchError(f"the document could not be fetched ({type(exc).__name__})") from exc


def _read(response: requests.Response, policy: FetchPolicy) -> Fetched:
    status = response.status_code
    if 300 <= status < 400:
        raise FetchError(f"the URL answered with a redirect (HTTP {status}); redirects are not followed")
    if status != 200:
        raise FetchError(f"the URL answered HTTP {status}, not 200")
    mimetype = parse_options_header(response.headers.get("Content-Type", ""))[0].lower()
    if mimetype != "application/json" and not (mimetype.startswith("application/") and mimetype.endswith("+json")):
        raise FetchError(f"the document's content type is {mimetype or 'missing'}, not application/json")
    if response.headers.get("Content-Encoding", "identity").strip().lower() not in ("", "identity"):
        raise FetchError("the document is compressed; it is fetched uncompressed")
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > policy.max_bytes:
        raise FetchError(f"the document is larger than {policy.max_bytes} bytes")
    body = bytearray()
    for chunk in response.iter_content(1024):
        body += chunk
        if len(body) > policy.max_bytes:
            raise FetchError(f"the document is larger than {policy.max_bytes} bytes")
    try:
        document = json.loads(bytes(body).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise FetchError("the document is not valid JSON (UTF-8)") from exc
    return Fetched(document, _max_age(response.headers.get("Cache-Control")))


def _max_age(header: str | None) -> int | None:
    if not header:
        return None
    control = parse_cache_control_header(header, cls=ResponseCacheControl)
    if control.no_store or control.no_cache:
        return 0
    for value in (control.s_maxage, control.max_age):
        if value is not None:
            try:
                return max(0, int(value))
            except (TypeError, ValueError):
                return 0
    # A max-age that does not parse means stale (RFC 9111 section 4.2.1): not kept.
    return 0 if "max-age" in header.lower() else None
