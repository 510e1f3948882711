"""The :class:`MCP` Flask extension: registration decorators and app setup."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import logging
import typing as t

from flask import Blueprint, Flask, Response, current_app, has_app_context
from flask.blueprints import BlueprintSetupState
from flask_caching import Cache
from flask_caching.backends import NullCache
from werkzeug.exceptions import HTTPException

from .cli import mcp_group
from .components import Prompt, Resource, ResourceTemplate, Tool
from .config import Settings
from .errors import NotFoundError, ToolError
from .events import BROADCAST, EventLog
from .jsonrpc import INTERNAL_ERROR
from .registration import (
    PromptOptions,
    ResourceOptions,
    ToolOptions,
    build_prompt,
    build_resource,
    build_tool,
)
from .registry import Registry
from .server import Server
from .sessions import Mailbox, SessionStore
from .transport import rest
from .transport.http import endpoint, error_response

__all__ = ["MCP", "MCPState"]

logger = logging.getLogger("flask_mcp")

F = t.TypeVar("F", bound=t.Callable[..., t.Any])

_LIST_CHANGED = {
    "tools": "notifications/tools/list_changed",
    "resources": "notifications/resources/list_changed",
    "templates": "notifications/resources/list_changed",
    "prompts": "notifications/prompts/list_changed",
}


@dataclasses.dataclass
class MCPState:
    """What the extension keeps per app, in ``app.extensions["mcp"]``."""

    mcp: MCP
    settings: Settings
    server: Server
    #: ``None`` when ``MCP_STATELESS`` is set.
    sessions: SessionStore | None
    #: Answers, cancellations and in-flight ids across requests; ``None`` when stateless.
    mailbox: Mailbox | None = None
    #: Messages of event streams, for resumption and broadcasts; ``None`` when stateless.
    events: EventLog | None = None


def _app_is_debug() -> bool:
    # Read when an error happens: ``app.run(debug=True)`` turns debug on after init_app.
    return bool(current_app.debug)


@functools.lru_cache(maxsize=4096)
def _is_async(func: t.Callable[..., t.Any]) -> bool:
    return inspect.iscoroutinefunction(func)


def _invoke_in_app(func: t.Callable[..., t.Any], kwargs: dict[str, t.Any]) -> t.Any:
    # ensure_sync runs ``async def`` handlers the way Flask runs async views;
    # plain functions are called directly, which is what it would do anyway.
    try:
        if _is_async(func):
            return current_app.ensure_sync(func)(**kwargs)
        return func(**kwargs)
    except HTTPException as exc:
        # flask.abort() in a handler: a failure meant for the caller, in the
        # protocol core's own terms (it knows nothing of HTTP).
        error = NotFoundError if exc.code == 404 else ToolError
        detail = f"{exc.code} {exc.name}: {exc.description}" if exc.description else f"{exc.code} {exc.name}"
        raise error(detail) from exc


class MCP:
    """Serve a Model Context Protocol endpoint from a Flask app.

    ::

        mcp = MCP(name="shop", version="1.0.0")

        @mcp.tool()
        def add(a: int, b: int) -> int:
            \"\"\"Add two integers.\"\"\"
            return a + b

        app = Flask(__name__)
        mcp.init_app(app)  # POST /mcp

    :param app: a Flask app to set up right away; or call :meth:`init_app` later.
    :param name: ``serverInfo.name``; defaults to the app's name.
    :param version: ``serverInfo.version``.
    :param title: optional human-readable ``serverInfo.title``.
    :param instructions: optional text sent to clients on ``initialize``.
    :param cache: a flask-caching :class:`~flask_caching.Cache` already set up
        on the app, to hold sessions; by default the extension builds its own
        from the ``MCP_CACHE_*`` keys.
    :param blueprint_name: name of :attr:`blueprint` (and its endpoint prefix).
    """

    def __init__(
        self,
        app: Flask | None = None,
        *,
        name: str | None = None,
        version: str = "1.0.0",
        title: str | None = None,
        instructions: str | None = None,
        cache: Cache | None = None,
        blueprint_name: str = "mcp",
    ) -> None:
        self.name = name
        self.version = version
        self.title = title
        self.instructions = instructions
        self.cache = cache
        #: Everything registered with the decorators; shared by every app.
        self.registry = Registry()
        self.registry.on_change(self._announce_change)
        #: The blueprint serving the endpoint. :meth:`init_app` registers it,
        #: or register it yourself: ``app.register_blueprint(mcp.blueprint)``.
        self.blueprint = Blueprint(blueprint_name, __name__, url_prefix="/mcp")
        self.blueprint.record(self._on_register)
        self.blueprint.register_error_handler(Exception, self._handle_exception)
        if app is not None:
            self.init_app(app)

    # -- app setup -------------------------------------------------------

    def init_app(self, app: Flask) -> None:
        """Set up *app*: apply config defaults and register the blueprint at ``MCP_URL_PREFIX``."""
        self._setup(app)
        app.register_blueprint(self.blueprint, url_prefix=app.config["MCP_URL_PREFIX"])

    def _on_register(self, setup_state: BlueprintSetupState) -> None:
        app = t.cast(Flask, setup_state.app)
        self._setup(app)
        # The rule takes every HTTP method (methods=None), so the view answers
        # PUT, TRACE and the like with a JSON 405 itself instead of werkzeug's
        # HTML page; Blueprint.add_url_rule cannot express "any method".
        name = f"{setup_state.name_prefix}.{setup_state.name}.endpoint".lstrip(".")
        app.url_map.add(
            app.url_rule_class(
                setup_state.url_prefix or "/", endpoint=name, methods=None, subdomain=setup_state.subdomain
            )
        )
        app.view_functions[name] = endpoint
        # The REST routes live at MCP_REST_PREFIX, an absolute path, whichever way the blueprint was registered.
        rest.add_routes(app, name.rpartition(".")[0], setup_state.url_prefix or "/")

    def _setup(self, app: Flask) -> None:
        existing = app.extensions.get("mcp")
        if existing is not None:
            if existing.mcp is self:
                return
            raise RuntimeError("another MCP extension is already set up on this app")
        settings = Settings.from_app(app)
        sessions = mailbox = events = None
        if not settings.stateless:
            cache = self._session_cache(app, settings)
            sessions = SessionStore(cache, settings.session_ttl)
            mailbox = Mailbox(cache, max(settings.session_ttl, int(settings.client_request_timeout) + 60))
            events = EventLog(cache, settings.session_ttl)
        server = Server(
            self.registry,
            name=self.name or app.name,
            version=self.version,
            title=self.title,
            instructions=self.instructions,
            page_size=settings.page_size,
            expose_errors=_app_is_debug if settings.mask_errors is None else not settings.mask_errors,
            invoke=_invoke_in_app,
            client_request_timeout=settings.client_request_timeout,
        )
        app.extensions["mcp"] = MCPState(self, settings, server, sessions, mailbox, events)
        # ``flask mcp ...``; an app's own "mcp" command wins.
        if "mcp" not in app.cli.commands:
            app.cli.add_command(mcp_group)

    def _session_cache(self, app: Flask, settings: Settings) -> Cache:
        cache = self.cache
        if cache is None:
            cache = Cache()
            cache.init_app(app, config=settings.cache_config)
        backend = app.extensions.get("cache", {}).get(cache)
        if backend is None:
            raise RuntimeError("the Cache passed to MCP(cache=...) must be set up on the app first (cache.init_app)")
        if isinstance(backend, NullCache):
            raise RuntimeError(
                "MCP sessions cannot live in a NullCache: set MCP_CACHE_TYPE (SimpleCache, RedisCache, ...) "
                "or MCP_STATELESS = True"
            )
        return cache

    def _handle_exception(self, exc: Exception) -> Response:
        # Anything escaping the transport still answers in JSON, never an HTML page.
        if isinstance(exc, HTTPException):
            return error_response(exc.code or 500, f"{exc.name}: {exc.description}")
        logger.exception("MCP endpoint failed")
        server: Server = current_app.extensions["mcp"].server
        return error_response(500, "Internal error", INTERNAL_ERROR, data=server.internal_error(exc).data)

    # -- registration ----------------------------------------------------

    @t.overload
    def tool(self, func: F, /) -> F: ...

    @t.overload
    def tool(self, func: None = None, /, **options: t.Unpack[ToolOptions]) -> t.Callable[[F], F]: ...

    def tool(self, func: F | None = None, /, **options: t.Unpack[ToolOptions]) -> F | t.Callable[[F], F]:
        """Register a function as a tool; usable as ``@mcp.tool`` or ``@mcp.tool(...)``.

        The function runs inside the Flask request context with the
        validated arguments as keyword arguments. Without ``input_schema``
        the arguments come from the type hints (parameters with defaults are
        optional); a return annotation that is a Schema subclass or a
        dataclass names the output schema. The keywords are those of
        :class:`~flask_mcp.registration.ToolOptions`.
        """

        def register(f: F) -> F:
            self.registry.add_tool(build_tool(f, **options))
            return f

        return register(func) if func is not None else register

    def resource(self, uri: str, **options: t.Unpack[ResourceOptions]) -> t.Callable[[F], F]:
        """Register a resource at *uri*, or a resource template when *uri* has ``{variables}``.

        Template variables (RFC 6570 level 1) arrive as keyword arguments,
        converted by the parameters' type hints. The return value becomes the
        contents: ``str`` as text, ``bytes`` as a base64 blob, ``dict``/``list``
        as JSON. The keywords are those of
        :class:`~flask_mcp.registration.ResourceOptions`.
        """

        def register(f: F) -> F:
            self.registry.add_resource(build_resource(f, uri, **options))
            return f

        return register

    @t.overload
    def prompt(self, func: F, /) -> F: ...

    @t.overload
    def prompt(self, func: None = None, /, **options: t.Unpack[PromptOptions]) -> t.Callable[[F], F]: ...

    def prompt(self, func: F | None = None, /, **options: t.Unpack[PromptOptions]) -> F | t.Callable[[F], F]:
        """Register a prompt; usable as ``@mcp.prompt`` or ``@mcp.prompt(...)``.

        Arguments come from the signature (parameters without a default are
        required); ``Annotated[str, "description"]`` documents one. Return a
        string for one user message, or a list of messages. ``Literal`` and
        ``Enum`` hints complete from their choices. The keywords are those of
        :class:`~flask_mcp.registration.PromptOptions`.
        """

        def register(f: F) -> F:
            self.registry.add_prompt(build_prompt(f, **options))
            return f

        return register(func) if func is not None else register

    def notify_resource_updated(self, uri: str) -> None:
        """Send ``notifications/resources/updated`` to every session subscribed to *uri*.

        Call it inside an app context (a request, a CLI command or
        ``with app.app_context()``); the message reaches the sessions' GET
        streams in whichever process holds them.
        """
        self._broadcast("notifications/resources/updated", {"uri": uri})

    def _announce_change(self, kind: str) -> None:
        # Registrations at import time happen before any app exists: nobody to tell.
        if has_app_context():
            self._broadcast(_LIST_CHANGED[kind], {})

    def _broadcast(self, method: str, params: dict[str, t.Any]) -> None:
        state = current_app.extensions.get("mcp")
        if state is not None and state.mcp is self and state.events is not None:
            state.events.append(None, BROADCAST, {"jsonrpc": "2.0", "method": method, "params": params})

    @property
    def tools(self) -> t.Mapping[str, Tool]:
        """Registered tools by name."""
        return self.registry.tools

    @property
    def resources(self) -> t.Mapping[str, Resource]:
        """Registered static resources by URI."""
        return self.registry.resources

    @property
    def resource_templates(self) -> t.Mapping[str, ResourceTemplate]:
        """Registered resource templates by URI template."""
        return self.registry.templates

    @property
    def prompts(self) -> t.Mapping[str, Prompt]:
        """Registered prompts by name."""
        return self.registry.prompts
