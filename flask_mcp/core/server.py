"""The protocol core: one JSON-RPC message in, at most one response out.

:class:`Server` routes requests to the handlers named in the method table of
:mod:`flask_mcp.core.methods`, turns exceptions into JSON-RPC errors and never
answers notifications. It does not know about HTTP, Flask's request or where
sessions are stored: a transport hands it a decoded message and the
:class:`~flask_mcp.core.client.ClientState` of the connection, and persists
that state again when its ``changed`` is set.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import typing as t

from ..components.model import CacheScope, Prompt, Resource, ResourceTemplate, Tool
from ..components.registry import Registry
from ..components.skills import Skill
from ..policies.permissions import (
    ComponentKind,
    Permission,
    PermissionLike,
    normalize_permissions,
)
from ..policies.principal import Principal
from ..policies.ratelimit import Limit, RateLimiter, parse_limit
from ..protocol import jsonrpc
from ..protocol.envelope import SERVER_INFO, Envelope, is_modern
from ..protocol.errors import describe_exception, is_expected
from ..protocol.jsonrpc import MCPError
from ..protocol.strict_json import DEFAULT_LIMITS, JSONLimits
from ..results.spill import ResultStore
from .admission import admit, visible
from .approval import Approvals
from .audit import AuditSink
from .client import Call, ClientState
from .context import Channel
from .dispatch import handshake_request, modern_request
from .hooks import Hooks
from .methods import NOTIFICATION_HANDLERS
from .plain_calls import PlainCall, PlainCalls
from .result_cache import ResultCache
from .rounds import InputRequired, Sealer
from .tasks import Tasks
from .tracing import Tracer

__all__ = ["Server"]

logger = logging.getLogger("flask_mcp")

Invoker = t.Callable[[t.Callable[..., t.Any], dict[str, t.Any]], t.Any]
#: Finds what serves a tool's function as a route: a callable taking all the validated arguments, or ``None``.
RouteFinder = t.Callable[[t.Callable[..., t.Any]], t.Callable[..., t.Any] | None]
Component = t.Union[Tool, Resource, ResourceTemplate, Prompt]


def _default_invoke(func: t.Callable[..., t.Any], kwargs: dict[str, t.Any]) -> t.Any:
    result = func(**kwargs)
    if inspect.isawaitable(result):
        return asyncio.run(_await(result))
    return result


async def _await(awaitable: t.Awaitable[t.Any]) -> t.Any:
    return await awaitable


class Server:
    """The MCP protocol core.

    :param registry: the tools, resources and prompts to serve.
    :param name: ``serverInfo.name``.
    :param version: ``serverInfo.version``.
    :param title: optional ``serverInfo.title``.
    :param instructions: optional ``instructions`` sent on ``initialize``.
    :param page_size: items per page of every ``*/list`` result.
    :param expose_errors: include exception detail in tool errors and
        internal errors (for development only); a callable is asked each
        time, so the answer can follow a setting that changes at run time.
    :param invoke: calls a handler function with keyword arguments; a Flask
        app passes one that uses ``current_app.ensure_sync`` so ``async def``
        handlers work.
    :param client_request_timeout: seconds a handler waits for the client to
        answer a request such as ``sampling/createMessage``.
    :param transaction: the hook atomic tools run in (see
        :func:`flask_mcp.policies.execution.in_transaction`).
    :param result_store: where tools spill oversized results.
    :param current_request: returns the transport's request object, passed to
        tools that take a ``request`` parameter.
    :param default_permissions: permissions of every component registered
        without ``permissions=`` (:mod:`flask_mcp.policies.permissions`).
    :param filter_listings: leave out of ``*/list`` results what the caller
        may not use (``MCP_FILTER_LISTINGS_BY_PERMISSIONS``).
    :param limiter: counts rate-limited calls (:mod:`flask_mcp.policies.ratelimit`);
        when a limit applies without one, an in-process counter is used.
    :param rate_limit: the budget of every caller's tool calls, all tools
        together (``MCP_RATE_LIMIT``); tools' own ``rate_limit`` apply too.
    :param client_key: tells anonymous callers apart for rate limits (the
        HTTP transport gives the remote address).
    :param max_subscriptions: resource URIs one client may subscribe to at
        once (``MCP_MAX_SUBSCRIPTIONS``); ``None`` for no limit.
    :param unavailable: exceptions that mean the store holding cross-request
        state did not answer; :meth:`handle` lets them through, so the
        transport can say so (HTTP 503) instead of reporting a bug.
    :param json_limits: bounds of every message's JSON, applied by the
        transports as they decode (``MCP_MAX_JSON_*``).
    :param max_uri_length: the longest resource URI a request may name, in
        UTF-8 bytes (``MCP_MAX_URI_LENGTH``); longer ones are -32602.
    :param sealer: seals the ``requestState`` of modern ``input_required``
        rounds (:mod:`flask_mcp.core.rounds`); without one, a modern handler
        that asks the client something fails with -32603.
    :param max_request_state: the longest ``requestState`` issued or accepted
        (``MCP_REQUEST_STATE_MAX_BYTES``).
    :param cache_ttl_ms: ``ttlMs`` of cacheable modern results (``MCP_CLIENT_CACHE_TTL``).
    :param cache_scope: ``cacheScope`` of cacheable modern results:
        ``"private"`` when answers depend on the caller (authentication,
        listings filtered by permissions).
    """

    def __init__(
        self,
        registry: Registry,
        *,
        name: str,
        version: str,
        title: str | None = None,
        instructions: str | None = None,
        page_size: int | None = 100,
        expose_errors: bool | t.Callable[[], bool] = False,
        invoke: Invoker | None = None,
        route_for: RouteFinder | None = None,
        client_request_timeout: float = 300.0,
        transaction: t.Any = None,
        result_store: ResultStore | None = None,
        current_request: t.Callable[[], t.Any] | None = None,
        default_permissions: t.Iterable[PermissionLike] = (),
        filter_listings: bool = False,
        limiter: RateLimiter | None = None,
        rate_limit: str | Limit | None = None,
        client_key: t.Callable[[], str | None] | None = None,
        max_subscriptions: int | None = 100,
        unavailable: tuple[type[BaseException], ...] = (),
        json_limits: JSONLimits = DEFAULT_LIMITS,
        max_uri_length: int = 8192,
        sealer: Sealer | None = None,
        max_request_state: int = 65536,
        modern_era: bool = True,
        cache_ttl_ms: int = 0,
        cache_scope: CacheScope = "public",
    ) -> None:
        self.registry = registry
        self.name = name
        self.version = version
        self.title = title
        self.instructions = instructions
        self.page_size = page_size
        self._expose_errors = expose_errors
        self.invoke: Invoker = invoke or _default_invoke
        #: Tools whose function is also a route's view run as that route (``integrations/routes/view_tools.py``).
        self.route_for = route_for
        self.client_request_timeout = client_request_timeout
        #: Wraps atomic tools; see :mod:`flask_mcp.policies.execution`.
        self.transaction = transaction
        #: Keeps oversized results that tools spill to a resource.
        self.result_store = result_store
        self._current_request = current_request
        self.default_permissions: tuple[Permission, ...] = normalize_permissions(default_permissions) or ()
        self.filter_listings = filter_listings
        self.limiter = limiter
        self.rate_limit = parse_limit(rate_limit)
        self.client_key = client_key
        self.max_subscriptions = max_subscriptions
        self.unavailable = unavailable
        self.json_limits = json_limits
        self.max_uri_length = max_uri_length
        self.sealer = sealer
        self.max_request_state = max_request_state
        self.modern_era = modern_era
        self.cache_ttl_ms = cache_ttl_ms
        self.cache_scope: CacheScope = cache_scope
        self._meta_server_info: tuple[tuple[str, str, str | None], dict[str, t.Any]] | None = None
        #: The before/after/error hooks of calls (:mod:`flask_mcp.core.hooks`); the extension shares its own.
        self.hooks = Hooks()
        #: Where tasks are kept and what runs them (:mod:`flask_mcp.core.tasks`); ``None``: no tool runs as a task.
        self.tasks: Tasks | None = None
        #: Where cached tools' results are kept (:mod:`flask_mcp.core.result_cache`); ``None``: nothing is cached.
        self.result_cache: ResultCache | None = None
        #: For a function handed part of the caller's request besides its arguments (a route gets its
        #: credentials): a digest of that part, which cached results are keyed by; ``None`` for other functions.
        self.caller_digest: t.Callable[[t.Callable[..., t.Any]], str | None] | None = None
        #: The Agent Skills served, by name (:mod:`flask_mcp.components.skills`); their files are resources.
        self.skills: dict[str, Skill] = {}
        #: Traces and measures every message handled (:mod:`flask_mcp.core.tracing`); ``None``: nothing is.
        self.tracer: Tracer | None = None
        #: How tools marked ``confirm`` are approved (:mod:`flask_mcp.core.approval`); the extension
        #: gives one whose ledger is the shared store.
        self.approvals = Approvals()
        #: Where audit records go (:mod:`flask_mcp.core.audit`); ``None``: nothing is recorded.
        self.audit: AuditSink | None = None
        self._plain_calls = PlainCalls(self)

    def current_request(self) -> t.Any:
        """The transport's request object (Flask's ``request``) for a tool's ``request`` parameter."""
        return self._current_request() if self._current_request is not None else None

    @property
    def expose_errors(self) -> bool:
        """Whether clients may see exception detail."""
        expose = self._expose_errors
        return expose() if callable(expose) else expose

    def admit(self, call: Call, kind: ComponentKind, component: Component, arguments: t.Any = None) -> None:
        """Check the caller may use *component*, and count a tool call against its rate limits
        (:func:`~flask_mcp.core.admission.admit`).

        :raises MCPError: :data:`~flask_mcp.protocol.jsonrpc.PERMISSION_DENIED` or
            :data:`~flask_mcp.protocol.jsonrpc.RATE_LIMITED`.
        """
        admit(self, call, kind, component, arguments)

    def visible(self, principal: Principal | None, kind: ComponentKind, component: Component) -> bool:
        """Whether a filtered listing shows *component* to *principal*."""
        return visible(self, principal, kind, component)

    def server_info(self) -> dict[str, t.Any]:
        """The ``serverInfo`` object."""
        info: dict[str, t.Any] = {"name": self.name, "version": self.version}
        if self.title:
            info["title"] = self.title
        return info

    @property
    def meta_server_info(self) -> dict[str, t.Any]:
        """``{"io.modelcontextprotocol/serverInfo": ...}``, the ``_meta`` of every modern result."""
        identity = (self.name, self.version, self.title)
        cached = self._meta_server_info
        if cached is None or cached[0] != identity:  # built once, unless the name or version changed
            cached = self._meta_server_info = (identity, {SERVER_INFO: self.server_info()})
        return cached[1]

    def capabilities(self) -> dict[str, t.Any]:
        """Capabilities, derived from what is registered."""
        caps: dict[str, t.Any] = {"logging": {}}
        registry = self.registry
        if registry.tools:
            caps["tools"] = {"listChanged": True}
        if registry.resources or registry.templates:
            caps["resources"] = {"subscribe": True, "listChanged": True}
        if registry.prompts:
            caps["prompts"] = {"listChanged": True}
        if registry.has_completions():
            caps["completions"] = {}
        return caps

    def needs_channel(self, message: jsonrpc.Message) -> bool:
        """Whether *message* calls a handler that takes a :class:`~flask_mcp.Context` (or asks for approval).

        Only those can talk back while they run, so a transport keeps its
        fast path for every other request. ``tasks/result`` is one of them:
        it sends the client a waiting task's questions.
        """
        if not isinstance(message, jsonrpc.Request):
            return False
        if message.method == "tasks/result":  # a 2025-11-25 method: the modern era answers it -32601
            return self.tasks is not None and not is_modern(message.params)
        registry, params = self.registry, message.params
        name = params.get("name")
        if message.method == "tools/call" and isinstance(name, str):
            tool = registry.tools.get(name)
            # A tool that waits for the human's approval asks for it on the channel.
            return tool is not None and (tool.context_param is not None or tool.confirmation is not None)
        if message.method == "prompts/get" and isinstance(name, str):
            return name in registry.prompts and registry.prompts[name].context_param is not None
        uri = params.get("uri")
        if message.method == "resources/read" and isinstance(uri, str) and not self.uri_too_long(uri):
            found = registry.find_resource(uri)
            return found is not None and found[0].context_param is not None
        return False

    def plain_call(self, name: str) -> PlainCall | None:
        """The straight path (:mod:`~flask_mcp.core.plain_calls`) of a call of the tool *name* now;
        ``None`` when the call needs the general path (or names no tool). See :class:`PlainCalls`.
        """
        return self._plain_calls.find(name)

    def uri_too_long(self, uri: str) -> bool:
        """Whether *uri* is longer than :attr:`max_uri_length` (then it is matched against nothing)."""
        return jsonrpc.utf8_longer_than(uri, self.max_uri_length)

    def bounded_uri(self, uri: str, name: str = "uri") -> str:
        """*uri* itself, checked against :attr:`max_uri_length`.

        :raises MCPError: -32602 when it is longer.
        """
        if self.uri_too_long(uri):
            raise MCPError(jsonrpc.INVALID_PARAMS, f"Invalid params: {name} is longer than {self.max_uri_length} bytes")
        return uri

    def handle(
        self,
        message: jsonrpc.Message,
        state: ClientState,
        channel: Channel | None = None,
        principal: Principal | None = None,
        envelope: Envelope | None = None,
    ) -> dict[str, t.Any] | None:
        """Handle one parsed message and return the response envelope, if any.

        Requests always get exactly one response; notifications and client
        responses never get one (the transport routes client responses to
        the request that waits for them).

        The message picks its era: a request whose ``_meta`` names a protocol
        revision is served statelessly in the modern era (*state* is not
        used; the request's envelope is its client state), anything else in
        the handshake era with *state*.

        :param channel: how a handler that takes a :class:`~flask_mcp.Context`
            talks back to the client while it runs.
        :param principal: the authenticated caller, if the transport authenticates.
        :param envelope: a modern request's envelope, when the transport has
            already read and checked it (it is read here otherwise).
        """
        tracer = self.tracer
        if tracer is None or isinstance(message, jsonrpc.Response):
            return self._handle(message, state, channel, principal, envelope)
        with tracer.message(message.method, message.params, getattr(message, "id", None), state) as trace:
            response = self._handle(message, state, channel, principal, envelope)
            trace.answered(response)
            return response

    def _handle(
        self,
        message: jsonrpc.Message,
        state: ClientState,
        channel: Channel | None,
        principal: Principal | None,
        envelope: Envelope | None,
    ) -> dict[str, t.Any] | None:
        if isinstance(message, jsonrpc.Response):
            return None
        if isinstance(message, jsonrpc.Notification):
            on_notification = NOTIFICATION_HANDLERS.get(message.method)
            if on_notification is not None:
                try:
                    on_notification(Call(self, state, message.method, message.params, principal=principal))
                except Exception:  # a notification has nobody to report to
                    logger.exception("MCP notification handler %r failed", message.method)
            return None
        if self.modern_era and is_modern(message.params):
            return self.respond(
                message.id, message.method, modern_request, self, message, channel, principal, envelope, state.surface
            )
        return self.respond(message.id, message.method, handshake_request, self, message, state, channel, principal)

    def respond(
        self, request_id: jsonrpc.RequestId, method: str, run: t.Callable[..., dict[str, t.Any]], *args: t.Any
    ) -> dict[str, t.Any]:
        """The response envelope of the request *request_id* to *method*: ``run(*args)``, or the JSON-RPC
        error it raised.

        :raises Exception: one of :attr:`unavailable`: the store is down, which the transport answers.
        """
        try:
            return jsonrpc.success(request_id, run(*args))
        except MCPError as exc:
            return jsonrpc.failure(request_id, exc)
        except self.unavailable:
            raise  # the store is down: the transport answers for it
        except InputRequired:
            # Asked outside tools/call, prompts/get and resources/read, which alone may answer input_required.
            logger.error("MCP method %r asked the client for input, which only a call, read or get may", method)
            return jsonrpc.failure(request_id, MCPError(jsonrpc.INTERNAL_ERROR, "Internal error"))
        except Exception as exc:
            if is_expected(exc):
                # A ToolError (or abort()) from a resource or prompt handler: its message is for the client.
                return jsonrpc.failure(
                    request_id, MCPError(jsonrpc.INTERNAL_ERROR, describe_exception(exc, expose=False))
                )
            logger.exception("MCP method %r failed", method)
            return jsonrpc.failure(request_id, self.internal_error(exc))

    def serialize(self, response: dict[str, t.Any]) -> bytes:
        """Encode a response envelope as JSON for any transport.

        A handler may still have put a value JSON cannot hold (``NaN``, an
        unknown type) into its result; the client then gets -32603 for that
        request instead of a broken body.
        """
        try:
            return jsonrpc.encode(response)
        except (TypeError, ValueError) as exc:
            logger.exception("MCP response could not be encoded as JSON")
            return jsonrpc.encode(jsonrpc.failure(response.get("id"), self.internal_error(exc)))

    def internal_error(self, exc: BaseException) -> MCPError:
        """The -32603 error for an unexpected exception; detail only when exposing errors."""
        data = {"detail": f"{type(exc).__name__}: {exc}"} if self.expose_errors else None
        return MCPError(jsonrpc.INTERNAL_ERROR, "Internal error", data)
