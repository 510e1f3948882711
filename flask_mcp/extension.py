"""The :class:`MCP` Flask extension: registration decorators and app setup."""

from __future__ import annotations

import logging
import typing as t

from flask import Blueprint, Flask, Response
from flask.blueprints import BlueprintSetupState
from flask_caching import Cache
from werkzeug.exceptions import HTTPException

from . import caches
from .auth import AuthBackend
from .cli import mcp_group
from .components.build import (
    PromptOptions,
    ResourceOptions,
    ToolOptions,
    build_prompt,
    build_resource,
    build_tool,
)
from .components.bulk import ToolDefinition, register_tools
from .components.list_tools import ListToolOptions, RetrieveToolOptions, build_list_tool, build_retrieve_tool
from .components.list_tools_sql import check_session
from .components.model import Prompt, Resource, ResourceTemplate, Tool
from .components.registry import Registry
from .config import Settings
from .core.hooks import AfterCall, BeforeCall, Hooks, OnError
from .globals import EXTENSION_KEY, current_state, find_state, state_of
from .policies.execution import Transaction
from .policies.permissions import PermissionLike, check_protected, normalize_permissions
from .protocol.jsonrpc import INTERNAL_ERROR
from .runtime_changes import RuntimeChanges
from .signals import current_sender
from .state import MCPState, build_state
from .transport import rest
from .transport.http import endpoint, error_response
from .transport.metadata import register_metadata_routes
from .transport.rules import add_rule

__all__ = ["MCP", "MCPState"]

logger = logging.getLogger("flask_mcp")

F = t.TypeVar("F", bound=t.Callable[..., t.Any])
B = t.TypeVar("B", bound=BeforeCall)
A = t.TypeVar("A", bound=AfterCall)
E = t.TypeVar("E", bound=OnError)


class MCP(RuntimeChanges):
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
    :param ephemeral_cache: a flask-caching :class:`~flask_caching.Cache`
        already set up on the app, for short-lived entries (answers,
        cancellations, stream events, rate-limit counters, spilled results);
        by default one configured like the session cache, with the key prefix
        ``<MCP_CACHE_KEY_PREFIX>e:`` and ``MCP_EPHEMERAL_CACHE_*`` applied.
    :param blueprint_name: name of :attr:`blueprint` (and its endpoint prefix).
    :param transaction: what tools registered with ``atomic=True`` run in:
        a session with ``commit()``/``rollback()`` (Flask-SQLAlchemy's
        ``db.session``) or a callable returning a context manager.
    :param auth: an :class:`~flask_mcp.auth.AuthBackend` that authenticates
        every request to the MCP endpoint and the REST adapter; without it,
        ``MCP_AUTH_TOKENS`` configures static tokens, and with neither the
        surfaces are open.
    :param default_permissions: permissions of every tool, resource and
        prompt registered without ``permissions=`` (see :doc:`permissions`).
    :param include_tags: serve only the components with one of these
        ``tags=``; by default ``MCP_INCLUDE_TAGS`` (see :ref:`runtime-changes`).
    :param exclude_tags: serve none of the components with one of these
        ``tags=``; by default ``MCP_EXCLUDE_TAGS``.
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
        ephemeral_cache: Cache | None = None,
        blueprint_name: str = "mcp",
        auth: AuthBackend | None = None,
        transaction: Transaction | None = None,
        default_permissions: t.Iterable[PermissionLike] | None = None,
        include_tags: t.Iterable[str] | None = None,
        exclude_tags: t.Iterable[str] | None = None,
    ) -> None:
        self.name = name
        self.version = version
        self.title = title
        self.instructions = instructions
        self.cache = cache
        self.ephemeral_cache = ephemeral_cache
        self.auth = auth
        #: The hook ``atomic=True`` tools run in; see :func:`flask_mcp.policies.execution.in_transaction`.
        self.transaction = transaction
        #: Permissions of components registered without ``permissions=``.
        self.default_permissions = normalize_permissions(default_permissions) or ()
        #: Tags a component needs one of to be served (``None``: ``MCP_INCLUDE_TAGS``).
        self.include_tags = None if include_tags is None else frozenset(include_tags)
        #: Tags that keep a component from being served (``None``: ``MCP_EXCLUDE_TAGS``).
        self.exclude_tags = None if exclude_tags is None else frozenset(exclude_tags)
        # "warn" or "error" once an app with authentication is set up: checked
        # again for each tool registered later.
        self._unprotected_tools: str | None = None
        #: Everything registered with the decorators; shared by every app.
        self.registry = Registry()
        self.loaders = []
        self._loaders_ran = False
        self.registry.on_register(self._announce_change)
        # The before_call/after_call/on_error hooks, shared by every app's server.
        self._hooks = Hooks(sender=current_sender)
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
        # The rule takes every HTTP method (transport.rules), so the view answers
        # PUT, TRACE and the like with a JSON 405 itself instead of werkzeug's
        # HTML page; Blueprint.add_url_rule cannot express "any method".
        name = f"{setup_state.name_prefix}.{setup_state.name}.endpoint".lstrip(".")
        served = ("POST", "OPTIONS") if state_of(app).settings.stateless else ("GET", "POST", "DELETE", "OPTIONS")
        add_rule(app, setup_state.url_prefix or "/", name, endpoint, served, subdomain=setup_state.subdomain)
        # The REST routes live at MCP_REST_PREFIX, an absolute path, whichever way the blueprint was registered.
        rest.add_routes(app, name.rpartition(".")[0], setup_state.url_prefix or "/")
        if state_of(app).auth is not None:
            register_metadata_routes(app, name.rpartition(".")[0], setup_state.url_prefix or "/")

    def _setup(self, app: Flask) -> None:
        existing = find_state(app)
        if existing is not None:
            if existing.mcp is self:
                return
            raise RuntimeError("another MCP extension is already set up on this app")
        settings = Settings.from_app(app)
        session_cache = caches.session_cache(app, settings, self.cache)
        ephemeral = caches.ephemeral_cache(app, settings, session_cache, given=self.cache, own=self.ephemeral_cache)
        state = build_state(self, app, settings, session_cache, ephemeral)
        state.server.hooks = self._hooks
        if getattr(self, "auth", None) is not None or app.config.get("MCP_AUTH_TOKENS"):
            strict = settings.require_permissions or self._unprotected_tools == "error"
            check_protected(self.registry.tools.values(), self.default_permissions, strict=strict)
            self._unprotected_tools = "error" if strict else "warn"
        # Refuses settings that contradict a registered tool's options, now rather than on a call.
        self.registry.configure_tools(settings.tool_defaults)
        self.registry.configure_tags(
            settings.include_tags if self.include_tags is None else self.include_tags,
            settings.exclude_tags if self.exclude_tags is None else self.exclude_tags,
        )
        app.extensions[EXTENSION_KEY] = state
        with app.app_context():
            if not self._loaders_ran:
                # Once per process: every app sharing this extension shares its registry.
                self._loaders_ran = True
                if state.shared is not None:
                    state.shared.run_loaders()
                else:
                    for load in self.loaders:
                        load()
            if state.shared is not None:
                state.shared.refresh()  # changes other processes made before this one started
        # ``flask mcp ...``; an app's own "mcp" command wins.
        if "mcp" not in app.cli.commands:
            app.cli.add_command(mcp_group)

    def _handle_exception(self, exc: Exception) -> Response:
        # Anything escaping the transport still answers in JSON, never an HTML page.
        if isinstance(exc, HTTPException):
            return error_response(exc.code or 500, f"{exc.name}: {exc.description}")
        logger.exception("MCP endpoint failed")
        server = current_state().server
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
        :class:`~flask_mcp.components.build.ToolOptions`.
        """

        def register(f: F) -> F:
            self._add_tool(build_tool(f, **options))
            return f

        return register(func) if func is not None else register

    def _add_tool(self, tool: Tool) -> None:
        # Every way of registering a tool ends here, so every check applies to all of them.
        if tool.policy.atomic and self.transaction is None:
            raise ValueError(f"tool {tool.name!r} is atomic=True but MCP(transaction=...) is not set")
        if self._unprotected_tools is not None:
            check_protected([tool], self.default_permissions, strict=self._unprotected_tools == "error")
        self.registry.add_tool(tool)

    def list_tool(self, **options: t.Unpack[ListToolOptions]) -> t.Callable[[F], F]:
        """Register a function returning a collection as a tool that filters, orders and pages it.

        ``item_schema`` (required) dumps each item; ``filter_fields``,
        ``ordering_fields`` and ``paginate`` add the pipeline's arguments
        next to the function's own. The keywords are those of
        :class:`~flask_mcp.components.list_tools.ListToolOptions`; see :doc:`list-tools`.
        """

        def register(f: F) -> F:
            check_session(f, options, self.transaction)
            self._add_tool(build_list_tool(f, **options))
            return f

        return register

    def retrieve_tool(self, **options: t.Unpack[RetrieveToolOptions]) -> t.Callable[[F], F]:
        """Register a function returning one object (``None`` when there is none) as a tool.

        ``item_schema`` (required) dumps the object; ``None`` is a not-found
        error result unless ``allow_none=True``. The keywords are those of
        :class:`~flask_mcp.components.list_tools.RetrieveToolOptions`; see :doc:`list-tools`.
        """

        def register(f: F) -> F:
            check_session(f, options, self.transaction)
            self._add_tool(build_retrieve_tool(f, **options))
            return f

        return register

    def register_tools(
        self,
        definitions: t.Iterable[ToolDefinition],
        *,
        defaults: t.Mapping[str, t.Any] | None = None,
        list_defaults: t.Mapping[str, t.Any] | None = None,
        retrieve_defaults: t.Mapping[str, t.Any] | None = None,
    ) -> None:
        """Register many tools at once; see :func:`flask_mcp.components.bulk.register_tools`."""
        register_tools(
            self, definitions, defaults=defaults, list_defaults=list_defaults, retrieve_defaults=retrieve_defaults
        )

    def resource(self, uri: str, **options: t.Unpack[ResourceOptions]) -> t.Callable[[F], F]:
        """Register a resource at *uri*, or a resource template when *uri* has ``{variables}``.

        Template variables (RFC 6570 level 1) arrive as keyword arguments,
        converted by the parameters' type hints. The return value becomes the
        contents: ``str`` as text, ``bytes`` as a base64 blob, ``dict``/``list``
        as JSON. The keywords are those of
        :class:`~flask_mcp.components.build.ResourceOptions`.
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
        :class:`~flask_mcp.components.build.PromptOptions`.
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

    # -- hooks -----------------------------------------------------------

    def before_call(self, func: B, /) -> B:
        """Register ``func(info)`` to run before every tool call, resource read and prompt get.

        It gets a :class:`~flask_mcp.CallInfo` once the caller was admitted and the
        arguments validated, may change ``info.arguments``, and may return a
        result (converted like the handler's own) to skip the handler, or raise
        :class:`~flask_mcp.ToolError` to fail the call. Run in registration
        order; see :ref:`hooks`.
        """
        self._hooks.before.append(func)
        return func

    def after_call(self, func: A, /) -> A:
        """Register ``func(info, result)`` to run after every call that produced a result.

        It returns a replacement for *result* (what the handler returned, before
        conversion) or ``None`` to keep it. Run in reverse registration order,
        as Flask's ``after_request``; see :ref:`hooks`.
        """
        self._hooks.after.append(func)
        return func

    def on_error(self, func: E, /) -> E:
        """Register ``func(info, exc)`` to run when a hook or handler raised.

        It returns a result to recover with (``after_call`` then runs on it) or
        ``None`` to let the error go on. Run in registration order until one
        recovers; see :ref:`hooks`.
        """
        self._hooks.error.append(func)
        return func

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
