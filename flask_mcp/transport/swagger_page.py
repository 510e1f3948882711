"""The interactive docs page of the REST adapter: Swagger UI, with nothing fetched from elsewhere.

``<MCP_REST_PREFIX>/docs`` is a static HTML page
(:func:`swagger_ui_page`): it holds no data and
no inline script, so it is served to anyone, and under a strict
Content-Security-Policy (:func:`content_security_policy`). It loads

* Swagger UI's ``swagger-ui-bundle.js`` and ``swagger-ui.css`` from
  ``<prefix>/docs/swagger-ui/``, where the REST routes serve the files of the
  installed ``flask-swagger-ui`` package (:func:`assets_directory`); or from
  ``MCP_SWAGGER_UI_URL`` when that is set;
* :data:`INITIALISER`, served as ``<prefix>/docs/swagger-initializer.js``,
  which starts Swagger UI on the document named in the page's
  ``data-openapi-url`` attribute (with PKCE for the OAuth code flow, and the
  package's ``oauth2-redirect.html``, named in ``data-oauth2-redirect-url``,
  to come back to). When the document answers 401 (a protected server's, by
  default), it starts on ``data-openapi-shell`` (the security schemes alone),
  says to sign in, and loads the document again with the credential
  **Authorize** got. ``data-oauth`` holds the ``initOAuth`` options with which
  Authorize signs in through the app's own authorization server.

The bundled Swagger UI is version 5, the first to read OpenAPI 3.1
documents; so the page works offline, behind a firewall and under a policy
that allows no third-party script.
"""

from __future__ import annotations

import functools
import html
import importlib.util
import json
import typing as t
from pathlib import Path
from urllib.parse import urlsplit

__all__ = [
    "ASSETS_PACKAGE",
    "ASSETS_PATH",
    "INITIALISER",
    "INITIALISER_PATH",
    "assets_directory",
    "assets_version",
    "content_security_policy",
    "swagger_ui_page",
]

#: The PyPI distribution whose ``dist`` folder holds Swagger UI 5 (its import name).
ASSETS_PACKAGE = "flask_swagger_ui"
#: Where Swagger UI's files are served, under the REST prefix.
ASSETS_PATH = "/docs/swagger-ui"
#: Where :data:`INITIALISER` is served, under the REST prefix.
INITIALISER_PATH = "/docs/swagger-initializer.js"

#: Starts Swagger UI. A file of its own rather than an inline ``<script>``, so
#: that the page's policy can forbid inline scripts.
INITIALISER = """\
// Starts Swagger UI on the OpenAPI document named by the page (flask_mcp).
(function () {
  "use strict";
  var root = document.getElementById("swagger-ui");
  var note = document.getElementById("openapi-unauthorized");
  var documentUrl = new URL(root.getAttribute("data-openapi-url"), window.location.href).href;
  // The schemes alone, for a document that needs a credential: Authorize works before it loads.
  var shell = JSON.parse(root.getAttribute("data-openapi-shell") || "null");
  // How Authorize signs in through the app's own authorization server (client id, resource).
  var signIn = JSON.parse(root.getAttribute("data-oauth") || "{}");
  var waiting = false;  // the document answered 401: load it again once signed in

  // The credential Authorize holds, as a header: OAuth tokens, bearer tokens, basic, API keys.
  function credential() {
    var found = null;
    var authorized = window.ui ? window.ui.authSelectors.authorized() : null;
    if (!authorized) { return null; }
    authorized.forEach(function (value) {
      if (found) { return; }
      var schema = value.get("schema");
      var token = value.getIn(["token", "access_token"]);
      var given = value.get("value");
      if (token) {
        found = ["Authorization", "Bearer " + token];
      } else if (schema && given && schema.get("type") === "http" && schema.get("scheme") === "bearer") {
        found = ["Authorization", "Bearer " + given];
      } else if (schema && given && schema.get("type") === "http" && schema.get("scheme") === "basic") {
        found = ["Authorization", "Basic " + btoa(given.get("username") + ":" + given.get("password"))];
      } else if (schema && given && schema.get("type") === "apiKey" && schema.get("in") === "header") {
        found = [schema.get("name"), given];
      }
    });
    return found;
  }

  function reloadWhenSignedIn(system) {
    if (waiting && credential()) {
      system.specActions.updateUrl(documentUrl);
      system.specActions.download(documentUrl);
    }
  }

  // After Authorize stores a credential, a document that needed one is fetched again with it.
  var SignInPlugin = function () {
    var after = function (original, system) {
      return function (payload) {
        var result = original(payload);
        reloadWhenSignedIn(system);
        return result;
      };
    };
    return { statePlugins: { auth: { wrapActions: { authorize: after, authorizeOauth2: after } } } };
  };

  function start(source) {
    var options = {
      domNode: root,
      deepLinking: true,
      plugins: [SignInPlugin],
      // Where an OAuth authorization server sends the browser back with the code.
      oauth2RedirectUrl: new URL(root.getAttribute("data-oauth2-redirect-url"), window.location.href).href,
      // No validity badge: it is an image from a validator on the internet.
      validatorUrl: null,
      requestInterceptor: function (request) {
        var header = request.url === documentUrl ? credential() : null;
        if (header) { request.headers[header[0]] = header[1]; }
        return request;
      },
      responseInterceptor: function (response) {
        if (response.url === documentUrl) {
          note.hidden = response.status !== 401;
          if (response.ok) { waiting = false; }
        }
        return response;
      }
    };
    Object.keys(source).forEach(function (key) { options[key] = source[key]; });
    window.ui = SwaggerUIBundle(options);
    // OAuth 2.1 (and flask_mcp's own authorization server) requires PKCE for the code flow.
    var oauth = { usePkceWithAuthorizationCodeGrant: true };
    Object.keys(signIn).forEach(function (key) { oauth[key] = signIn[key]; });
    window.ui.initOAuth(oauth);
  }

  if (!shell) {
    start({ url: documentUrl });
    return;
  }
  // A cookie the browser holds may be enough; otherwise the page starts with Authorize only.
  fetch(documentUrl, { credentials: "same-origin" }).then(function (response) {
    if (response.status === 401) {
      waiting = true;
      note.hidden = false;
      start({ spec: shell });
    } else {
      start({ url: documentUrl });
    }
  }, function () { start({ url: documentUrl }); });
})();
"""


@functools.cache
def assets_directory() -> Path | None:
    """The ``dist`` folder of the installed ``flask-swagger-ui``, or ``None`` when it is missing.

    Found without importing the package, which would import its own blueprint.
    """
    spec = importlib.util.find_spec(ASSETS_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    directory = Path(next(iter(spec.submodule_search_locations))) / "dist"
    return directory if (directory / "swagger-ui-bundle.js").is_file() else None


@functools.cache
def assets_version() -> str:
    """The bundled Swagger UI's version (``""`` when unknown), which the page puts in the asset URLs.

    A new version of the package thus has new URLs, and browsers never mix
    a cached stylesheet with a newer script.
    """
    directory = assets_directory()
    try:
        return (directory / "VERSION").read_text(encoding="ascii").strip().lstrip("v") if directory is not None else ""
    except (OSError, UnicodeDecodeError):
        return ""


def content_security_policy(assets_url: str, connect: t.Sequence[str] = ()) -> str:
    """The page's ``Content-Security-Policy``: scripts, styles and requests from this origin only.

    Swagger UI's images are ``data:`` URLs; ``connect-src 'self'`` covers
    fetching the document and the requests of "Try it out". An absolute
    *assets_url* (``MCP_SWAGGER_UI_URL`` on a CDN) adds its origin to the
    script and style sources; the origins in *connect* (an OAuth
    provider's, whose discovery document and token endpoint **Authorize**
    fetches) are added to ``connect-src``.
    """
    parts = urlsplit(assets_url)
    external = ""
    if parts.netloc:
        # A scheme-relative URL ("//cdn.example") is a host source: the page's own scheme.
        external = f" {parts.scheme}://{parts.netloc}" if parts.scheme else f" {parts.netloc}"
    directives: t.Sequence[str] = (
        "default-src 'none'",
        f"script-src 'self'{external}",
        f"style-src 'self'{external}",
        "img-src 'self' data:",
        "font-src 'self' data:",
        " ".join(("connect-src 'self'", *connect)),
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'self'",
    )
    return "; ".join(directives)


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="stylesheet" href="{css}">
<link rel="icon" type="image/png" href="{icon}">
</head>
<body>
<p id="openapi-unauthorized" class="swagger-ui" hidden>
This server shows its tools to signed-in callers only: sign in with <strong>Authorize</strong> and the
page loads them. (Its operator can publish the document with <code>MCP_AUTH_OPENAPI = False</code>;
every tool still requires a credential.)
</p>
<div id="swagger-ui" data-openapi-url="{openapi_url}" data-oauth2-redirect-url="{redirect_url}"{extra}></div>
<script src="{bundle}"></script>
<script src="{initialiser}"></script>
</body>
</html>
"""


def swagger_ui_page(
    title: str,
    spec_url: str,
    assets_url: str,
    initialiser_url: str,
    *,
    version: str = "",
    redirect_url: str = "",
    shell: t.Mapping[str, t.Any] | None = None,
    oauth: t.Mapping[str, t.Any] | None = None,
) -> str:
    """The HTML of the Swagger UI page for the document at *spec_url*: static, with no inline script.

    :param title: the page title (escaped here).
    :param spec_url: where the OpenAPI document is served.
    :param assets_url: the folder of Swagger UI's ``dist`` files
        (``MCP_SWAGGER_UI_URL``, or where the app serves the installed copy),
        without trailing ``/``.
    :param initialiser_url: where the script that starts Swagger UI is
        served (:data:`flask_mcp.transport.swagger_page.INITIALISER`).
    :param version: appended to the asset URLs as ``?v=``, for caches.
    :param redirect_url: where the OAuth authorization server sends the
        browser back to Swagger UI (its ``oauth2-redirect.html``); ``""``:
        next to *assets_url*.
    :param shell: for a document that needs a credential, a document with its
        security schemes and no operation: the page starts on it when the
        document answers 401, so that **Authorize** works, then loads the
        document with the credential.
    :param oauth: Swagger UI's ``initOAuth`` options (``clientId``,
        ``additionalQueryStringParams``...), when the app's own authorization
        server knows the page as a client.
    """
    query = f"?v={version}" if version else ""

    def attribute(url: str) -> str:
        return html.escape(url, quote=True)

    return _PAGE.format(
        title=html.escape(title),
        css=attribute(f"{assets_url}/swagger-ui.css{query}"),
        # Named, so that the browser does not ask the app for /favicon.ico.
        icon=attribute(f"{assets_url}/favicon-32x32.png{query}"),
        bundle=attribute(f"{assets_url}/swagger-ui-bundle.js{query}"),
        initialiser=attribute(initialiser_url),
        openapi_url=attribute(spec_url),
        redirect_url=attribute(redirect_url or f"{assets_url}/oauth2-redirect.html"),
        extra="".join(
            f' data-{name}="{attribute(json.dumps(value))}"'
            for name, value in (("openapi-shell", shell), ("oauth", oauth))
            if value is not None
        ),
    )
