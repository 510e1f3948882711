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
app's document declares no security at all. Who may read the document, and
which tools each reader is shown, is :mod:`flask_mcp.transport.openapi_access`'s
concern: :class:`OpenAPIDocument` keeps one encoded document per view.

Schemas that allow null say so with ``anyOf`` and ``{"type": "null"}``, as
the tools' own schemas do (:func:`~flask_mcp.schemas.json_schema.portable_nulls`).
"""

from __future__ import annotations

import collections
import threading
import typing as t

import marshmallow as ma
from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin
from apispec.ext.marshmallow.common import make_schema_key

from ..auth import FlaskLoginBackend, HTTPAuthBackend, JWTBackend
from ..protocol import jsonrpc
from ..schemas.json_schema import portable_nulls
from .openapi_access import View

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
        "id": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        "method": {"type": "string"},
        "params": {"type": "object"},
    },
    "required": ["jsonrpc"],
}
_JSONRPC_RESPONSE: dict[str, t.Any] = {
    "type": "object",
    "properties": {
        "jsonrpc": {"const": "2.0"},
        "id": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
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
    server: Server, prefix: str, mcp_path: str, *, security: SecuritySchemes | None = None, view: View = None
) -> dict[str, t.Any]:
    """The OpenAPI 3.1 document for *server*'s registry.

    :param prefix: the REST prefix (``MCP_REST_PREFIX``, without trailing ``/``).
    :param mcp_path: the path of the MCP endpoint.
    :param security: the schemes of the configured auth backend
        (:func:`security_schemes`); ``None`` or empty for a public app, whose
        operations then declare no security.
    :param view: the tools shown and whether the resource operation is
        (:func:`~flask_mcp.transport.openapi_access.visible_view`); ``None``: all of them.
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
        if view is not None and tool.name not in view[0]:
            continue
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
    if (server.registry.resources or server.registry.templates) and (view is None or view[1]):
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
    document = spec.to_dict()
    components = document.get("components", {})
    if "schemas" in components:  # the marshmallow ones; a tool's raw JSON Schema is its author's, as written
        components["schemas"] = portable_nulls(components["schemas"])
    return document


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
    """The documents of one app, each built on first use and rebuilt after a registry change.

    One per view (:data:`~flask_mcp.transport.openapi_access.View`): the
    whole registry, and each set of tools that permissions show some caller.
    The most recently used :data:`MAX_VIEWS` are kept.

    :param state: the app's extension state.
    :param prefix: the REST prefix, without trailing ``/``.
    :param mcp_path: the path of the MCP endpoint.
    :param security: the schemes the document declares (:func:`security_schemes`,
        with :func:`~flask_mcp.transport.openapi_access.oauth_schemes`), or a
        function returning them, called at the first build (inside a request
        or app context); ``None`` for a public app.
    """

    #: Views kept at once. A view is a set of tool names, so they are few unless
    #: permissions depend on every caller; the least recently used goes first.
    MAX_VIEWS = 32

    def __init__(
        self,
        state: MCPState,
        prefix: str,
        mcp_path: str,
        security: SecuritySchemes | t.Callable[[], SecuritySchemes | None] | None = None,
    ) -> None:
        self._server = state.server
        self._prefix = prefix
        self._mcp_path = mcp_path
        self._security = security
        self._schemes: SecuritySchemes | None = None
        self._lock = threading.Lock()
        self._cached: collections.OrderedDict[View, tuple[dict[str, t.Any], bytes]] = collections.OrderedDict()

    def invalidate(self) -> None:
        """Forget the built documents; the next request builds its own again."""
        with self._lock:
            self._cached = collections.OrderedDict()

    def security(self) -> SecuritySchemes:
        """The schemes the documents declare (worked out once)."""
        schemes = self._schemes
        if schemes is None:
            given = self._security() if callable(self._security) else self._security
            schemes = self._schemes = dict(given or {})
        return schemes

    def _get(self, view: View) -> tuple[dict[str, t.Any], bytes]:
        with self._lock:  # one build even when the first requests arrive together
            cached = self._cached.get(view)
            if cached is None:
                security = self.security()
                document = build_document(self._server, self._prefix, self._mcp_path, security=security, view=view)
                cached = self._cached[view] = (document, jsonrpc.encode(document))
                while len(self._cached) > self.MAX_VIEWS:
                    self._cached.popitem(last=False)
            else:
                self._cached.move_to_end(view)
            return cached

    def to_dict(self, view: View = None) -> dict[str, t.Any]:
        """The document of *view* (``None``: every tool) as a dict (shared: do not modify it)."""
        return self._get(view)[0]

    def encoded(self, view: View = None) -> bytes:
        """The document of *view* (``None``: every tool) as JSON bytes."""
        return self._get(view)[1]
