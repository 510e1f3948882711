"""A local HTTPS server for client metadata documents, with its own CA, for the tests of the fetch.

:func:`make_pki` makes a CA and a server certificate (for ``localhost``,
``client.test`` and ``127.0.0.1``) with the ``cryptography`` package;
:class:`DocumentServer` serves answers set per path over TLS on a free
loopback port, and records what each request looked like (path, ``Host``,
the TLS server name). A path may be made to stall (before its headers, or
after part of its body) until the server stops: a fetch with a deadline must
give up on it by itself; or trickle its body a byte at a time.
"""

from __future__ import annotations

import dataclasses
import datetime
import ipaddress
import json
import ssl
import threading
import typing as t
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

NAMES = ("localhost", "client.test")


@dataclasses.dataclass(frozen=True)
class PKI:
    """The files of a test CA and of a server certificate it signed."""

    ca_bundle: Path
    cert: Path
    key: Path


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def make_pki(folder: Path, names: t.Sequence[str] = NAMES) -> PKI:
    """A CA and a server certificate for *names* and ``127.0.0.1``, written to *folder*."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("flask-mcp test CA"))
        .issuer_name(_name("flask-mcp test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    alternative = [x509.DNSName(name) for name in names] + [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(names[0]))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(alternative), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pki = PKI(folder / "ca.pem", folder / "server.pem", folder / "server.key")
    pki.ca_bundle.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    pki.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    pki.key.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return pki


@dataclasses.dataclass
class Answer:
    """What the server answers on one path."""

    body: bytes = b"{}"
    status: int = 200
    headers: dict[str, str] = dataclasses.field(default_factory=lambda: {"Content-Type": "application/json"})
    #: ``"headers"``: stall before the status line; ``"body"``: after the headers and half the body.
    stall: str | None = None
    #: Leave out Content-Length (the body ends with the connection).
    no_length: bool = False
    #: Seconds between the body's bytes (a server that trickles): each byte alone comes quickly.
    drip: float | None = None


@dataclasses.dataclass(frozen=True)
class Seen:
    """One request the server received."""

    path: str
    host: str | None
    server_name: str | None


class DocumentServer:
    """Serves :class:`Answer` s over TLS on ``127.0.0.1``; a context manager that stops it and its threads."""

    def __init__(self, pki: PKI) -> None:
        self.answers: dict[str, Answer] = {}
        self.seen: list[Seen] = []
        self.released = threading.Event()
        self._names: dict[int, str | None] = {}
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                server_name = owner._names.get(id(self.connection))
                owner.seen.append(Seen(self.path, self.headers.get("Host"), server_name))
                answer = owner.answers.get(self.path, Answer(b'{"error": "not found"}', 404))
                if answer.stall == "headers":
                    owner.released.wait(30)
                    return
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                if not answer.no_length:
                    self.send_header("Content-Length", str(len(answer.body)))
                self.send_header("Connection", "close")
                self.end_headers()
                if answer.stall == "body":
                    self.wfile.write(answer.body[: len(answer.body) // 2])
                    self.wfile.flush()
                    owner.released.wait(30)
                    return
                if answer.drip is not None:
                    for index in range(len(answer.body)):
                        if owner.released.wait(answer.drip):
                            return
                        self.wfile.write(answer.body[index : index + 1])
                        self.wfile.flush()
                    return
                self.wfile.write(answer.body)

            def log_message(self, format: str, *args: t.Any) -> None:
                pass

        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(pki.cert, pki.key)

        def remember_name(sock: ssl.SSLObject | ssl.SSLSocket, name: str | None, _: ssl.SSLContext) -> None:
            self._names[id(sock)] = name

        context.sni_callback = remember_name  # type: ignore[assignment]
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = False  # server_close() joins the handlers
        # A client that gave up (the point of the slow answers) leaves a broken pipe: nothing to report.
        self.httpd.handle_error = lambda request, address: None  # type: ignore[method-assign]
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def url(self, path: str, host: str = "localhost") -> str:
        """The https URL of *path* on this server, under the name *host*."""
        return f"https://{host}:{self.port}{path}"

    def document(self, path: str, document: t.Any, host: str = "localhost", **answer: t.Any) -> str:
        """Serve *document* (JSON) at *path*; returns its URL."""
        self.answers[path] = Answer(json.dumps(document).encode(), **answer)
        return self.url(path, host)

    def __enter__(self) -> DocumentServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.released.set()
        self.httpd.shutdown()
        self.thread.join(timeout=10)
        self.httpd.server_close()
