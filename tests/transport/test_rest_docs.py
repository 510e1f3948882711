"""The REST docs page and the files it loads: always served, no inline script, a strict policy."""

from __future__ import annotations

import re
import typing as t

import pytest
from flask import Flask

from flask_mcp import MCP
from flask_mcp.transport import rest
from flask_mcp.transport.swagger_page import INITIALISER, assets_directory, assets_version, swagger_ui_page

TOKENS = {"s3cr3t": "ada"}


@pytest.fixture
def app(mcp: MCP, make_app: t.Callable[..., Flask]) -> Flask:
    mcp.tool(name="add", permissions=[])(lambda a, b: a + b)
    return make_app(mcp, MCP_STATELESS=True)


def test_page_loads_everything_from_the_app(app: Flask) -> None:
    """By default: nothing from a CDN, the installed copy of Swagger UI."""
    response = app.test_client().get("/mcp/rest/docs")
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    html = response.get_data(as_text=True)
    version = assets_version()
    assert version  # the installed package says which Swagger UI it holds
    assert f'<script src="/mcp/rest/docs/swagger-ui/swagger-ui-bundle.js?v={version}"></script>' in html
    assert f'<link rel="stylesheet" href="/mcp/rest/docs/swagger-ui/swagger-ui.css?v={version}">' in html
    assert '<script src="/mcp/rest/docs/swagger-initializer.js"></script>' in html
    assert 'data-openapi-url="/mcp/rest/openapi.json"' in html
    # Every script is a file: no inline code for the policy to allow.
    assert re.findall(r"<script[^>]*>", html) == [
        f'<script src="/mcp/rest/docs/swagger-ui/swagger-ui-bundle.js?v={version}">',
        '<script src="/mcp/rest/docs/swagger-initializer.js">',
    ]
    assert "http://" not in html and "https://" not in html


def test_page_policy(app: Flask) -> None:
    headers = app.test_client().get("/mcp/rest/docs").headers
    policy = dict(directive.split(" ", 1) for directive in headers["Content-Security-Policy"].split("; "))
    assert policy["default-src"] == "'none'"
    assert policy["script-src"] == "'self'"
    assert policy["style-src"] == "'self'"
    assert policy["connect-src"] == "'self'"
    assert policy["frame-ancestors"] == "'self'"
    assert "unsafe-inline" not in headers["Content-Security-Policy"]
    assert headers["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize("auth_openapi", [None, True, False])
def test_page_served_without_a_credential(
    mcp: MCP, make_app: t.Callable[..., Flask], auth_openapi: bool | None
) -> None:
    mcp.tool(name="add", permissions=[])(lambda a, b: a + b)
    app = make_app(mcp, MCP_STATELESS=True, MCP_AUTH_TOKENS=TOKENS, MCP_AUTH_OPENAPI=auth_openapi)
    client = app.test_client()
    assert client.get("/mcp/rest/docs").status_code == 200
    assert client.get("/mcp/rest/docs/swagger-initializer.js").status_code == 200
    assert client.get("/mcp/rest/docs/swagger-ui/swagger-ui.css").status_code == 200
    # The document itself follows MCP_AUTH_OPENAPI (a protected server's needs a credential by default).
    assert client.get("/mcp/rest/openapi.json").status_code == (200 if auth_openapi is False else 401)
    assert client.post("/mcp/rest/tools/add", json={"a": 1, "b": 2}).status_code == 401


def test_assets_come_from_the_installed_package(app: Flask) -> None:
    directory = assets_directory()
    assert directory is not None
    client = app.test_client()
    for name, mimetype in [("swagger-ui-bundle.js", "text/javascript"), ("swagger-ui.css", "text/css")]:
        response = client.get(f"/mcp/rest/docs/swagger-ui/{name}")
        assert response.status_code == 200
        assert response.mimetype == mimetype
        assert response.get_data() == (directory / name).read_bytes()
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert "max-age=86400" in response.headers["Cache-Control"]
        again = client.get(f"/mcp/rest/docs/swagger-ui/{name}", headers={"If-None-Match": response.headers["ETag"]})
        assert again.status_code == 304


def test_bundled_swagger_ui_reads_openapi_31() -> None:
    # Swagger UI 4 refuses "openapi: 3.1.0" documents; 5 is the first to render them.
    assert int(assets_version().split(".")[0]) >= 5


@pytest.mark.parametrize(
    "path",
    [
        "/mcp/rest/docs/swagger-ui/nope.js",
        "/mcp/rest/docs/swagger-ui/../../../setup.cfg",
        "/mcp/rest/docs/swagger-ui/%2e%2e/%2e%2e/__init__.py",
        "/mcp/rest/docs/swagger-ui/",
    ],
)
def test_unknown_assets_are_json_404s(app: Flask, path: str) -> None:
    response = app.test_client().get(path)
    assert response.status_code == 404
    assert response.mimetype == "application/json"
    assert response.get_json()["error"].startswith("Not Found")


def test_missing_package_is_a_json_404(app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rest, "assets_directory", lambda: None)
    response = app.test_client().get("/mcp/rest/docs/swagger-ui/swagger-ui-bundle.js")
    assert response.status_code == 404
    assert "pip install flask-swagger-ui" in response.get_json()["error"]


def test_initialiser(app: Flask) -> None:
    client = app.test_client()
    response = client.get("/mcp/rest/docs/swagger-initializer.js")
    assert response.status_code == 200
    assert response.mimetype == "text/javascript"
    assert response.get_data(as_text=True) == INITIALISER
    assert "validatorUrl: null" in INITIALISER  # nothing fetched from the internet
    again = client.get("/mcp/rest/docs/swagger-initializer.js", headers={"If-None-Match": response.headers["ETag"]})
    assert again.status_code == 304


@pytest.mark.parametrize(
    "path", ["/mcp/rest/docs", "/mcp/rest/docs/swagger-initializer.js", "/mcp/rest/docs/swagger-ui/swagger-ui.css"]
)
def test_docs_routes_answer_json_405_and_options(app: Flask, path: str) -> None:
    client = app.test_client()
    refused = client.post(path)
    assert refused.status_code == 405
    assert refused.get_json() == {"error": "Method Not Allowed: POST (allowed: GET, HEAD)"}
    assert client.options(path).headers["Allow"] == "GET, HEAD, OPTIONS"
    assert client.head(path).status_code == 200


@pytest.mark.parametrize(
    "path", ["/mcp/rest/docs", "/mcp/rest/docs/swagger-initializer.js", "/mcp/rest/docs/swagger-ui/swagger-ui.css"]
)
def test_docs_routes_keep_the_host_guard(mcp: MCP, make_app: t.Callable[..., Flask], path: str) -> None:
    app = make_app(mcp, MCP_STATELESS=True, MCP_ALLOWED_HOSTS=["localhost"])
    response = app.test_client().get(path, headers={"Host": "evil.example"})
    assert response.status_code == 403
    assert response.get_json() == {"error": "Forbidden: host 'evil.example' is not allowed"}


def test_configured_assets_url(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    app = make_app(mcp, MCP_STATELESS=True, MCP_SWAGGER_UI_URL="https://cdn.example/swagger-ui/")
    response = app.test_client().get("/mcp/rest/docs")
    html = response.get_data(as_text=True)
    assert '<script src="https://cdn.example/swagger-ui/swagger-ui-bundle.js"></script>' in html
    assert '<link rel="stylesheet" href="https://cdn.example/swagger-ui/swagger-ui.css">' in html
    policy = response.headers["Content-Security-Policy"]
    assert "script-src 'self' https://cdn.example;" in policy
    assert "style-src 'self' https://cdn.example;" in policy


def test_configured_local_assets_url(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    app = make_app(mcp, MCP_STATELESS=True, MCP_SWAGGER_UI_URL="/static/swagger/")
    response = app.test_client().get("/mcp/rest/docs")
    assert '<script src="/static/swagger/swagger-ui-bundle.js"></script>' in response.get_data(as_text=True)
    assert "script-src 'self';" in response.headers["Content-Security-Policy"]


def test_custom_prefix_and_script_root(mcp: MCP, make_app: t.Callable[..., Flask]) -> None:
    app = make_app(mcp, MCP_STATELESS=True, MCP_REST_PREFIX="/api/", MCP_SWAGGER_UI_URL="")
    client = app.test_client()
    html = client.get("/api/docs", environ_overrides={"SCRIPT_NAME": "/shop"}).get_data(as_text=True)
    assert 'data-openapi-url="/shop/api/openapi.json"' in html
    assert '<script src="/shop/api/docs/swagger-initializer.js"></script>' in html
    assert "/shop/api/docs/swagger-ui/swagger-ui-bundle.js" in html
    assert client.get("/api/docs/swagger-ui/swagger-ui.css").status_code == 200


def test_page_escapes() -> None:
    html = swagger_ui_page("<b>", '/x"</script>', 'https://cdn"x', "/init.js")
    assert "<b>" not in html and "&lt;b&gt;" in html
    assert 'href="https://cdn&quot;x/swagger-ui.css"' in html
    assert 'data-openapi-url="/x&quot;&lt;/script&gt;"' in html
