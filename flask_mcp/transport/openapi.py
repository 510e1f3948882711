"""The OpenAPI 3.1 document of the REST routes and the MCP endpoint.

Built with apispec from what is registered: one ``POST`` operation per tool
(its marshmallow input and output schemas registered once under
``components.schemas``; raw JSON Schema inputs inline), the resource ``GET``,
and the MCP endpoint itself. :class:`OpenAPIDocument` builds it on first use
and keeps the encoded bytes until the registry changes.

With an auth backend configured, the document declares how to authenticate
(``components.securitySchemes``, from :func:`security_schemes`) and each
operation its ``security``: every operation needs a credential, and a tool's
requirement lists the scopes its permissions ask for, so that Swagger UI
shows an Authorize button and generated clients send the token. A public
app's document declares no security at all.
"""

from __future__ import annotations

import html
import threading
import typing as t

import marshmallow as ma
from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin
from apispec.ext.marshmallow.common import make_schema_key

from ..auth import FlaskLoginBackend, HTTPAuthBackend, JWTBackend
from ..protocol import jsonrpc

if t.TYPE_CHECKING:
    from ..binding.state import MCPState
    from ..components.model import Tool
    from ..core.server import Server

__all__ = [
    "ERROR_SCHEMA",
    "OpenAPIDocument",
    "SecuritySchemes",
    "build_document",
    "required_scopes",
    "security_schemes",
]

#: ``components.securitySchemes``: scheme name to OpenAPI Security Scheme Object.
SecuritySchemes = dict[str, dict[str, t.Any]]

#: The body of every REST error response, shared as ``components.schemas.Error``.
ERROR_SCHEMA: dict[str, t.Any] = {
    "type": "object",
    "properties": {"error": {"type": "string"}},
    "required": ["error"],
}
_ERROR_REF = {"$ref": "#/components/schemas/Error"}

_JSONRPC_REQUEST: dict[str, t.Any] = {
    "type": "object",
    "description": "One JSON-RPC 2.0 message: a request, a notification (no id) or a response to the server.",
    "properties": {
        "jsonrpc": {"const": "2.0"},
        "id": {"type": ["string", "integer"]},
        "method": {"type": "string"},
        "params": {"type": "object"},
    },
    "required": ["jsonrpc"],
}
_JSONRPC_RESPONSE: dict[str, t.Any] = {
    "type": "object",
    "properties": {
        "jsonrpc": {"const": "2.0"},
        "id": {"type": ["string", "integer", "null"]},
        "result": {"type": "object"},
        "error": {
            "type": "object",
            "properties": {"code": {"type": "integer"}, "message": {"type": "string"}, "data": {}},
            "required": ["code", "message"],
        },
    },
    "required": ["jsonrpc", "id"],
}


def _errors(*statuses: int) -> dict[str, t.Any]:
    descriptions = {
        400: "Invalid JSON body, or arguments that fail validation",
        401: "No valid credential (the WWW-Authenticate header says how to authenticate)",
        403: "Host or Origin not allowed, or the caller's permissions deny the call",
        404: "Not found",
        415: "The body is not declared application/json",
        500: "The handler failed",
    }
    return {
        str(status): {"description": descriptions[status], "content": {"application/json": {"schema": _ERROR_REF}}}
        for status in statuses
    }


def _result_body(value_schema: dict[str, t.Any], description: str) -> dict[str, t.Any]:
    return {
        "description": description,
        "content": {
            "application/json": {
                "schema": {"type": "object", "properties": {"result": value_schema}, "required": ["result"]}
            }
        },
    }


class _Schemas:
    """Registers each marshmallow schema once under ``components.schemas`` and hands out references."""

    def __init__(self, spec: APISpec) -> None:
        self.spec = spec
        self.names: dict[t.Any, str] = {}

    def ref(self, schema: ma.Schema) -> dict[str, str]:
        key = make_schema_key(schema)
        name = self.names.get(key)
        if name is None:
            base = type(schema).__name__
            taken = set(self.spec.components.schemas)
            name, number = base, 1
            while name in taken:  # two different schemas with one class name
                number += 1
                name = f"{base}{number}"
            self.spec.components.schema(name, schema=schema)
            self.names[key] = name
        return {"$ref": f"#/components/schemas/{name}"}


def security_schemes(backend: object, *, cookie_name: str = "session") -> SecuritySchemes:
    """How a client authenticates with *backend*, as OpenAPI Security Scheme Objects.

    Each scheme alone is enough; the operations list them as alternatives.

    * The ``Authorization`` scheme the backend challenges with (its ``scheme``
      attribute): ``http`` ``bearer`` (``bearerFormat: JWT`` for
      :class:`~flask_mcp.auth.JWTBackend`), ``basic`` or ``digest``.
    * ``apiKey`` in a header: the static token backend's
      ``MCP_AUTH_API_KEY_HEADER``, or the header a Flask-HTTPAuth object reads
      instead of ``Authorization``.
    * ``apiKey`` in the session cookie *cookie_name* for
      :class:`~flask_mcp.auth.FlaskLoginBackend`: a browser signed in to the
      app sends it by itself.

    :param backend: the configured :class:`~flask_mcp.auth.AuthBackend` (or an object like it).
    :param cookie_name: the app's ``SESSION_COOKIE_NAME``.
    """
    if isinstance(backend, FlaskLoginBackend):
        return {"cookieAuth": {"type": "apiKey", "in": "cookie", "name": cookie_name}}
    schemes: SecuritySchemes = {}
    header = "Authorization"
    if isinstance(backend, HTTPAuthBackend):
        header = str(getattr(backend.auth, "header", None) or header)
    if header.lower() == "authorization":
        scheme = str(getattr(backend, "scheme", None) or "Bearer").lower()
        http: dict[str, t.Any] = {"type": "http", "scheme": scheme}
        if isinstance(backend, JWTBackend):
            http["bearerFormat"] = "JWT"
        schemes[f"{scheme}Auth"] = http
    else:
        # Flask-HTTPAuth reads the whole value of a header of its own as the credential.
        schemes["apiKeyAuth"] = {"type": "apiKey", "in": "header", "name": header}
    api_key_header = getattr(backend, "api_key_header", None)
    if isinstance(api_key_header, str) and api_key_header:
        schemes["apiKeyAuth"] = {"type": "apiKey", "in": "header", "name": api_key_header}
    return schemes


def _requirements(security: SecuritySchemes, scopes: t.Sequence[str] = ()) -> list[dict[str, list[str]]]:
    """An operation's ``security``: any one scheme, with *scopes* (OpenAPI 3.1 allows them on every type)."""
    return [{name: list(scopes)} for name in security]


def required_scopes(server: Server, tool: Tool) -> list[str]:
    """The scopes *tool*'s permissions (or the server's defaults) name, in order, without repeats."""
    permissions = tool.permissions if tool.permissions is not None else server.default_permissions
    return list(dict.fromkeys(scope for rule in permissions for scope in rule.required_scopes()))


def build_document(
    server: Server, prefix: str, mcp_path: str, *, security: SecuritySchemes | None = None
) -> dict[str, t.Any]:
    """The OpenAPI 3.1 document for *server*'s registry.

    :param prefix: the REST prefix (``MCP_REST_PREFIX``, without trailing ``/``).
    :param mcp_path: the path of the MCP endpoint.
    :param security: the schemes of the configured auth backend
        (:func:`security_schemes`); ``None`` or empty for a public app, whose
        operations then declare no security.
    """
    info: dict[str, t.Any] = {}
    if server.instructions:
        info["description"] = server.instructions
    spec = APISpec(
        title=server.title or server.name,
        version=server.version,
        openapi_version="3.1.0",
        plugins=[MarshmallowPlugin()],
        info=info,
    )
    spec.components.schema("Error", ERROR_SCHEMA)
    security = security or {}
    for name, scheme in security.items():
        spec.components.security_scheme(name, scheme)
    # With a backend every route refuses a request without a credential, before anything else.
    unauthorized = _errors(401) if security else {}
    schemas = _Schemas(spec)
    for tool in server.registry.tools.values():
        tool.complete()  # a view's URL variables, when not known before
        if isinstance(tool.input_schema, ma.Schema):
            request_schema: dict[str, t.Any] = schemas.ref(tool.input_schema)
        else:
            request_schema = tool.input_schema
        result_schema = schemas.ref(tool.output_schema) if tool.output_schema is not None else {}
        operation: dict[str, t.Any] = {
            "operationId": tool.name,
            "tags": ["tools"],
            "requestBody": {"required": True, "content": {"application/json": {"schema": request_schema}}},
            "responses": {
                "200": _result_body(result_schema, "The value the tool returned"),
                **_errors(400),
                **unauthorized,
                **_errors(403, 404, 415, 500),
            },
        }
        summary = tool.title or (tool.description or "").strip().split("\n", 1)[0]
        if summary:
            operation["summary"] = summary
        description = tool.description or ""
        if security:
            scopes = required_scopes(server, tool)
            operation["security"] = _requirements(security, scopes)
            if scopes:
                # Swagger UI shows no scopes for http and apiKey schemes: say it in words too.
                note = f"Requires the scope(s): {', '.join(scopes)}."
                description = f"{description.rstrip()}\n\n{note}" if description else note
        if description:
            operation["description"] = description
        spec.path(path=f"{prefix}/tools/{tool.name}", operations={"post": operation})
    if server.registry.resources or server.registry.templates:
        _add_resource_path(spec, prefix, security)
    mcp_operation: dict[str, t.Any] = {
        "operationId": "mcp",
        "tags": ["mcp"],
        "summary": "Model Context Protocol endpoint (Streamable HTTP)",
        "requestBody": {"required": True, "content": {"application/json": {"schema": _JSONRPC_REQUEST}}},
        "responses": {
            "200": {
                "description": "The JSON-RPC response",
                "content": {"application/json": {"schema": _JSONRPC_RESPONSE}},
            },
            "202": {"description": "A notification or response was accepted"},
        },
    }
    if security:
        mcp_operation["responses"]["401"] = {"description": unauthorized["401"]["description"]}
        mcp_operation["security"] = _requirements(security)
    spec.path(path=mcp_path, operations={"post": mcp_operation})
    return spec.to_dict()


def _add_resource_path(spec: APISpec, prefix: str, security: SecuritySchemes) -> None:
    contents = {
        "type": "object",
        "properties": {"contents": {"type": "array", "items": {"type": "object"}}},
        "required": ["contents"],
    }
    operation: dict[str, t.Any] = {
        "operationId": "read_resource",
        "tags": ["resources"],
        "summary": "Read a resource by URI (static resources and templates)",
        "parameters": [{"name": "uri", "in": "query", "required": True, "schema": {"type": "string"}}],
        "responses": {
            "200": _result_body(contents, "The resource contents"),
            **_errors(400, *((401,) if security else ()), 403, 404, 500),
        },
    }
    if security:
        # One operation for every resource, whose permissions differ: any credential, no scopes named.
        operation["security"] = _requirements(security)
    spec.path(path=f"{prefix}/resources", operations={"get": operation})


class OpenAPIDocument:
    """The document of one app, built on first use and rebuilt after a registry change.

    :param state: the app's extension state.
    :param prefix: the REST prefix, without trailing ``/``.
    :param mcp_path: the path of the MCP endpoint.
    :param security: the auth backend's schemes (:func:`security_schemes`); ``None`` for a public app.
    """

    def __init__(self, state: MCPState, prefix: str, mcp_path: str, security: SecuritySchemes | None = None) -> None:
        self._server = state.server
        self._prefix = prefix
        self._mcp_path = mcp_path
        self._security = security
        self._lock = threading.Lock()
        self._cached: tuple[dict[str, t.Any], bytes] | None = None

    def invalidate(self) -> None:
        """Forget the built document; the next request builds it again."""
        self._cached = None

    def _get(self) -> tuple[dict[str, t.Any], bytes]:
        cached = self._cached
        if cached is None:
            with self._lock:  # one build even when the first requests arrive together
                cached = self._cached
                if cached is None:
                    document = build_document(self._server, self._prefix, self._mcp_path, security=self._security)
                    cached = self._cached = (document, jsonrpc.encode(document))
        return cached

    def to_dict(self) -> dict[str, t.Any]:
        """The document as a dict (shared: do not modify it)."""
        return self._get()[0]

    def encoded(self) -> bytes:
        """The document as JSON bytes."""
        return self._get()[1]


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
This server's OpenAPI document requires authentication (<code>MCP_AUTH_OPENAPI</code>), and a page
cannot send a token when it loads it. Its operator can make the document public with
<code>MCP_AUTH_OPENAPI = False</code> (every tool still requires a token), or write it to a file
with <code>flask mcp openapi</code>.
</p>
<div id="swagger-ui" data-openapi-url="{openapi_url}"></div>
<script src="{bundle}"></script>
<script src="{initialiser}"></script>
</body>
</html>
"""


def swagger_ui_page(title: str, spec_url: str, assets_url: str, initialiser_url: str, *, version: str = "") -> str:
    """The HTML of the Swagger UI page for the document at *spec_url*: static, with no inline script.

    :param title: the page title (escaped here).
    :param spec_url: where the OpenAPI document is served.
    :param assets_url: the folder of Swagger UI's ``dist`` files
        (``MCP_SWAGGER_UI_URL``, or where the app serves the installed copy),
        without trailing ``/``.
    :param initialiser_url: where the script that starts Swagger UI is
        served (:data:`flask_mcp.transport.swagger_page.INITIALISER`).
    :param version: appended to the asset URLs as ``?v=``, for caches.
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
    )
