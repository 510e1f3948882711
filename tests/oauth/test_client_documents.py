"""Client ID Metadata Documents: a client_id URL fetched, checked, cached and used as the client."""

from __future__ import annotations

import typing as t
from html import unescape
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from flask import Flask
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flask_mcp import ConfigurationError
from flask_mcp.globals import state_for
from flask_mcp.oauth import safe_fetch
from flask_mcp.oauth.client_documents import client_id_url_problem
from tests.oauth.conftest import ISSUER, REDIRECT, RESOURCE, Flow, build_app, call_tool, csrf_of, pkce
from tests.oauth.document_server import PKI, Answer, DocumentServer, make_pki


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> PKI:
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture
def documents(pki: PKI) -> t.Iterator[DocumentServer]:
    with DocumentServer(pki) as server:
        yield server


def cimd_app(tmp_path: Path, pki: PKI, **config: t.Any) -> Flask:
    settings = {
        "MCP_OAUTH_CLIENT_METADATA_ALLOW_LOOPBACK": True,
        "MCP_OAUTH_CLIENT_METADATA_CA_BUNDLE": str(pki.ca_bundle),
        "MCP_OAUTH_CLIENT_METADATA_TIMEOUT": 5,
    }
    settings.update(config)
    return build_app(tmp_path, **settings)


@pytest.fixture
def app(tmp_path: Path, pki: PKI) -> Flask:
    return cimd_app(tmp_path, pki)


def publish(documents: DocumentServer, path: str = "/client.json", **overrides: t.Any) -> str:
    """Serve a valid document at *path* (members overridden or, with ``None``, left out); returns its URL."""
    url = documents.url(path)
    document = {
        "client_id": url,
        "client_name": "Document client",
        "logo_uri": "https://client.example/logo.png",
        "redirect_uris": [REDIRECT],
        "grant_types": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_method": "none",
    }
    document.update(overrides)
    headers = {"Content-Type": "application/json", "Cache-Control": "max-age=300"}
    documents.document(path, {key: value for key, value in document.items() if value is not None}, headers=headers)
    return url


class DocumentFlow(Flow):
    """The authorization code flow of a client whose client_id is its document's URL (no registration)."""

    def __init__(self, app: Flask, client_id: str, redirect_uri: str = REDIRECT) -> None:
        self.app = app
        self.browser = app.test_client()
        self.client = app.test_client()
        self.redirect_uri = redirect_uri
        self.verifier, self.challenge = pkce()
        self.client_id = client_id


def refused(answer: t.Any, *words: str) -> None:
    """*answer* is the error page of an invalid_client whose description has *words*."""
    html = unescape(answer.get_data(as_text=True))
    assert answer.status_code == 400, html
    assert "invalid_client" in html and "Location" not in answer.headers
    for word in words:
        assert word in html, html


def attempt(app: Flask, client_id: str) -> t.Any:
    flow = DocumentFlow(app, client_id)
    flow.login("alice")
    return flow.authorize()


# -- the metadata --------------------------------------------------------------


def test_the_metadata_advertises_client_id_documents(app: Flask) -> None:
    document = app.test_client().get("/.well-known/oauth-authorization-server").get_json()
    assert document["client_id_metadata_document_supported"] is True


def test_documents_can_be_switched_off(tmp_path: Path, pki: PKI, documents: DocumentServer) -> None:
    app = cimd_app(tmp_path, pki, MCP_OAUTH_CLIENT_METADATA_DOCUMENTS=False)
    document = app.test_client().get("/.well-known/oauth-authorization-server").get_json()
    assert document["client_id_metadata_document_supported"] is False
    answer = attempt(app, publish(documents))
    assert answer.status_code == 400 and "invalid_client" in answer.get_data(as_text=True)
    assert documents.seen == []


# -- the flow ------------------------------------------------------------------


def test_a_document_client_signs_alice_in_and_calls_whoami(app: Flask, documents: DocumentServer) -> None:
    url = publish(documents)
    flow = DocumentFlow(app, url)
    flow.login("alice")
    page = flow.authorize()
    html = page.get_data(as_text=True)
    assert page.status_code == 200, html
    assert 'id="consent-title">Document client <span class="badge" id="consent-unverified">Unverified</span>' in html
    assert 'wants to access your <span id="consent-service">notes</span> account' in html
    assert 'src="https://client.example/logo.png"' in html
    assert f'id="consent-client-host">localhost:{documents.port}<' in html
    assert 'id="consent-redirect-host">127.0.0.1:8765<' in html
    assert 'id="consent-local-warning"' in html  # loopback redirects only: anyone local could claim the name
    answer = flow.browser.post(
        "/oauth/authorize?" + urlencode(flow.authorize_params()),
        data={"csrf_token": csrf_of(html), "decision": "approve"},
    )
    query = parse_qs(urlsplit(answer.headers["Location"]).query)
    assert query["iss"] == [ISSUER]
    tokens = flow.exchange(query["code"][0])
    assert tokens.status_code == 200, tokens.get_data(as_text=True)
    body = call_tool(app, tokens.get_json()["access_token"], "whoami").get_data(as_text=True)
    assert '"alice"' in body or "alice" in body
    refreshed = flow.refresh(tokens.get_json()["refresh_token"])
    assert refreshed.status_code == 200, refreshed.get_data(as_text=True)


def test_a_redirect_uri_the_document_does_not_list_is_refused_on_a_page(app: Flask, documents: DocumentServer) -> None:
    flow = DocumentFlow(app, publish(documents), redirect_uri="http://127.0.0.1:8765/elsewhere")
    flow.login("alice")
    answer = flow.authorize()
    assert answer.status_code == 400 and "Location" not in answer.headers


def test_the_token_endpoint_refuses_a_client_id_whose_document_is_bad(app: Flask, documents: DocumentServer) -> None:
    url = publish(documents, client_id="https://client.example/other.json")
    answer = app.test_client().post(
        "/oauth/token",
        data={"grant_type": "authorization_code", "code": "x", "client_id": url, "code_verifier": "v" * 43},
    )
    assert answer.status_code in (400, 401) and answer.get_json()["error"] == "invalid_client"
    assert "client_id must be exactly the URL" in answer.get_json()["error_description"]


# -- caching -------------------------------------------------------------------


def test_a_document_is_kept_in_the_ephemeral_cache_for_its_max_age(app: Flask, documents: DocumentServer) -> None:
    url = publish(documents)
    assert attempt(app, url).status_code == 200
    assert attempt(app, url).status_code == 200
    assert len(documents.seen) == 1
    state = state_for(app, app.extensions["flask_mcp.oauth"].scopes.mcp)
    assert state is not None and state.ephemeral_cache is not None
    import hashlib

    assert state.ephemeral_cache.get("oauth-cimd:" + hashlib.sha256(url.encode()).hexdigest())["client_id"] == url


def test_a_no_store_document_is_fetched_each_time(app: Flask, documents: DocumentServer) -> None:
    url = publish(documents)
    documents.answers["/client.json"].headers["Cache-Control"] = "no-store"
    attempt(app, url)
    attempt(app, url)
    assert len(documents.seen) == 2


def test_cache_lifetimes_are_kept_within_the_floor_and_ceiling(tmp_path: Path, pki: PKI) -> None:
    app = cimd_app(tmp_path, pki, MCP_OAUTH_CLIENT_METADATA_CACHE_MIN=30, MCP_OAUTH_CLIENT_METADATA_CACHE_MAX=600)
    clients = app.extensions["flask_mcp.oauth"].server.clients
    assert [clients._lifetime(age) for age in (None, 0, 1, 100, 10**9)] == [30, 0, 30, 100, 600]


def test_a_failed_fetch_is_not_cached(app: Flask, documents: DocumentServer) -> None:
    url = documents.url("/client.json")
    refused(attempt(app, url), "HTTP 404")
    publish(documents)
    assert attempt(app, url).status_code == 200


# -- refused documents, each its own -------------------------------------------


def test_a_name_resolving_to_a_private_address_is_refused_before_any_connection(
    app: Flask, monkeypatch: pytest.MonkeyPatch, local_network_only: list[tuple[str, int]]
) -> None:
    monkeypatch.setattr(safe_fetch, "resolve", lambda host, port: ["10.1.2.3"])
    refused(attempt(app, "https://intranet.example/client.json"), "10.1.2.3 is not a public address")
    monkeypatch.setattr(safe_fetch, "resolve", lambda host, port: ["192.168.0.7"])
    refused(attempt(app, "https://home.example/client.json"), "192.168.0.7 is not a public address")
    assert local_network_only == []


def test_a_private_ip_literal_url_is_refused(app: Flask, local_network_only: list[tuple[str, int]]) -> None:
    refused(attempt(app, "https://169.254.169.254/latest/meta-data"), "not a public address")
    refused(attempt(app, "https://[::ffff:10.0.0.1]/client.json"), "not a public address")
    assert local_network_only == []


def test_a_non_https_url_is_refused(app: Flask, documents: DocumentServer) -> None:
    refused(attempt(app, f"http://localhost:{documents.port}/client.json"), "must be an https URL")
    assert documents.seen == []


def test_a_document_larger_than_the_bound_is_refused(tmp_path: Path, pki: PKI, documents: DocumentServer) -> None:
    app = cimd_app(tmp_path, pki, MCP_OAUTH_CLIENT_METADATA_MAX_BYTES=1024)
    url = publish(documents, client_name="x" * 150, software_id="y" * 1000)
    refused(attempt(app, url), "larger than 1024 bytes")
    documents.answers["/client.json"].no_length = True  # the same, streamed without a length
    refused(attempt(app, url), "larger than 1024 bytes")


def test_a_document_slower_than_the_time_bound_is_refused(tmp_path: Path, pki: PKI, documents: DocumentServer) -> None:
    app = cimd_app(tmp_path, pki, MCP_OAUTH_CLIENT_METADATA_TIMEOUT=0.5)
    url = publish(documents)
    documents.answers["/client.json"].stall = "body"
    refused(attempt(app, url), "did not answer within 0.5 seconds")
    documents.answers["/client.json"].stall = "headers"
    refused(attempt(app, url), "did not answer within 0.5 seconds")


def test_a_redirect_to_a_private_address_is_not_followed(
    app: Flask, documents: DocumentServer, local_network_only: list[tuple[str, int]]
) -> None:
    url = documents.url("/client.json")
    documents.answers["/client.json"] = Answer(b"", 302, {"Location": "https://10.0.0.1/client.json"})
    refused(attempt(app, url), "redirects are not followed")
    assert [seen.path for seen in documents.seen] == ["/client.json"]
    assert {address for address, _ in local_network_only} == {"127.0.0.1"}


def test_a_document_whose_client_id_differs_from_its_url_is_refused(app: Flask, documents: DocumentServer) -> None:
    url = publish(documents, client_id=documents.url("/client.json") + "?v=2")
    refused(attempt(app, url), "client_id must be exactly the URL")


def test_a_document_that_is_not_json_is_refused(app: Flask, documents: DocumentServer) -> None:
    url = documents.url("/client.json")
    documents.answers["/client.json"] = Answer(b"<html>hello</html>", headers={"Content-Type": "text/html"})
    refused(attempt(app, url), "not application/json")
    documents.answers["/client.json"] = Answer(b"{not json", headers={"Content-Type": "application/json"})
    refused(attempt(app, url), "not valid JSON")
    documents.answers["/client.json"] = Answer(b"[" * 4000, headers={"Content-Type": "application/json"})
    refused(attempt(app, url), "not valid JSON")


def test_a_document_without_redirect_uris_is_refused(app: Flask, documents: DocumentServer) -> None:
    refused(attempt(app, publish(documents, redirect_uris=None)), "redirect_uris")
    refused(attempt(app, publish(documents, redirect_uris=[])), "redirect_uris")
    refused(attempt(app, publish(documents, redirect_uris=["javascript:alert(1)"])), "redirect_uris")


def test_loopback_is_refused_outside_testing_mode(tmp_path: Path, pki: PKI, documents: DocumentServer) -> None:
    with pytest.raises(ConfigurationError, match="TESTING"):
        cimd_app(tmp_path, pki, TESTING=False)
    app = cimd_app(tmp_path, pki, MCP_OAUTH_CLIENT_METADATA_ALLOW_LOOPBACK=False)
    refused(attempt(app, publish(documents)), "127.0.0.1 is a loopback address")
    app = cimd_app(tmp_path, pki)
    app.testing = False  # turned off after setup: loopback is refused from then on
    refused(attempt(app, publish(documents)), "127.0.0.1 is a loopback address")
    assert documents.seen == []


@pytest.mark.parametrize(
    ("members", "reason"),
    [
        ({"token_endpoint_auth_method": "client_secret_basic"}, "use none"),
        ({"token_endpoint_auth_method": "private_key_jwt"}, "private_key_jwt is not supported"),
        ({"client_secret": "s3cret"}, "must not hold client_secret"),
        ({"client_name": None}, "client_name"),
        ({"client_name": ["x"]}, "client_name"),
        ({"grant_types": ["client_credentials"]}, "grant_types"),
        ({"redirect_uris": "http://127.0.0.1:8765/callback"}, "redirect_uris"),
    ],
)
def test_documents_a_public_client_cannot_use_are_refused(
    app: Flask, documents: DocumentServer, members: dict[str, t.Any], reason: str
) -> None:
    refused(attempt(app, publish(documents, **members)), reason)


def test_a_document_that_is_not_an_object_is_refused(app: Flask, documents: DocumentServer) -> None:
    url = documents.url("/client.json")
    documents.document("/client.json", [url])
    refused(attempt(app, url), "JSON object")


def test_an_untrusted_certificate_is_refused(tmp_path: Path, pki: PKI, documents: DocumentServer) -> None:
    app = cimd_app(tmp_path, pki, MCP_OAUTH_CLIENT_METADATA_CA_BUNDLE=None)
    refused(attempt(app, publish(documents)), "certificate could not be verified")


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://client.example/client.json#frag", "no fragment"),
        ("https://client.example/a/../client.json", "'..'"),
        ("https://client.example/a/%2e%2e/client.json", "'..'"),
        ("https://client.example", "has a path"),
        ("https://client.example/", "has a path"),
        ("https://user:pw@client.example/client.json", "no user info"),
        ("https://client.example:99999/client.json", "port"),
        ("https://client.example/" + "a" * 200, "at most 128"),
        ("https://client.example/a b", "without spaces"),
        ("ftp://client.example/client.json", "https URL"),
        ("HTTPS://client.example/client.json", "https URL"),
    ],
)
def test_client_id_urls_that_break_the_rules_are_refused(app: Flask, url: str, reason: str) -> None:
    assert client_id_url_problem(url) is not None
    refused(attempt(app, url), reason)


def test_fetches_are_rate_limited_per_address(tmp_path: Path, pki: PKI, documents: DocumentServer) -> None:
    app = cimd_app(tmp_path, pki, MCP_OAUTH_CLIENT_METADATA_RATE_LIMIT="2/hour")
    urls = [publish(documents, f"/client{index}.json") for index in range(3)]
    assert [attempt(app, url).status_code for url in urls[:2]] == [200, 200]
    answer = attempt(app, urls[2])
    assert answer.status_code == 400 and "slow_down" in answer.get_data(as_text=True)
    assert len(documents.seen) == 2
    assert attempt(app, urls[0]).status_code == 200  # kept in the cache: no fetch, no count


# -- hostile client_id URLs ----------------------------------------------------

HOSTS = st.one_of(
    st.sampled_from(["localhost", "client.example", "10.0.0.1", "[::1]", "[fe80::1%25eth0]", "0x7f.1", "127.1", ""]),
    st.text(st.characters(codec="ascii", exclude_categories=["Cc"]), max_size=20),
)
URLS = st.one_of(
    st.builds(
        lambda scheme, host, port, path: f"{scheme}://{host}{port}{path}",
        st.sampled_from(["https", "http", "HTTPS", "file", "javascript", "gopher"]),
        HOSTS,
        st.sampled_from(["", ":0", ":443", ":99999", ":-1", ":x", ":8443"]),
        st.text(max_size=40).map(lambda text: "/" + text),
    ),
    st.text(max_size=60).map(lambda text: "https://" + text),
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    url=URLS,
    endpoint=st.sampled_from(["authorize", "token", "revoke"]),
    address=st.sampled_from(["192.0.2.10", "93.184.216.34", "::ffff:10.0.0.1"]),
)
def test_hostile_client_id_urls_never_give_a_5xx(
    app: Flask, monkeypatch: pytest.MonkeyPatch, url: str, endpoint: str, address: str
) -> None:
    # Names resolve to a refused or a public address; no connection is ever opened (refused at once).
    def refuse(address: str, port: int, timeout: float) -> t.NoReturn:
        raise ConnectionRefusedError(address)

    monkeypatch.setattr(safe_fetch, "resolve", lambda host, port: [address])
    monkeypatch.setattr(safe_fetch, "open_connection", refuse)
    client = app.test_client()
    if endpoint == "authorize":
        flow = DocumentFlow(app, url)
        flow.login("alice")
        answer = flow.authorize()
    else:
        path = "/oauth/token" if endpoint == "token" else "/oauth/revoke"
        data = {"client_id": url, "grant_type": "authorization_code", "code": "c", "token": "t", "resource": RESOURCE}
        answer = client.post(path, data=data)
    assert answer.status_code < 500, answer.get_data(as_text=True)
