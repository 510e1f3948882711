"""The REST adapter: every tool as ``POST <prefix>/tools/<name>``.

The same registry, argument validation, invocation and result conversion as
``tools/call`` and ``resources/read`` serve plain HTTP clients (``curl``, a
browser, an OpenAPI generator) that do not speak JSON-RPC. Only the framing
differs: ``{"result": value}`` on success, ``{"error": message}`` with an HTTP
status on failure, always as ``application/json``.

The routes are added to the app next to the MCP endpoint when the
extension's blueprint is registered, under ``MCP_REST_PREFIX`` (an absolute
path, independent of the blueprint's own prefix), together with the OpenAPI
document (:mod:`flask_mcp.transport.openapi`) and its interactive docs page
(:mod:`flask_mcp.transport.swagger_page`) with the files it loads.
"""

from __future__ import annotations

import logging
import typing as t

from flask import Flask, Response, current_app, has_request_context, request, send_from_directory
from werkzeug.exceptions import NotFound

from ..auth.gate import Unauthorized, error_status
from ..core.calls import read_resource
from ..core.direct_calls import DirectCallFailed, Reason, call_tool_json
from ..globals import current_state
from ..policies.principal import Principal
from ..protocol import jsonrpc
from ..protocol.errors import describe_exception, is_expected
from ..protocol.jsonrpc import INVALID_PARAMS, PERMISSION_DENIED, RATE_LIMITED, RESOURCE_NOT_FOUND, MCPError
from ..stores.failures import unavailable
from .answer import JSONAnswer
from .body import BodyRejected, read_request_body
from .guard import is_json_request
from .openapi import OpenAPIDocument, SecuritySchemes, security_schemes
from .openapi_access import connect_origins, needs_credential, oauth_schemes, views_differ, visible_view
from .refusals import Addressed, traced_view
from .rules import add_rule
from .swagger_page import (
    ASSETS_PATH,
    INITIALISER,
    INITIALISER_PATH,
    assets_directory,
    assets_version,
    content_security_policy,
    swagger_ui_page,
)

if t.TYPE_CHECKING:
    from ..binding.state import MCPState

__all__ = ["RestSite", "add_routes", "error"]

logger = logging.getLogger("flask_mcp")

#: Status and wording of each way a tool call can fail.
_ERRORS: dict[Reason, tuple[int, str]] = {
    "unknown_tool": (404, "Function not found: {}"),
    "invalid_arguments": (400, "Invalid arguments: {}"),
    # The tool looked something up that does not exist: a client error, not a server fault.
    "not_found": (404, "{}"),
    "tool_error": (500, "Function error: {}"),
    "permission_denied": (403, "Forbidden: {}"),
    "rate_limited": (429, "Too Many Requests: {}"),
    # A tool marked confirm: the human's approval cannot be asked for here.
    "approval_required": (403, "Approval required: {}"),
}

#: Seconds browsers may keep the docs page's scripts and styles.
ASSET_MAX_AGE = 24 * 3600


class RestSite:
    """What the REST routes of one server need besides its :class:`~flask_mcp.binding.state.MCPState` (``rest_site``).

    :param prefix: the normalized ``MCP_REST_PREFIX``.
    :param mcp_path: the path of the MCP endpoint, for the OpenAPI document.
    :param document: the app's cached OpenAPI document.
    """

    def __init__(self, prefix: str, mcp_path: str, document: OpenAPIDocument) -> None:
        self.prefix = prefix
        self.mcp_path = mcp_path
        self.document = document
        #: Swagger UI's ``initOAuth`` options for the docs page, set by an authorization server the
        #: app runs itself that knows the page as a client (``None``: the user fills them in).
        self.sign_in: dict[str, t.Any] | None = None
        # The routes' own paths, as registered: the fixed ones, and what the others start with.
        self._paths: frozenset[str] = frozenset()
        self._heads: tuple[str, ...] = ()

    def routed(self, rules: t.Iterable[str]) -> None:
        """Note the paths of the rules registered for the REST routes (``/tools/<name>``...)."""
        rules = list(rules)
        self._paths = frozenset(rule for rule in rules if "<" not in rule)
        self._heads = tuple(rule.partition("<")[0] for rule in rules if "<" in rule)

    def serves(self, path: str) -> bool:
        """Whether *path* is one of the REST routes': anything under the prefix, or at the root the routes alone."""
        if self.prefix != "/":
            return path == self.prefix or path.startswith(self.prefix + "/")
        # At the root every other path is the app's (add_routes adds no catch-all there).
        return path in self._paths or path.startswith(self._heads)


def error(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    """A REST error: ``{"error": message}`` with *status*."""
    return _json({"error": message}, status, headers)


def _json(payload: t.Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return JSONAnswer(jsonrpc.encode(payload), status, headers)


def add_routes(app: Flask, state: MCPState, endpoint_prefix: str, mcp_path: str) -> None:
    """Add the REST routes to *app*, once, when ``MCP_REST_ENABLED`` is set.

    The rules take every HTTP method (:func:`~flask_mcp.transport.rules.add_rule`)
    so the views answer unsupported ones with a JSON 405 rather than werkzeug's
    HTML page.

    :param state: the server whose tools they serve.
    :param endpoint_prefix: the blueprint's endpoint name prefix (``"mcp"``).
    :param mcp_path: where the MCP endpoint itself is routed.
    """
    if not state.settings.rest_enabled or state.rest_site is not None:
        return
    # By default the REST routes sit beside the endpoint, wherever it was registered.
    prefix = state.settings.rest_prefix
    prefix = (mcp_path.rstrip("/") + "/rest" if prefix is None else prefix).rstrip("/")
    cookie_name = app.config.get("SESSION_COOKIE_NAME", "session")
    site = RestSite(
        prefix or "/", mcp_path, OpenAPIDocument(state, prefix, mcp_path, lambda: _security(state, cookie_name))
    )
    # Registrations after setup (tools added at run time) must show in the document.
    state.mcp.registry.on_change(lambda kind: site.document.invalidate())
    state.rest_site = site
    read = ("GET", "HEAD", "OPTIONS")
    views: list[tuple[str, str, t.Callable[..., Response], tuple[str, ...]]] = [
        ("/tools/<name>", "rest_tool", traced_view(tool_view, _tool_addressed), ("POST", "OPTIONS")),
        ("/resources", "rest_resource", traced_view(resource_view, _resource_addressed), read),
        ("/openapi.json", "rest_openapi", openapi_view, read),
        ("/docs", "rest_docs", docs_view, read),
        (INITIALISER_PATH, "rest_docs_initialiser", initialiser_view, read),
        (ASSETS_PATH + "/<path:filename>", "rest_docs_asset", asset_view, read),
    ]
    if prefix:
        # Anything else under the prefix: a JSON 404, not an HTML page. Both
        # spellings of the prefix itself, so werkzeug does not redirect to the
        # slashed one. Not at the root, where they would take the app's own 404s.
        # ``flask routes`` shows them as taking ANY method, which they answer with 404.
        views += [
            ("", "rest_not_found_root", not_found_view, ("ANY",)),
            ("/", "rest_not_found", not_found_view, ("ANY",)),
            ("/<path:rest>", "rest_not_found_path", not_found_view, ("ANY",)),
        ]
    for path, name, view, methods in views:
        add_rule(app, prefix + path, f"{endpoint_prefix}.{name}", view, methods)
    site.routed(prefix + path for path, _, _, _ in views)


def _tool_addressed(name: str) -> Addressed:
    return "tools/call", {"name": name}


def _resource_addressed() -> Addressed:
    uri = request.args.get("uri")
    return "resources/read", {"uri": uri} if uri else {}


def _security(state: MCPState, cookie_name: str) -> SecuritySchemes | None:
    """The schemes of the app's backend and, where tokens come from OAuth, how to get one."""
    if state.auth is None:
        return None
    backend = state.auth.backend
    schemes = security_schemes(backend, cookie_name=cookie_name)
    metadata = getattr(backend, "authorization_server_metadata", None)
    if callable(metadata) and not has_request_context():
        # ``flask mcp openapi``: the server's URLs are built as for a request to the app's root.
        with current_app.test_request_context():
            server = metadata()
    else:
        server = metadata() if callable(metadata) else None
    return {**schemes, **oauth_schemes(server, state.settings.auth_authorization_servers)}


def _preflight(allowed: str) -> Response | None:
    """The guard, OPTIONS and 405 answers shared by every REST view; ``None`` to go on."""
    state = current_state()
    reason = state.request_guard.rejection(request.environ)
    if reason is not None:
        return error(403, reason)
    method = request.method
    if method == "OPTIONS":
        return Response(status=204, headers={"Allow": f"{allowed}, OPTIONS"})
    if method not in allowed.split(", "):
        return error(405, f"Method Not Allowed: {method} (allowed: {allowed})", {"Allow": f"{allowed}, OPTIONS"})
    return None


def _authenticate(state: MCPState) -> Principal | Response | None:
    """The caller, a 401 answer, or ``None`` when no backend is configured."""
    if state.auth is None:
        return None
    try:
        return state.auth.authenticate(request)
    except Unauthorized as exc:
        return error(401, exc.message, {"WWW-Authenticate": exc.challenge})


def _policy_error(state: MCPState, status: int, message: str, code: int, data: t.Any) -> Response:
    """A 403 or 429 with the same headers as on the MCP endpoint."""
    mapped = error_status({"code": code, "data": data}, state.auth)
    return error(status, message, mapped[1] if mapped is not None else None)


def _unavailable(state: MCPState, exc: BaseException) -> Response:
    """A 503 with ``Retry-After`` while the store is down."""
    failure = unavailable(exc)
    return _policy_error(state, 503, failure.message, failure.code, failure.data)


def _read_object(state: MCPState) -> dict[str, t.Any] | Response:
    environ = request.environ
    try:
        body = read_request_body(environ, state.settings)
    except BodyRejected as exc:
        return error(exc.status, exc.message, exc.headers)
    if not body.strip():
        return {}  # a tool without arguments may be called with no body at all
    try:
        payload = jsonrpc.loads(body, state.server.json_limits)
    except MCPError as exc:
        return error(400, f"Invalid JSON body: {exc.data['detail']}")
    if not isinstance(payload, dict):
        return error(400, "Invalid JSON body")
    return payload


def tool_view(name: str) -> Response:
    """``POST <prefix>/tools/<name>``: the JSON body holds the arguments."""
    rejected = _preflight("POST")
    if rejected is not None:
        return rejected
    state = current_state()
    principal = _authenticate(state)  # before anything else: not even which tools exist is told
    if isinstance(principal, Response):
        return principal
    state.keep_in_step()
    if name not in state.server.registry.tools:  # before the body: an unknown URL is a 404 whatever it carries
        return error(404, _ERRORS["unknown_tool"][1].format(name))
    if not is_json_request(request.environ):
        return error(415, "Unsupported Media Type: Content-Type must be application/json")
    arguments = _read_object(state)
    if isinstance(arguments, Response):
        return arguments
    try:
        body = call_tool_json(state.server, name, arguments, principal)
    except state.store_errors as exc:
        return _unavailable(state, exc)
    except DirectCallFailed as exc:
        status, wording = _ERRORS[exc.reason]
        if exc.policy_code is not None:
            return _policy_error(state, status, wording.format(exc.message), exc.policy_code, exc.data)
        return error(status, wording.format(exc.message))
    return JSONAnswer(body)


def resource_view() -> Response:
    """``GET <prefix>/resources?uri=<uri>``: the contents, as ``resources/read`` returns them."""
    rejected = _preflight("GET, HEAD")
    if rejected is not None:
        return rejected
    state = current_state()
    principal = _authenticate(state)
    if isinstance(principal, Response):
        return principal
    state.keep_in_step()
    uri = request.args.get("uri")
    if not uri:
        return error(400, "Missing query parameter: uri")
    try:
        result = read_resource(state.server, uri, principal)
        return _json({"result": result})
    except state.store_errors as exc:
        return _unavailable(state, exc)
    except MCPError as exc:
        if exc.code == PERMISSION_DENIED:
            return _policy_error(state, 403, f"Forbidden: {exc.message}", exc.code, exc.data)
        if exc.code == RATE_LIMITED:
            return _policy_error(state, 429, f"Too Many Requests: {exc.message}", exc.code, exc.data)
        status = {RESOURCE_NOT_FOUND: 404, INVALID_PARAMS: 400}.get(exc.code, 500)
        return error(status, exc.message)
    except Exception as exc:
        if not is_expected(exc):
            logger.exception("resource %r failed", uri)
            message = f"{type(exc).__name__}: {exc}" if state.server.expose_errors else "Internal error"
        else:
            message = describe_exception(exc, expose=False)
        return error(500, f"Resource error: {message}")


def openapi_view() -> Response:
    """``GET <prefix>/openapi.json``: the OpenAPI 3.1 document as its reader may see it, built once per view.

    A request without a credential gets a 401 when the document needs one
    (``MCP_AUTH_OPENAPI``, :func:`~flask_mcp.transport.openapi_access.needs_credential`),
    else the anonymous caller's view; one with a valid credential its
    principal's view, one with a refused credential a 401 (as on every route).
    """
    rejected = _preflight("GET, HEAD")
    if rejected is not None:
        return rejected
    state = current_state()
    principal = _reader(state)
    if isinstance(principal, Response):
        return principal
    state.keep_in_step()
    site = t.cast(RestSite, state.rest_site)
    return JSONAnswer(site.document.encoded(visible_view(state.server, principal)))


def _reader(state: MCPState) -> Principal | Response | None:
    """Who reads the document: a principal, ``None`` for an anonymous reader, or a 401 answer."""
    if state.auth is None:
        return None
    presented = state.auth.backend.has_credentials(request)
    required = needs_credential(state.settings.auth_openapi, protected=True)
    if not (required or presented or views_differ(state.server)):
        return None  # everyone is shown the same document
    try:
        return state.auth.authenticate(request)
    except Unauthorized as exc:
        # A refused credential is refused here too, rather than silently shown less.
        if required or presented:
            return error(401, exc.message, {"WWW-Authenticate": exc.challenge})
        return None


def _docs_url(path: str) -> str:
    """The URL of *path* under the REST prefix, as the browser sees it."""
    site = t.cast(RestSite, current_state().rest_site)
    return request.script_root + site.prefix.rstrip("/") + path


def docs_view() -> Response:
    """``GET <prefix>/docs``: Swagger UI for the OpenAPI document.

    Never authenticated: the page holds no data (the document it loads follows
    ``MCP_AUTH_OPENAPI``), and a browser cannot send a token with a page load.
    For a document that needs a credential it carries the security schemes
    alone, so that **Authorize** works first. Its policy lets it reach the
    OAuth provider the document names.
    """
    rejected = _preflight("GET, HEAD")
    if rejected is not None:
        return rejected
    state = current_state()
    configured = state.settings.swagger_ui_url
    assets = configured or _docs_url(ASSETS_PATH)
    site = t.cast(RestSite, state.rest_site)
    title = f"{state.server.title or state.server.name} API"
    shell = None
    if needs_credential(state.settings.auth_openapi, protected=state.auth is not None):
        # The document needs a credential: the page may start on the schemes alone (no tool named).
        info = {"title": title, "version": state.server.version or "0"}
        shell = {
            "openapi": "3.1.0",
            "info": info,
            "paths": {},
            "components": {"securitySchemes": site.document.security()},
        }
    html = swagger_ui_page(
        title,
        _docs_url("/openapi.json"),
        assets,
        _docs_url(INITIALISER_PATH),
        version="" if configured else assets_version(),
        # Served by the app whatever MCP_SWAGGER_UI_URL says: it must share the page's origin.
        redirect_url=_docs_url(ASSETS_PATH + "/oauth2-redirect.html"),
        shell=shell,
        oauth=site.sign_in,
    )
    headers = {
        "Content-Security-Policy": content_security_policy(assets, connect_origins(site.document.security())),
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "same-origin",
    }
    return Response(html, content_type="text/html; charset=utf-8", headers=headers)


def initialiser_view() -> Response:
    """``GET <prefix>/docs/swagger-initializer.js``: the script that starts Swagger UI."""
    rejected = _preflight("GET, HEAD")
    if rejected is not None:
        return rejected
    response = Response(INITIALISER, content_type="text/javascript; charset=utf-8")
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.add_etag()
    response.make_conditional(request)  # 304 to a browser that has it
    return response


def asset_view(filename: str) -> Response:
    """``GET <prefix>/docs/swagger-ui/<file>``: Swagger UI's files, from the installed package."""
    rejected = _preflight("GET, HEAD")
    if rejected is not None:
        return rejected
    directory = assets_directory()
    if directory is None:
        return error(404, "Not Found: Swagger UI's files are not installed (pip install flask-swagger-ui)")
    try:
        # send_from_directory refuses paths that leave the directory.
        response = send_from_directory(directory, filename, max_age=ASSET_MAX_AGE)
    except NotFound:
        return error(404, f"Not Found: {request.path}")
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


def not_found_view(rest: str = "") -> Response:
    """Any other path under the prefix."""
    state = current_state()
    reason = state.request_guard.rejection(request.environ)
    if reason is not None:
        return error(403, reason)
    return error(404, f"Not Found: {request.path}")
