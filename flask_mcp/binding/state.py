"""What the extension keeps per app, and how it is built from the settings.

:func:`build_state` wires the protocol core to Flask: the session store,
mailbox and event log in the flask-caching cache, the invoker that runs
handlers the way Flask runs views, the request and client address the core
asks for, and the authentication gate of the HTTP surfaces.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import logging
import secrets
import typing as t
import warnings

from flask import Flask, current_app, has_request_context, request
from flask_caching import Cache
from flask_caching.backends import NullCache
from werkzeug.exceptions import HTTPException

from ..auth import AuthGate, StaticTokenBackend
from ..config.settings import LateSettingWarning, ProcessLocalSessionsWarning, Settings, changed_settings
from ..core.context import use_state_store
from ..core.server import Server
from ..integrations.routes.view_arguments import settle_view_tools
from ..integrations.routes.view_tools import route_caller_digest, route_for
from ..integrations.tasks.setup import build_tasks
from ..policies.ratelimit import CacheRateLimiter, counter_cache
from ..protocol.errors import NotFoundError, ToolError
from ..results.spill import CacheResultStore
from ..stores.admission import SessionAdmission
from ..stores.capacity import capacity_of, is_process_local, threshold_capacity_of
from ..stores.context_state import CacheStateStore
from ..stores.events import EventLog
from ..stores.failures import store_errors
from ..stores.local_markers import local_markers_for
from ..stores.local_records import local_records_for
from ..stores.mailbox import Mailbox
from ..stores.quota import Quota, StoreGuard
from ..stores.request_state import SignedState, shared_key
from ..stores.result_cache import CacheResultCache
from ..stores.sessions import SessionStore
from ..stores.shared_registry import KEY as REGISTRY_KEY
from ..stores.shared_registry import SharedRegistry
from ..stores.topology import track_reads
from ..stores.waker import Waker
from ..telemetry import TelemetrySettings, tracer_for
from ..transport.guard import RequestGuard
from ..transport.stream_slots import StreamSlots
from ..transport.waiting_slots import WaitingSlots
from . import caches
from .oversight import approvals_for, audit_for

if t.TYPE_CHECKING:
    from ..extension import MCP
    from ..stores.sessions import Session
    from ..transport.rest import RestSite

__all__ = ["MCPState", "build_state"]

logger = logging.getLogger("flask_mcp")


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
    #: Messages of event streams, for resumption, and the broadcasts listen streams
    #: carry; ``None`` only with a NullCache.
    events: EventLog | None = None
    #: The authentication of the HTTP surfaces; ``None`` when none is configured.
    auth: AuthGate | None = None
    #: The checks before a session is created; ``None`` when stateless.
    admission: SessionAdmission | None = None
    #: Each caller's quotas of the short-lived store, and its room; ``None`` with a NullCache.
    store_guard: StoreGuard | None = None
    #: Exceptions that mean the store did not answer (HTTP 503, not 500).
    store_errors: tuple[type[BaseException], ...] = ()
    #: Keeps run-time registry changes in step across processes; ``None`` with a NullCache.
    shared: SharedRegistry | None = None
    #: Looks at the skills' files before a request (:class:`~flask_mcp.integrations.skills.SkillWatch`);
    #: ``None``: never.
    skill_watch: t.Callable[[], None] | None = None
    #: Whether other processes may share the store (anything but SimpleCache).
    store_is_shared: bool = False
    #: Wakes streams and handlers waiting on the store, from one thread per process.
    waker: Waker = dataclasses.field(default_factory=Waker)
    #: GET streams this process holds open (counted against ``MCP_MAX_STREAMS``).
    streams: StreamSlots = dataclasses.field(default_factory=lambda: StreamSlots(32))
    #: Handlers waiting for their caller's answers in this process (``MCP_MAX_WAITING_PER_CALLER`` a caller).
    waiting: WaitingSlots = dataclasses.field(default_factory=lambda: WaitingSlots(4))
    #: The cache of short-lived cross-request entries, for other parts of the app (the OAuth server's
    #: fetched client documents); ``None`` with a NullCache.
    ephemeral_cache: Cache | None = None
    #: The ``MCP_*`` values the settings were read from, until the first request compares them.
    settings_read: dict[str, t.Any] | None = None
    #: Where the MCP endpoint is routed, once the blueprint is registered.
    endpoint_path: str | None = None
    #: The REST routes' site (:class:`~flask_mcp.transport.rest.RestSite`), once they are added.
    rest_site: RestSite | None = None
    #: The Host and Origin check of the settings' lists, its verdicts kept (made from :attr:`settings`).
    request_guard: RequestGuard = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        self.request_guard = RequestGuard(self.settings.allowed_hosts, self.settings.allowed_origins)

    def check_first_request(self, config: t.Mapping[str, t.Any], environ: t.Mapping[str, t.Any]) -> None:
        """Complete the tools stacked on routes, and warn, once a process, about a setup that cannot work.

        Called on a process's first request, the first moment the WSGI server
        says (``wsgi.multiprocess``) whether other processes serve the same
        app: with sessions in this process's memory, most of a client's
        requests would then reach a process that does not know its session.
        """
        self.check_settings_unchanged(config)
        # The app gains no more routes now: each tool stacked on a route takes its schema, and what
        # cannot be called is logged here rather than at the tool's first call.
        app: Flask = current_app._get_current_object()  # type: ignore[attr-defined]
        settle_view_tools(app, list(self.server.registry.registered("tools").values()))
        if not environ.get("wsgi.multiprocess") or self.store_is_shared:
            return
        # Without a configured secret, each process signs requestState with a key of its own.
        keyed_here = self.settings.request_state_secret is None
        if self.sessions is not None:
            message = SESSIONS_IN_ONE_PROCESS + (ROUNDS_IN_ONE_PROCESS if keyed_here else "")
            warnings.warn(message, ProcessLocalSessionsWarning, stacklevel=2)
        elif keyed_here:
            warnings.warn(STATELESS_ROUNDS_IN_ONE_PROCESS, ProcessLocalSessionsWarning, stacklevel=2)

    def check_settings_unchanged(self, config: t.Mapping[str, t.Any]) -> None:
        """Warn, once, about ``MCP_*`` keys set after the extension read them (they do nothing)."""
        read, self.settings_read = self.settings_read, None
        if read is None:
            return
        changed = changed_settings(read, config, self.settings.config_prefix)
        if changed:
            warnings.warn(
                f"{', '.join(changed)} changed after the MCP extension was set up, and has no effect: "
                f"flask_mcp reads its settings once, in init_app; set {self.settings.config_prefix}_* keys before it",
                LateSettingWarning,
                stacklevel=2,
            )

    def shutdown(self) -> None:
        """Stop the background work of this state: its task threads, its in-flight markers' heartbeat,
        and every stream or handler waiting on the store; close the connections kept for session reads.

        Every other thread flask_mcp starts (a request's handler, the store
        watcher, the body watchdog, the tasks' heartbeat) ends on its own
        once it has nothing left to do. Running tasks are not waited for.
        """
        audit = getattr(self.server.audit, "close", None)
        if callable(audit):
            audit()  # what is buffered is written; the writer's thread ends
        runner = getattr(self.server.tasks, "runner", None)
        stop = getattr(runner, "shutdown", None)
        if callable(stop):
            stop(wait=False)
        if self.mailbox is not None:
            self.mailbox.stop()
        self.waker.close()  # streams and handlers waiting on the store stop waiting
        if self.sessions is not None:
            hot_reads = getattr(self.sessions.cache.cache, "_hot_reads", None)
            if hot_reads is not None:
                hot_reads.close()  # the connections the session reads keep between requests

    def keep_in_step(self, session: Session | None = None) -> None:
        """Apply run-time registry changes other processes made (and, in debug mode, skills changed on
        disk), before a request is handled.

        With a loaded *session* the record came in the same round trip; without
        one it is read at most once a second (never from a store only this
        process sees, whose changes it applied as it made them), and a store
        that does not answer then fails no request: what needs it answers 503.
        """
        if session is not None:
            self.keep_in_step_along(session.read_along)
        else:
            if self.skill_watch is not None and self.mcp.skills:  # no skills: nothing to look at
                self.skill_watch()
            if self.shared is not None and self.store_is_shared:
                # The store away: the registry as it stands (no other process can change the record either).
                with contextlib.suppress(*self.store_errors):
                    self.shared.refresh()

    def keep_in_step_along(self, record: t.Any) -> None:
        """:meth:`keep_in_step` with the registry's *record*, read along with the request's session.

        A store only this process sees holds no change it has not applied as it
        made it: nothing is read along then, and *record* is ``None``.
        """
        if self.skill_watch is not None and self.mcp.skills:  # no skills: nothing to look at
            self.skill_watch()
        if self.shared is not None and self.store_is_shared:
            self.shared.apply(record)


#: Why handshake sessions fail under a multi-process server with the default store.
SESSIONS_IN_ONE_PROCESS = (
    "this server runs several processes, but handshake-era sessions live in one process's memory "
    "(MCP_CACHE_TYPE is SimpleCache): a session's later requests reach other processes, which answer "
    "404 Session not found. Use a shared store (MCP_CACHE_TYPE = 'RedisCache' and MCP_CACHE_REDIS_URL), "
    "or MCP_STATELESS = True; clients of the 2026-07-28 revision need no session"
)
#: What else fails there without a configured secret: input rounds retried on another process.
ROUNDS_IN_ONE_PROCESS = (
    ". Their input_required rounds need a requestState key every process shares: set SECRET_KEY "
    "(or MCP_REQUEST_STATE_SECRET), the same in every process"
)
#: The same, for a server that keeps no sessions.
STATELESS_ROUNDS_IN_ONE_PROCESS = (
    "this server runs several processes with a process-local store (MCP_CACHE_TYPE is SimpleCache) and no "
    "SECRET_KEY or MCP_REQUEST_STATE_SECRET: each process signs input_required rounds' requestState with a "
    "key of its own, so a retry that reaches another process is refused. Set SECRET_KEY (the same in every "
    "process) or use a shared store (MCP_CACHE_TYPE = 'RedisCache')"
)


def _app_is_debug() -> bool:
    # Read when an error happens: ``app.run(debug=True)`` turns debug on after init_app.
    return bool(current_app.debug)


@functools.lru_cache(maxsize=4096)
def _is_async(func: t.Callable[..., t.Any]) -> bool:
    return inspect.iscoroutinefunction(func)


def _current_request() -> t.Any:
    # The request object itself, not the proxy: it stays valid in a tool's worker thread.
    return request._get_current_object() if has_request_context() else None  # type: ignore[attr-defined]


def _remote_addr() -> str | None:
    # Tells anonymous callers apart for rate limits; None outside a request (CLI, stdio).
    return request.remote_addr if has_request_context() else None


def _limiter(app: Flask, cache: Cache) -> CacheRateLimiter | None:
    # Rate limits count in the ephemeral cache, shared by every worker using it.
    # A NullCache (stateless apps may run with one) would count nothing: the
    # server then falls back to counting in this process.
    backend = app.extensions.get("cache", {}).get(cache)
    if isinstance(backend, NullCache):
        return None
    if is_process_local(backend):
        # Seen by this process alone anyway: counted in a cache of their own, which no flood of
        # other entries can make evict them (a SimpleCache the app gave may evict at its threshold).
        return CacheRateLimiter(counter_cache())
    return CacheRateLimiter(cache)


def _store_guard(app: Flask, settings: Settings, cache: Cache) -> StoreGuard | None:
    # What clients make the ephemeral cache keep is bounded per caller and kind, and stops at its high water.
    backend = app.extensions["cache"][cache]
    if isinstance(backend, NullCache):
        return None
    quota = Quota(settings.store_quota_entries, settings.store_quota_bytes)
    return StoreGuard(cache, quota, threshold_capacity_of(backend, high_water=settings.store_high_water))


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


def _sealer(app: Flask, settings: Settings, cache: Cache) -> SignedState:
    # The key must be the same in every process that may take a retry:
    # configured, or kept in the shared store (made there by the first process).
    secret = settings.request_state_secret
    if secret is None:
        if isinstance(app.extensions["cache"][cache], NullCache):
            logger.warning(
                "MCP: no MCP_REQUEST_STATE_SECRET or SECRET_KEY, and no store to keep a key in: input_required "
                "rounds work only when every retry reaches this process"
            )
            return SignedState(secrets.token_urlsafe(32), settings.request_state_ttl)
        return SignedState(functools.partial(shared_key, cache), settings.request_state_ttl)
    return SignedState(secret, settings.request_state_ttl)


def build_state(mcp: MCP, app: Flask, settings: Settings, cache: Cache, ephemeral: Cache) -> MCPState:
    """Build the per-app state of *mcp* on *app*.

    *cache* holds the sessions; *ephemeral* every short-lived piece of
    cross-request state, so that none of it can ever evict a session.
    """
    # Every store of this state reads the app's backends directly, without a lookup per call.
    cache, ephemeral = caches.bound(app, cache), caches.bound(app, ephemeral)
    sessions = mailbox = events = admission = None
    waker = Waker(settings.sse_poll_interval)
    limiter = _limiter(app, ephemeral)
    guard = _store_guard(app, settings, ephemeral)
    backend = app.extensions["cache"][cache]
    unavailable = store_errors(backend, app.extensions["cache"][ephemeral])
    shared = None
    if not isinstance(backend, NullCache):
        shared = SharedRegistry(mcp.registry, cache, mcp.loaders, mcp._announce)
    if not isinstance(app.extensions["cache"][ephemeral], NullCache):
        # Broadcasts reach modern listen streams in any mode, sessions or not.
        events = EventLog(ephemeral, min(settings.session_ttl, settings.sse_replay_age))
    if not settings.stateless:
        sessions = SessionStore(
            cache,
            settings.session_ttl,
            max_age=settings.session_max_age,
            per_owner=settings.sessions_per_principal,
            # Other processes' registry changes come with each session read; one process's store has none.
            read_along=None if is_process_local(backend) else REGISTRY_KEY,
            # A store in this process's memory marks its ids, to tell "another process made it".
            origin=secrets.token_hex(4) if is_process_local(backend) else None,
        )
        if is_process_local(backend):
            # Each record decoded once per write, for the session check of every request (local_records).
            sessions.local_records = local_records_for(backend)
        if settings.track_session_reads and sessions.read_along is not None:
            # The records every request reads, kept in each process while Redis reports them unchanged.
            track_reads(app.extensions["cache"][cache], sessions.read_keys, absent_kept=[REGISTRY_KEY])
        # Shorter-lived than any session: should a Redis evict by nearest expiry
        # (volatile-ttl), it takes these before a session in use.
        mailbox = Mailbox(
            ephemeral,
            int(settings.client_request_timeout) + 60,
            inflight_ttl=settings.inflight_ttl,
            waker=waker,
            local=local_markers_for(app.extensions["cache"][ephemeral]),
        )
        capacity = capacity_of(backend, max_entries=settings.max_sessions, high_water=settings.store_high_water)
        admission = SessionAdmission(limiter, settings.session_rate_limit, capacity)
    server = Server(
        mcp.registry,
        name=mcp.name or app.name,
        version=mcp.version,
        title=mcp.title,
        instructions=mcp.instructions,
        page_size=settings.page_size,
        expose_errors=_app_is_debug if settings.mask_errors is None else not settings.mask_errors,
        invoke=_invoke_in_app,
        route_for=route_for,
        client_request_timeout=settings.client_request_timeout,
        transaction=mcp.transaction,
        result_store=CacheResultStore(ephemeral, guard.reserve if guard is not None else None),
        current_request=_current_request,
        default_permissions=mcp.default_permissions,
        filter_listings=settings.filter_listings_by_permissions,
        limiter=limiter,
        rate_limit=settings.rate_limit,
        client_key=_remote_addr,
        max_subscriptions=settings.max_subscriptions,
        unavailable=unavailable,
        json_limits=settings.json_limits,
        max_uri_length=settings.max_uri_length,
        sealer=_sealer(app, settings, cache),
        max_request_state=settings.request_state_max_bytes,
        modern_era=settings.modern_era,
        cache_ttl_ms=settings.client_cache_ttl_ms,
    )
    # Every message it handles is traced and measured, when OpenTelemetry is installed and not turned off.
    # Handshake sessions are measured however they end, their ends awaited in the short-lived store.
    ends_store = None if isinstance(app.extensions["cache"][ephemeral], NullCache) else ephemeral
    telemetry = TelemetrySettings.from_app(app, settings.config_prefix)
    server.tracer = tracer_for(server, telemetry, sessions=sessions, store=ends_store)
    auth_backend = mcp.auth
    if auth_backend is None and settings.auth_tokens:
        auth_backend = StaticTokenBackend(settings.auth_tokens, api_key_header=settings.auth_api_key_header)
    auth = AuthGate(auth_backend, settings) if auth_backend is not None else None
    scope = settings.client_cache_scope
    if scope is None:
        # The same answer for everybody may be shared by every cache on the way; not otherwise.
        scope = "private" if auth is not None or settings.filter_listings_by_permissions else "public"
    server.cache_scope = scope
    if not isinstance(app.extensions["cache"][ephemeral], NullCache):
        # ctx.state lives with the other short-lived shared state, where it can never evict a session.
        use_state_store(
            server,
            CacheStateStore(ephemeral, settings.context_state_ttl, settings.context_state_max_bytes, guard=guard),
        )
        # Cached tools' results: any process answers from what another kept.
        server.result_cache = CacheResultCache(ephemeral, guard)
        # A route's answer depends on the credentials it is handed: they are part of the key.
        server.caller_digest = route_caller_digest
        # Task records too: every process answers for a task, whichever runs it.
        server.tasks = build_tasks(app, mcp.blueprint.name, settings, ephemeral, limiter, guard)
    server.approvals = approvals_for(app, mcp.blueprint.name, settings, ephemeral, guard)
    server.audit = audit_for(app, settings)
    return MCPState(
        mcp,
        settings,
        server,
        sessions,
        mailbox,
        events,
        auth,
        admission,
        store_guard=guard,
        store_errors=unavailable,
        shared=shared,
        store_is_shared=not is_process_local(backend),
        waker=waker,
        streams=StreamSlots(settings.max_streams),
        waiting=WaitingSlots(settings.max_waiting_per_caller),
        ephemeral_cache=None if isinstance(app.extensions["cache"][ephemeral], NullCache) else ephemeral,
        settings_read={key: value for key, value in app.config.items() if key.startswith(settings.config_prefix + "_")},
    )
