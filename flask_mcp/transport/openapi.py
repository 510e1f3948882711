"""The OpenAPI 3.1 document of the REST routes and the MCP endpoint.

Built with apispec from what is registered: one ``POST`` operation per tool
(its marshmallow input and output schemas registered once under
``components.schemas``; raw JSON Schema inputs inline), the resource ``GET``,
and the MCP endpoint itself. :class:`OpenAPIDocument` builds it on first use
and keeps the encoded bytes until the registry changes.
"""

from __future__ import annotations

import html
import json
import threading
import typing as t

import marshmallow as ma
from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin
from apispec.ext.marshmallow.common import make_schema_key

from ..protocol import jsonrpc

if t.TYPE_CHECKING:
    from ..core.server import Server
    from ..state import MCPState

__all__ = ["ERROR_SCHEMA", "OpenAPIDocument", "build_document", "swagger_ui_page"]

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
        403: "Host or Origin not allowed",
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


def build_document(server: Server, prefix: str, mcp_path: str) -> dict[str, t.Any]:
    """The OpenAPI 3.1 document for *server*'s registry.

    :param prefix: the REST prefix (``MCP_REST_PREFIX``, without trailing ``/``).
    :param mcp_path: the path of the MCP endpoint.
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
    schemas = _Schemas(spec)
    for tool in server.registry.tools.values():
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
                **_errors(400, 403, 404, 415, 500),
            },
        }
        summary = tool.title or (tool.description or "").strip().split("\n", 1)[0]
        if summary:
            operation["summary"] = summary
        if tool.description:
            operation["description"] = tool.description
        spec.path(path=f"{prefix}/tools/{tool.name}", operations={"post": operation})
    if server.registry.resources or server.registry.templates:
        _add_resource_path(spec, prefix)
    spec.path(
        path=mcp_path,
        operations={
            "post": {
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
        },
    )
    return spec.to_dict()


def _add_resource_path(spec: APISpec, prefix: str) -> None:
    contents = {
        "type": "object",
        "properties": {"contents": {"type": "array", "items": {"type": "object"}}},
        "required": ["contents"],
    }
    spec.path(
        path=f"{prefix}/resources",
        operations={
            "get": {
                "operationId": "read_resource",
                "tags": ["resources"],
                "summary": "Read a resource by URI (static resources and templates)",
                "parameters": [{"name": "uri", "in": "query", "required": True, "schema": {"type": "string"}}],
                "responses": {"200": _result_body(contents, "The resource contents"), **_errors(400, 403, 404, 500)},
            }
        },
    )


class OpenAPIDocument:
    """The document of one app, built on first use and rebuilt after a registry change.

    :param state: the app's extension state.
    :param prefix: the REST prefix, without trailing ``/``.
    :param mcp_path: the path of the MCP endpoint.
    """

    def __init__(self, state: MCPState, prefix: str, mcp_path: str) -> None:
        self._server = state.server
        self._prefix = prefix
        self._mcp_path = mcp_path
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
                    document = build_document(self._server, self._prefix, self._mcp_path)
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
<link rel="stylesheet" href="{assets}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="{assets}/swagger-ui-bundle.js"></script>
<script>
window.ui = SwaggerUIBundle({{url: {spec_url}, dom_id: "#swagger-ui"}});
</script>
</body>
</html>
"""


def swagger_ui_page(title: str, spec_url: str, assets_url: str) -> str:
    """The Swagger UI HTML page for the document at *spec_url*.

    :param assets_url: where ``swagger-ui.css`` and ``swagger-ui-bundle.js``
        are found (``MCP_SWAGGER_UI_URL``); the page itself is static.
    """
    # json.dumps quotes the URL for JavaScript; escaping "<" keeps "</script>" out of it.
    spec_js = json.dumps(spec_url).replace("<", "\\u003c")
    return _PAGE.format(title=html.escape(f"{title} API"), assets=html.escape(assets_url, quote=True), spec_url=spec_js)
