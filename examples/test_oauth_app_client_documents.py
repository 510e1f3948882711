"""examples/oauth_app with the official Python SDK's OAuth client identified by a Client ID Metadata Document.

The client's document is served over local TLS by a server of the test's
own (a CA and a certificate made here); the app trusts that CA through
``MCP_OAUTH_CLIENT_METADATA_CA_BUNDLE`` and may fetch from loopback because
it runs in testing mode. The SDK sees ``client_id_metadata_document_supported``
in the metadata, uses its ``client_metadata_url`` as its ``client_id``
without registering, and the user (an HTTP session) signs in and consents.
"""

from __future__ import annotations

import typing as t
from pathlib import Path

import pytest
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import OAuthClientMetadata

from examples.test_oauth_app import CALLBACK, MemoryStorage, Served, User, connect, load, text
from flask_mcp.oauth import safe_fetch
from tests.oauth.document_server import DocumentServer, make_pki

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def documents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> t.Iterator[tuple[DocumentServer, Path]]:
    # The document's host name is reached on this machine only, whatever the system resolver says.
    monkeypatch.setattr(safe_fetch, "resolve", lambda host, port: ["127.0.0.1"])
    pki = make_pki(tmp_path)
    with DocumentServer(pki) as server:
        yield server, pki.ca_bundle


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
async def test_the_sdk_client_with_a_metadata_document_calls_whoami_as_alice(
    documents: tuple[DocumentServer, Path], mode: str
) -> None:
    server, ca_bundle = documents
    url = server.document(
        "/oauth/client.json",
        {
            "client_id": server.url("/oauth/client.json"),
            "client_name": "SDK document client",
            "redirect_uris": [CALLBACK],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        },
    )
    config = {
        "TESTING": True,
        "MCP_OAUTH_CLIENT_METADATA_ALLOW_LOOPBACK": True,
        "MCP_OAUTH_CLIENT_METADATA_CA_BUNDLE": str(ca_bundle),
    }
    alice, storage = User("alice"), MemoryStorage()
    with Served(load(), **config) as served:
        auth = OAuthClientProvider(
            served.base + "/mcp",
            OAuthClientMetadata(
                client_name="SDK document client",
                redirect_uris=[CALLBACK],
                grant_types=["authorization_code", "refresh_token"],
                token_endpoint_auth_method="none",
            ),
            storage,
            redirect_handler=alice.redirect_handler,
            callback_handler=alice.callback_handler,
            client_metadata_url=url,
        )
        async with connect(served, auth, mode) as client:
            assert text(await client.call_tool("whoami", {})) == "alice"
        # The client never registered: its id is its document's URL, fetched once and then kept.
        assert served.app is not None and served.app.extensions["flask_mcp.oauth"].store.client(url) is None
    assert storage.client_info is not None and storage.client_info.client_id == url
    assert alice.consent_pages == 1
    assert [seen.path for seen in server.seen] == ["/oauth/client.json"]
