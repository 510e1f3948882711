"""The :class:`MCP` Flask extension: registration decorators and app setup."""

from __future__ import annotations

import logging
import typing as t
from pathlib import Path

from flask import Blueprint, Flask, Response
from flask.blueprints import BlueprintSetupState
from flask_caching import Cache
from werkzeug.exceptions import HTTPException

from .auth import AuthBackend
from .binding import caches, servers
from .binding.composition import mount_server
from .binding.hook_decorators import HookDecorators
from .binding.routing import add_server_routes
from .binding.runtime_changes import RuntimeChanges
from .binding.state import MCPState, build_state
from .cli.commands import mcp_group
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
from .components.skills import Skill
from .config.prefix import DEFAULT_PREFIX, claim_prefix, derived_prefix
from .config.settings import Settings
from .core.hooks import Hooks
from .globals import current_state, state_for, use_server
from .integrations.apps import as_app, link_view, register_view
from .integrations.routes.view_arguments import check_unsupplied, complete_in_current_app, complete_view_tools
from .integrations.skills import SkillWatch, add_skill, add_skills_folder, skills_folder_of
from .policies.execution import Transaction
from .policies.permissions import PermissionLike, check_protected, normalize_permissions
from .protocol.jsonrpc import INTERNAL_ERROR
from .signals import current_sender
from .stores.failures import warn_store_unreachable
from .transport.http import error_response

__all__ = ["MCP", "MCPState"]

logger = logging.getLogger("flask_mcp")

F = t.TypeVar("F", bound=t.Callable[..., t.Any])


class MCP(RuntimeChanges, HookDecorators):
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
    :param config_prefix: the prefix of this server's configuration keys.
        An app can serve several MCP servers (each its own ``MCP``); the
        first reads ``MCP_*``, each other one needs a ``blueprint_name`` of
        its own, from which its prefix is derived unless given:
        ``MCP(blueprint_name="admin")`` (or ``"admin_mcp"``) reads
        ``ADMIN_MCP_URL_PREFIX`` (by default ``/admin``),
        ``ADMIN_MCP_AUTH_TOKENS``...; ``config_prefix="ADMIN"`` would read
        ``ADMIN_URL_PREFIX``... See :doc:`servers`.
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
        config_prefix: str | None = None,
    ) -> None:
        claim_prefix(DEFAULT_PREFIX if config_prefix is None else config_prefix)
        derived = derived_prefix(blueprint_name)
        if config_prefix is None and derived is not None:
            claim_prefix(derived)  # what it reads as a further server on an app
        #: The prefix of this server's configuration keys, as given (``None``: ``MCP``, or on an app that
        #: has a server reading ``MCP_*`` already, the one derived from the blueprint name). The prefix
        #: in force on an app is its state's ``settings.config_prefix``.
        self.config_prefix = config_prefix
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
        #: The servers this one serves the components of (:meth:`mount`).
        self.mounted: list[MCP] = []
        #: The Agent Skills served, by name (:meth:`add_skill`, ``MCP_SKILLS_FOLDER``).
        self.skills: dict[str, Skill] = {}
        #: Reloads changed skills in debug mode (:mod:`flask_mcp.integrations.skills`).
        self.skill_watch = SkillWatch(self)
        self._skills_folders: set[Path] = set()
        # The before_call/after_call/on_error hooks, shared by every app's server.
        self._hooks = Hooks(sender=current_sender)
        #: The blueprint serving the endpoint. :meth:`init_app` registers it,
        #: or register it yourself: ``app.register_blueprint(mcp.blueprint)``.
        # Its templates (the approval page) are the app's to override.
        self.blueprint = Blueprint(blueprint_name, __name__, url_prefix="/mcp", template_folder="transport/templates")
        self.blueprint.record(self._on_register)
        self.blueprint.register_error_handler(Exception, self._handle_exception)
        if app is not None:
            self.init_app(app)

    # -- app setup -------------------------------------------------------

    def init_app(self, app: Flask) -> None:
        """Set up *app*: apply config defaults and register the blueprint at ``MCP_URL_PREFIX``."""
        state = self._setup(app)
        app.register_blueprint(self.blueprint, url_prefix=state.settings.url_prefix)

    def _on_register(self, setup_state: BlueprintSetupState) -> None:
        app = t.cast(Flask, setup_state.app)
        state = self._setup(app)
        path = setup_state.url_prefix or "/"
        blueprint = f"{setup_state.name_prefix}.{setup_state.name}".lstrip(".")
        add_server_routes(app, state, blueprint, path, setup_state.subdomain)

    def _setup(self, app: Flask) -> MCPState:
        existing = state_for(app, self)
        if existing is not None:
            return existing
        prefix = servers.config_prefix_on(app, self)
        servers.check_another(app, self, prefix)
        settings = Settings.from_app(app, prefix, self.blueprint.name)
        session_cache = caches.session_cache(app, settings, self.cache)
        ephemeral = caches.ephemeral_cache(app, settings, session_cache, given=self.cache, own=self.ephemeral_cache)
        state = build_state(self, app, settings, session_cache, ephemeral)
        state.server.hooks = self._hooks
        if getattr(self, "auth", None) is not None or settings.auth_tokens:
            strict = settings.require_permissions or self._unprotected_tools == "error"
            check_protected(self.registry.tools.values(), self.default_permissions, strict=strict)
            self._unprotected_tools = "error" if strict else "warn"
        # Refuses settings that contradict a registered tool's options, now rather than on a call.
        self.registry.configure_tools(settings.tool_defaults)
        self.registry.configure_tags(
            settings.include_tags if self.include_tags is None else self.include_tags,
            settings.exclude_tags if self.exclude_tags is None else self.exclude_tags,
        )
        self.skill_watch.bound(settings.skill_file_max_bytes)
        folder = skills_folder_of(app.root_path, settings.skills_folder)
        if folder is not None and folder.resolve() not in self._skills_folders:
            self._skills_folders.add(folder.resolve())
            add_skills_folder(self, folder)
        state.server.skills = self.skills
        state.skill_watch = self.skill_watch
        servers.add(app, state)
        with app.app_context(), use_server(self.blueprint.name):
            if not self._loaders_ran:
                # Once per process: every app sharing this extension shares its registry.
                self._loaders_ran = True
                if state.shared is not None:
                    state.shared.run_loaders()
                else:
                    for load in self.loaders:
                        load()
            if state.shared is not None:
                try:
                    state.shared.refresh()  # changes other processes made before this one started
                except state.store_errors as exc:
                    warn_store_unreachable(exc)
        # Tools stacked on routes the app already has take their URL variables now; the others
        # when first listed or called (integrations/routes/view_arguments.py).
        complete_view_tools(app, self.registry.registered("tools").values())
        # A required parameter nothing can supply, on a function no route will call: said now, not at the first call.
        check_unsupplied(app, self.registry.registered("tools").values())
        # ``flask mcp ...``; an app's own "mcp" command wins.
        if "mcp" not in app.cli.commands:
            app.cli.add_command(mcp_group)
        return state

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
        :class:`~flask_mcp.components.build.ToolOptions`. On a function that
        is also a route's view, the URL's variables are arguments beside
        those of ``input_schema`` (see :doc:`routes`).
        """

        def register(f: F) -> F:
            given = options.get("app")
            view = as_app(given) if given is not None else None  # a bad view is refused before the tool is added
            rest = t.cast("ToolOptions", {key: value for key, value in options.items() if key != "app"})
            # The function may be a route's view: its URL supplies what input_schema= leaves out.
            tool = build_tool(f, routable=True, **rest)
            if rest.get("input_schema") is not None:
                tool.completion = complete_in_current_app
            if view is not None:
                link_view(tool)
            self._add_tool(tool)
            if view is not None:
                register_view(self, tool, view)
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

    def mount(self, other: MCP, prefix: str | None = None) -> None:
        """Serve *other*'s tools, resources, templates and prompts from this server, under *prefix*.

        Tool and prompt ``name`` becomes ``<prefix>_name``; a resource
        ``scheme://path`` becomes ``scheme://<prefix>/path`` (templates
        alike). Each keeps its permissions (those it was given, else
        *other*'s ``default_permissions``), and what *other* registers, hides
        or removes later follows. This server's hooks, settings and auth
        apply to them; *other*'s hooks do not. See :ref:`mount`.

        :raises ValueError: a name or URI already taken here, a mount cycle, or
            a URI without ``scheme://`` under a prefix.
        """
        mount_server(self, other, prefix)

    def add_skill(self, folder: str | Path, **options: t.Any) -> Skill:
        """Serve the Agent Skill in *folder* (a ``SKILL.md`` and its files); see :doc:`skills`.

        :param options: resource options for each of its files (``permissions``, ``tags``...).
        """
        return add_skill(self, folder, **options)

    def shutdown(self, app: Flask) -> None:
        """Stop the threads this extension keeps for *app*: task threads, the in-flight heartbeat, waiting streams.

        For an app that ends before its process does (tests, an app factory
        called several times). The other threads flask_mcp starts end on
        their own once they have nothing left to do; tasks still running are
        not waited for. The app is not served any further after this.
        """
        state = state_for(app, self)
        if state is not None:
            state.shutdown()

    def notify_resource_updated(self, uri: str) -> None:
        """Send ``notifications/resources/updated`` to every session subscribed to *uri*.

        Call it inside an app context (a request, a CLI command or
        ``with app.app_context()``); the message reaches the sessions' GET
        streams in whichever process holds them.
        """
        self._broadcast("notifications/resources/updated", {"uri": uri})

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
