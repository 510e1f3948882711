"""The SSRF-safe fetch: which addresses are refused, the pinned connection, and the bounds of the exchange."""

from __future__ import annotations

import typing as t

import pytest

from flask_mcp.oauth import safe_fetch
from flask_mcp.oauth.safe_fetch import FetchError, FetchPolicy, address_problem, fetch_json
from tests.oauth.document_server import PKI, Answer, DocumentServer, make_pki

REFUSED = [
    "10.0.0.1",
    "172.16.5.4",
    "192.168.1.1",
    "169.254.169.254",  # cloud metadata
    "100.64.0.1",  # shared address space (carrier NAT)
    "0.0.0.0",
    "0.1.2.3",
    "224.0.0.1",
    "239.255.255.250",
    "240.0.0.1",
    "255.255.255.255",
    "192.0.2.1",  # documentation
    "198.18.0.1",  # benchmarking
    "127.0.0.1",
    "127.8.9.10",
    "::1",
    "::",
    "fe80::1",
    "fe80::1%eth0",
    "fc00::1",
    "fd12:3456::1",
    "fec0::1",  # site-local
    "ff02::1",
    "2001:db8::1",
    "::ffff:10.0.0.1",  # IPv4-mapped
    "::ffff:127.0.0.1",
    "::ffff:169.254.169.254",
    "2002:a00:1::1",  # 6to4 of 10.0.0.1
    "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
    "not an address",
]
ALLOWED = ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:93.184.216.34", "2002:5db8:d822::1"]


@pytest.mark.parametrize("address", REFUSED)
def test_special_addresses_are_refused(address: str) -> None:
    assert address_problem(address) is not None


@pytest.mark.parametrize("address", ALLOWED)
def test_public_addresses_are_allowed(address: str) -> None:
    assert address_problem(address) is None


@pytest.mark.parametrize("address", ["127.0.0.1", "::1", "::ffff:127.0.0.1"])
def test_loopback_only_when_allowed(address: str) -> None:
    assert address_problem(address) is not None and address_problem(address, allow_loopback=True) is None
    assert address_problem("10.0.0.1", allow_loopback=True) is not None


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> PKI:
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture
def server(pki: PKI) -> t.Iterator[DocumentServer]:
    with DocumentServer(pki) as served:
        yield served


@pytest.fixture
def policy(pki: PKI) -> FetchPolicy:
    return FetchPolicy(max_bytes=1024, timeout=5, allow_loopback=True, ca_bundle=str(pki.ca_bundle))


def test_the_connection_goes_to_the_checked_address_with_the_name_kept(
    server: DocumentServer, policy: FetchPolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "client.test" exists in no DNS: it is reached only through the address checked for it. A second
    # resolution would answer a private address (DNS rebinding); none is ever made.
    answers = iter([["127.0.0.1"], ["10.0.0.1"]])
    asked: list[str] = []

    def resolve(host: str, port: int) -> list[str]:
        asked.append(host)
        return next(answers)

    monkeypatch.setattr(safe_fetch, "resolve", resolve)
    url = server.document("/client.json", {"ok": True}, host="client.test")
    assert fetch_json(url, policy).document == {"ok": True}
    assert asked == ["client.test"]
    seen = server.seen[0]
    assert seen.server_name == "client.test" and seen.host == f"client.test:{server.port}"


def test_every_resolved_address_must_be_public(
    policy: FetchPolicy, monkeypatch: pytest.MonkeyPatch, local_network_only: list[tuple[str, int]]
) -> None:
    monkeypatch.setattr(safe_fetch, "resolve", lambda host, port: ["93.184.216.34", "10.0.0.1"])
    with pytest.raises(FetchError, match=r"10\.0\.0\.1 is not a public address"):
        fetch_json("https://mixed.example/client.json", policy)
    assert local_network_only == []


def test_a_name_that_does_not_resolve_is_an_error(policy: FetchPolicy, monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(host: str, port: int) -> list[str]:
        raise OSError("no such name")

    monkeypatch.setattr(safe_fetch, "resolve", fail)
    with pytest.raises(FetchError, match="does not resolve"):
        fetch_json("https://nowhere.example/client.json", policy)


def test_proxies_from_the_environment_are_not_used(
    server: DocumentServer, policy: FetchPolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    url = server.document("/client.json", {"ok": True})
    assert fetch_json(url, policy).document == {"ok": True}


def test_http_is_refused(server: DocumentServer, policy: FetchPolicy) -> None:
    with pytest.raises(FetchError, match="only https"):
        fetch_json(f"http://localhost:{server.port}/client.json", policy)
    assert server.seen == []


def test_a_compressed_body_is_refused(server: DocumentServer, policy: FetchPolicy) -> None:
    server.answers["/c"] = Answer(b"\x1f\x8b", headers={"Content-Type": "application/json", "Content-Encoding": "gzip"})
    with pytest.raises(FetchError, match="compressed"):
        fetch_json(server.url("/c"), policy)


@pytest.mark.parametrize("status", [201, 204, 404, 500])
def test_only_200_is_a_document(server: DocumentServer, policy: FetchPolicy, status: int) -> None:
    server.answers["/c"] = Answer(b"{}", status)
    with pytest.raises(FetchError, match=f"HTTP {status}"):
        fetch_json(server.url("/c"), policy)


@pytest.mark.parametrize("content_type", ["application/json; charset=utf-8", "application/client-metadata+json"])
def test_json_content_types(server: DocumentServer, policy: FetchPolicy, content_type: str) -> None:
    server.answers["/c"] = Answer(b'{"a": 1}', headers={"Content-Type": content_type})
    assert fetch_json(server.url("/c"), policy).document == {"a": 1}


@pytest.mark.parametrize(
    ("header", "max_age"),
    [
        (None, None),
        ("max-age=120", 120),
        ("public, max-age=120, s-maxage=30", 30),
        ("no-store", 0),
        ("no-cache, max-age=600", 0),
        ("max-age=nonsense", 0),
        ("private", None),
    ],
)
def test_the_cache_lifetime_comes_from_cache_control(
    server: DocumentServer, policy: FetchPolicy, header: str | None, max_age: int | None
) -> None:
    headers = {"Content-Type": "application/json"}
    if header is not None:
        headers["Cache-Control"] = header
    server.answers["/c"] = Answer(b"{}", headers=headers)
    assert fetch_json(server.url("/c"), policy).max_age == max_age


def test_the_deadline_covers_a_body_that_stalls(server: DocumentServer, pki: PKI) -> None:
    server.answers["/c"] = Answer(b'{"a": "' + b"x" * 500 + b'"}', stall="body")
    with pytest.raises(FetchError, match=r"within 0\.3 seconds"):
        fetch_json(server.url("/c"), FetchPolicy(timeout=0.3, allow_loopback=True, ca_bundle=str(pki.ca_bundle)))


def test_the_deadline_covers_the_whole_body_not_each_read(server: DocumentServer, pki: PKI) -> None:
    # Every byte comes well within the time bound; all of them together do not.
    server.answers["/c"] = Answer(b'{"a": "' + b"x" * 200 + b'"}', drip=0.05)
    with pytest.raises(FetchError, match=r"within 0\.5 seconds"):
        fetch_json(server.url("/c"), FetchPolicy(timeout=0.5, allow_loopback=True, ca_bundle=str(pki.ca_bundle)))
