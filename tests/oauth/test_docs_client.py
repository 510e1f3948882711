"""The REST docs page as a public client the app's own authorization server knows."""

from __future__ import annotations

import html
import json
import re
import typing as t
from pathlib import Path
from urllib.parse import urljoin

import pytest
from flask import Flask

from flask_mcp.oauth.docs_client import docs_client_id, docs_redirect_uri, ensure_docs_client
from tests.conftest import BOTH_DATABASES
from tests.oauth.conftest import RESOURCE, build_app, pkce

DOCS = "flask-mcp-docs"
REDIRECT = "http://localhost/mcp/rest/docs/swagger-ui/oauth2-redirect.html"


def attribute_of(app: Flask, name: str, base_url: str = "http://localhost/") -> str | None:
    """The docs page's ``data-<name>`` attribute, the page asked for under *base_url*."""
    page = app.test_client().get("/mcp/rest/docs", base_url=base_url).get_data(as_text=True)
    match = re.search(rf'data-{name}="([^"]*)"', page)
    return html.unescape(match.group(1)) if match else None


def data_of(app: Flask, name: str) -> t.Any:
    value = attribute_of(app, name)
    return json.loads(value) if value is not None else None


@BOTH_DATABASES
def test_the_page_is_a_public_client_the_operator_made(app: Flask) -> None:
    client = app.extensions["flask_mcp.oauth"].store.client(DOCS)
    assert client is not None and client.operator_made and client.auth_method == "none"
    assert client.redirect_uris == [REDIRECT]
    assert client.client_metadata["grant_types"] == ["authorization_code", "refresh_token"]
    assert not client.check_grant_type("client_credentials")  # public: no token for itself
    assert client.scopes == ["notes:read", "notes:write"]


@BOTH_DATABASES
def test_starting_again_keeps_one_record_brought_up_to_date(app: Flask) -> None:
    store = app.extensions["flask_mcp.oauth"].store
    before = store.row_counts()["mcp_oauth_client"]
    ensure_docs_client(store, DOCS, "http://localhost/elsewhere/oauth2-redirect.html", ["notes:read"])
    ensure_docs_client(store, DOCS, "http://localhost/elsewhere/oauth2-redirect.html", ["notes:read"])
    client = store.client(DOCS)
    assert client is not None and client.redirect_uris == ["http://localhost/elsewhere/oauth2-redirect.html"]
    assert client.scopes == ["notes:read"] and store.row_counts()["mcp_oauth_client"] == before


@BOTH_DATABASES
def test_another_process_starting_on_the_same_database_keeps_the_one_record(
    app: Flask, tmp_path: Path, database_uri: str
) -> None:
    store = app.extensions["flask_mcp.oauth"].store
    before = store.client(DOCS)
    again = build_app(tmp_path, MCP_OAUTH_DATABASE_URI=database_uri)
    assert again.extensions["flask_mcp.oauth"].store.row_counts()["mcp_oauth_client"] == 1
    after = store.client(DOCS)
    assert before is not None and after is not None and after.issued_at == before.issued_at


@BOTH_DATABASES
def test_a_process_that_loses_the_race_to_make_it_carries_on(app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    store = app.extensions["flask_mcp.oauth"].store
    store.remove_client(DOCS)
    add_client = store.add_client

    def made_by_another_first(*args: t.Any, **kwargs: t.Any) -> t.Any:
        add_client(*args, **kwargs)  # the other process, between this one's look-up and its insert
        return add_client(*args, **kwargs)

    monkeypatch.setattr(store, "add_client", made_by_another_first)
    ensure_docs_client(store, DOCS, REDIRECT, ["notes:read"])
    client = store.client(DOCS)
    assert client is not None and client.operator_made and store.row_counts()["mcp_oauth_client"] == 1


def test_the_page_is_given_its_client_and_resource(tmp_path: Path) -> None:
    oauth = data_of(build_app(tmp_path), "oauth")
    assert oauth["clientId"] == DOCS and oauth["additionalQueryStringParams"] == {"resource": RESOURCE}
    assert oauth["scopes"] == ["notes:read", "notes:write"]


def test_a_protected_page_starts_on_the_schemes_alone(tmp_path: Path) -> None:
    app = build_app(tmp_path)
    shell = data_of(app, "openapi-shell")
    assert shell["paths"] == {} and set(shell["components"]["securitySchemes"]) == {"bearerAuth", "oauth2"}
    assert "whoami" not in json.dumps(shell)
    assert app.test_client().get("/mcp/rest/openapi.json").status_code == 401
    public = build_app(tmp_path / "public", MCP_AUTH_OPENAPI=False)
    assert data_of(public, "openapi-shell") is None
    assert public.test_client().get("/mcp/rest/openapi.json").status_code == 200


def test_the_code_flow_from_the_page_completes_with_pkce_and_no_secret(tmp_path: Path) -> None:
    """What Authorize does, step by step: authorize as the page's client, then the token request."""
    from urllib.parse import parse_qs, urlencode, urlsplit

    from tests.oauth.conftest import csrf_of

    app = build_app(tmp_path)
    browser = app.test_client()
    browser.post("/login", data={"username": "alice"})
    verifier, challenge = pkce()
    query = urlencode(
        {
            "response_type": "code",
            "client_id": DOCS,
            "redirect_uri": REDIRECT,
            "scope": "notes:read",
            "state": "s",
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "resource": RESOURCE,
        }
    )
    page = browser.get("/oauth/authorize?" + query)
    assert page.status_code == 200 and "Unverified" not in page.get_data(as_text=True)
    answer = browser.post(
        "/oauth/authorize?" + query, data={"csrf_token": csrf_of(page.get_data(as_text=True)), "decision": "approve"}
    )
    code = parse_qs(urlsplit(answer.headers["Location"]).query)["code"][0]
    token = app.test_client().post(
        "/oauth/token",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT,
            "client_id": DOCS,
            "code_verifier": verifier,
        },
    )
    assert token.status_code == 200, token.get_data(as_text=True)
    headers = {"Authorization": f"Bearer {token.get_json()['access_token']}"}
    document = app.test_client().get("/mcp/rest/openapi.json", headers=headers)
    assert document.status_code == 200 and "/mcp/rest/tools/whoami" in document.get_json()["paths"]
    # Another redirect URI is refused: the page's answers go to the page alone.
    elsewhere = browser.get("/oauth/authorize?" + query.replace("oauth2-redirect", "evil"))
    assert elsewhere.status_code == 400


def test_ids_and_redirects_per_server() -> None:
    assert docs_client_id("mcp") == DOCS and docs_client_id("admin_mcp") == "flask-mcp-docs-admin_mcp"
    assert docs_redirect_uri("https://notes.example.com/mcp", "/mcp", "/api/") == (
        "https://notes.example.com/api/docs/swagger-ui/oauth2-redirect.html"
    )
    # An app mounted under /shop: its resource holds the script root, and so does the page's URL.
    assert docs_redirect_uri("https://notes.example.com/shop/mcp/", "/mcp", "/mcp/rest") == (
        "https://notes.example.com/shop/mcp/rest/docs/swagger-ui/oauth2-redirect.html"
    )


@pytest.mark.parametrize("mounted", ["", "/shop"])
def test_the_page_comes_back_to_the_redirect_uri_its_client_has(tmp_path: Path, mounted: str) -> None:
    """Swagger UI resolves the page's redirect URL against the page: the registered one, mounted or not."""
    app = build_app(tmp_path, MCP_AUTH_RESOURCE=f"http://localhost{mounted}/mcp")
    named = attribute_of(app, "oauth2-redirect-url", base_url=f"http://localhost{mounted}/")
    assert named is not None
    client = app.extensions["flask_mcp.oauth"].store.client(DOCS)
    assert client is not None
    assert client.redirect_uris == [urljoin(f"http://localhost{mounted}/mcp/rest/docs", named)]
    assert client.redirect_uris == [f"http://localhost{mounted}/mcp/rest/docs/swagger-ui/oauth2-redirect.html"]


def test_a_row_of_that_id_made_otherwise_becomes_the_public_client(tmp_path: Path) -> None:
    app = build_app(tmp_path)
    store = app.extensions["flask_mcp.oauth"].store
    store.remove_client(DOCS)
    store.add_client(DOCS, "a-secret", {"redirect_uris": ["https://evil.example/cb"]})
    ensure_docs_client(store, DOCS, REDIRECT, ["notes:read"])
    client = store.client(DOCS)
    assert client is not None and client.operator_made and client.auth_method == "none"
    assert client.secret_hash is None and client.redirect_uris == [REDIRECT]
