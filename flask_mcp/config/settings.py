"""``MCP_*`` configuration keys, their defaults, and the settings read from them."""

from __future__ import annotations

import dataclasses
import difflib
import typing as t
import warnings

from flask import Flask

from ..policies.options import ErrorFormat, OutputFormat, coerce
from ..policies.ratelimit import Limit, parse_limit
from ..policies.tool import ToolDefaults
from ..protocol.strict_json import DEFAULT_LIMITS, JSONLimits
from .defaults import DEFAULTS
from .oversight import ApprovalSettings, AuditSettings
from .prefix import DEFAULT_PREFIX, apply_defaults, canonical_view, other_prefixes, spelled
from .redis_options import redis_options
from .values import (
    as_tuple,
    fraction,
    milliseconds,
    optional_count,
    optional_number,
    optional_positive,
    positive,
    positive_number,
    scope,
)

__all__ = [
    "DEFAULTS",
    "LateSettingWarning",
    "ProcessLocalSessionsWarning",
    "Settings",
    "UnknownSettingWarning",
    "changed_settings",
]

_CACHE_PREFIX = "MCP_CACHE_"
_EPHEMERAL_PREFIX = "MCP_EPHEMERAL_CACHE_"
#: flask-caching backends by the short names people write (flask-caching itself wants the class name).
_CACHE_TYPES = {
    "simple": "SimpleCache",
    "simplecache": "SimpleCache",
    "null": "NullCache",
    "nullcache": "NullCache",
    "redis": "RedisCache",
    "rediscache": "RedisCache",
    "rediscluster": "RedisClusterCache",
    "redissentinel": "RedisSentinelCache",
    "filesystem": "FileSystemCache",
    "memcached": "MemcachedCache",
    "saslmemcached": "SASLMemcachedCache",
    "uwsgi": "UWSGICache",
}


class UnknownSettingWarning(UserWarning):
    """An ``MCP_*`` key in the config that flask_mcp does not know: most likely a typo."""


class LateSettingWarning(UserWarning):
    """An ``MCP_*`` key changed after the extension was set up, when it no longer has any effect."""


class ProcessLocalSessionsWarning(UserWarning):
    """Handshake sessions in one process's memory (SimpleCache) under a server that runs several processes."""


def changed_settings(
    read: t.Mapping[str, t.Any], config: t.Mapping[str, t.Any], prefix: str = DEFAULT_PREFIX
) -> list[str]:
    """The keys of the server with *prefix* whose value in *config* is not the one *read* at set-up."""
    own = prefix + "_"
    return sorted(key for key, value in config.items() if key.startswith(own) and read.get(key, value) != value)


def _warn_unknown(config: t.Mapping[str, t.Any], prefix: str) -> None:
    """Warn about ``MCP_*`` keys (in *config*'s canonical view) that are not settings, naming the closest one.

    The default server passes over the keys of servers with other prefixes (``MCP_ADMIN_*``).
    """
    known = set(DEFAULTS)
    others = other_prefixes(prefix) if prefix == DEFAULT_PREFIX else ()
    for key in config:
        if not key.startswith("MCP_") or key in known or key.startswith((_CACHE_PREFIX, _EPHEMERAL_PREFIX, *others)):
            continue
        close = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
        hint = f"; did you mean {spelled(close[0], prefix)}?" if close else ""
        warnings.warn(
            f"{spelled(key, prefix)} is not a flask_mcp setting and is ignored{hint}",
            UnknownSettingWarning,
            stacklevel=4,
        )


@dataclasses.dataclass(frozen=True)
class Settings:
    """The ``MCP_*`` keys of one app, read once when the extension is set up."""

    url_prefix: str
    page_size: int | None
    stateless: bool
    session_ttl: int
    max_content_length: int
    allowed_origins: tuple[str, ...]
    allowed_hosts: tuple[str, ...] | None
    #: ``None``: mask unless the app runs in debug mode (checked per error).
    mask_errors: bool | None
    cache_config: dict[str, t.Any]
    client_request_timeout: float = 300.0
    sse_keepalive: float = 15.0
    #: A handler with a Context runs on a thread of its own (else inline, in a greenlet).
    stream_threads: bool = False
    sse_retry_ms: int = 1000
    sse_max_lifetime: float = 300.0
    sse_poll_interval: float = 0.05
    rest_enabled: bool = True
    #: Normalized: starts with ``/``, no trailing ``/``; ``None``: the endpoint's path + ``/rest``.
    rest_prefix: str | None = None
    #: Without a trailing ``/``.
    swagger_ui_url: str = ""
    #: Defaults of every tool's call options.
    tool_defaults: ToolDefaults = dataclasses.field(default_factory=ToolDefaults)
    auth_tokens: t.Mapping[str, t.Any] | None = None
    auth_api_key_header: str | None = None
    #: ``MCP_LOCAL_PRINCIPAL``: a subject or a mapping with ``subject`` and ``scopes``.
    local_principal: str | t.Mapping[str, t.Any] | None = None
    auth_resource: str | None = None
    auth_authorization_servers: tuple[str, ...] = ()
    auth_scopes_supported: tuple[str, ...] = ()
    auth_required_scopes: tuple[str, ...] = ()
    #: ``MCP_AUTH_OPENAPI``; ``None``: the document needs a credential whenever the server requires one.
    auth_openapi: bool | None = None
    sessions_per_principal: int | None = 100
    session_max_age: int | None = 86400
    track_session_reads: bool = True
    filter_listings_by_permissions: bool = False
    require_permissions: bool = False
    include_tags: tuple[str, ...] | None = None
    exclude_tags: tuple[str, ...] = ()
    #: Parsed from a rule string (:func:`flask_mcp.policies.ratelimit.parse_limit`).
    rate_limit: Limit | None = None
    #: Each caller's budget of new sessions.
    session_rate_limit: Limit | None = None
    max_sessions: int = 10000
    store_high_water: float = 0.9
    #: What one caller may keep in the short-lived store, per kind: entries and bytes (``None``: unbounded).
    store_quota_entries: int | None = 1000
    store_quota_bytes: int | None = 16 * 1024 * 1024
    max_subscriptions: int | None = 100
    inflight_ttl: int = 60
    max_streams: int = 32
    max_waiting_per_caller: int = 4
    sse_idle_timeout: float = 60.0
    sse_replay_max: int = 100
    sse_replay_age: int = 300
    body_timeout: float | None = 10.0
    body_grace: float = 1.0
    body_waiters: int | None = 2
    #: ``CACHE_*`` overrides of the ephemeral cache (``MCP_EPHEMERAL_CACHE_*``), ``None`` values left out.
    ephemeral_cache_overrides: dict[str, t.Any] = dataclasses.field(default_factory=dict)
    #: ``MCP_MAX_JSON_KEYS``, ``MCP_MAX_JSON_DEPTH`` and ``MCP_MAX_JSON_STRING``.
    json_limits: JSONLimits = DEFAULT_LIMITS
    max_uri_length: int = 8192
    modern_era: bool = True
    #: ``ttlMs`` of cacheable modern results.
    client_cache_ttl_ms: int = 0
    #: ``None``: derived from whether answers depend on the caller.
    client_cache_scope: t.Literal["public", "private"] | None = None
    request_state_secret: str | bytes | None = None
    request_state_ttl: int = 600
    request_state_max_bytes: int = 65536
    context_state_ttl: int = 3600
    context_state_max_bytes: int = 65536
    listen_max_lifetime: float = 3600.0
    task_ttl: int = 3600
    task_poll_interval: float = 0.5
    task_max_per_caller: int | None = 100
    task_workers: int = 4
    task_max_bytes: int = 1024 * 1024
    task_executor: str = "thread"
    skills_folder: str | None = None
    skill_file_max_bytes: int = 4 * 1024 * 1024
    task_heartbeat: float = 5.0
    task_lost_after: float | None = 30.0
    task_max_kept_per_caller: int | None = 200
    task_max_bytes_per_caller: int | None = 32 * 1024 * 1024
    task_max_total: int | None = 10_000
    task_max_total_bytes: int | None = 256 * 1024 * 1024
    #: ``None``: half of ``task_workers`` (at least one).
    task_workers_per_caller: int | None = None
    #: How the human approves tools marked ``confirm`` (``MCP_CONFIRM_*``).
    approval: ApprovalSettings = dataclasses.field(default_factory=ApprovalSettings)
    #: What the audit trail records and where (``MCP_AUDIT_*``).
    audit: AuditSettings = dataclasses.field(default_factory=AuditSettings)
    #: The prefix of the keys these settings were read from (``MCP``, or the server's ``config_prefix``).
    config_prefix: str = DEFAULT_PREFIX

    @classmethod
    def from_app(cls, app: Flask, prefix: str = DEFAULT_PREFIX, server_name: str = "mcp") -> Settings:
        """Apply the defaults to ``app.config`` and read the result.

        :param prefix: the server's ``config_prefix``: its keys are ``<prefix>_URL_PREFIX``...
            (see :mod:`flask_mcp.config.prefix`).
        :param server_name: its blueprint's name, which a prefixed server's URL and store keys default to.
        """
        apply_defaults(app.config, prefix, DEFAULTS, server_name)
        config = canonical_view(app.config, prefix)
        _warn_unknown(config, prefix)
        page_size = config["MCP_PAGE_SIZE"]
        if page_size is not None and (not isinstance(page_size, int) or page_size < 1):
            raise ValueError(f"MCP_PAGE_SIZE must be a positive integer or None, not {page_size!r}")
        hosts = config["MCP_ALLOWED_HOSTS"]
        max_sessions = positive(config, "MCP_MAX_SESSIONS")
        return cls(
            config_prefix=prefix,
            url_prefix=config["MCP_URL_PREFIX"],
            page_size=page_size,
            stateless=bool(config["MCP_STATELESS"]),
            session_ttl=int(config["MCP_SESSION_TTL"]),
            max_content_length=int(config["MCP_MAX_CONTENT_LENGTH"]),
            allowed_origins=as_tuple(config["MCP_ALLOWED_ORIGINS"]),
            allowed_hosts=None if hosts is None else as_tuple(hosts),
            mask_errors=None if config["MCP_MASK_ERRORS"] is None else bool(config["MCP_MASK_ERRORS"]),
            client_request_timeout=float(config["MCP_CLIENT_REQUEST_TIMEOUT"]),
            sse_keepalive=float(config["MCP_SSE_KEEPALIVE"]),
            stream_threads=bool(config["MCP_STREAM_THREADS"]),
            sse_retry_ms=int(config["MCP_SSE_RETRY_MS"]),
            sse_max_lifetime=float(config["MCP_SSE_MAX_LIFETIME"]),
            sse_poll_interval=float(config["MCP_SSE_POLL_INTERVAL"]),
            rest_enabled=bool(config["MCP_REST_ENABLED"]),
            rest_prefix=None if config["MCP_REST_PREFIX"] is None else "/" + str(config["MCP_REST_PREFIX"]).strip("/"),
            swagger_ui_url=str(config["MCP_SWAGGER_UI_URL"]).rstrip("/"),
            tool_defaults=_tool_defaults(config),
            auth_tokens=config["MCP_AUTH_TOKENS"] or None,
            auth_api_key_header=config["MCP_AUTH_API_KEY_HEADER"] or None,
            local_principal=config["MCP_LOCAL_PRINCIPAL"] or None,
            auth_resource=config["MCP_AUTH_RESOURCE"] or None,
            auth_authorization_servers=as_tuple(config["MCP_AUTH_AUTHORIZATION_SERVERS"]),
            auth_scopes_supported=as_tuple(config["MCP_AUTH_SCOPES_SUPPORTED"]),
            auth_required_scopes=as_tuple(config["MCP_AUTH_REQUIRED_SCOPES"]),
            auth_openapi=None if config["MCP_AUTH_OPENAPI"] is None else bool(config["MCP_AUTH_OPENAPI"]),
            sessions_per_principal=optional_positive(config, "MCP_SESSIONS_PER_PRINCIPAL"),
            session_max_age=optional_positive(config, "MCP_SESSION_MAX_AGE"),
            track_session_reads=bool(config["MCP_TRACK_SESSION_READS"]),
            filter_listings_by_permissions=bool(config["MCP_FILTER_LISTINGS_BY_PERMISSIONS"]),
            require_permissions=bool(config["MCP_REQUIRE_PERMISSIONS"]),
            include_tags=as_tuple(config["MCP_INCLUDE_TAGS"] or ()) or None,
            exclude_tags=as_tuple(config["MCP_EXCLUDE_TAGS"] or ()),
            rate_limit=parse_limit(config["MCP_RATE_LIMIT"]),
            session_rate_limit=parse_limit(config["MCP_SESSION_RATE_LIMIT"]),
            max_sessions=max_sessions,
            store_high_water=fraction(config, "MCP_STORE_HIGH_WATER"),
            store_quota_entries=optional_positive(config, "MCP_STORE_QUOTA_ENTRIES"),
            store_quota_bytes=optional_positive(config, "MCP_STORE_QUOTA_BYTES"),
            max_subscriptions=optional_positive(config, "MCP_MAX_SUBSCRIPTIONS"),
            inflight_ttl=positive(config, "MCP_INFLIGHT_TTL"),
            max_streams=positive(config, "MCP_MAX_STREAMS"),
            max_waiting_per_caller=positive(config, "MCP_MAX_WAITING_PER_CALLER"),
            sse_idle_timeout=float(config["MCP_SSE_IDLE_TIMEOUT"]),
            sse_replay_max=positive(config, "MCP_SSE_REPLAY_MAX"),
            sse_replay_age=positive(config, "MCP_SSE_REPLAY_AGE"),
            body_timeout=optional_number(config, "MCP_BODY_TIMEOUT"),
            body_grace=positive_number(config, "MCP_BODY_GRACE"),
            body_waiters=optional_count(config, "MCP_BODY_WAITERS"),
            cache_config=_cache_config(config, _CACHE_PREFIX, max_sessions),
            ephemeral_cache_overrides=_cache_config(config, _EPHEMERAL_PREFIX, None),
            json_limits=JSONLimits(
                max_keys=positive(config, "MCP_MAX_JSON_KEYS"),
                max_depth=positive(config, "MCP_MAX_JSON_DEPTH"),
                max_string=optional_positive(config, "MCP_MAX_JSON_STRING"),
            ),
            max_uri_length=positive(config, "MCP_MAX_URI_LENGTH"),
            modern_era=bool(config["MCP_MODERN_ERA"]),
            client_cache_ttl_ms=milliseconds(config, "MCP_CLIENT_CACHE_TTL"),
            client_cache_scope=scope(config["MCP_CLIENT_CACHE_SCOPE"]),
            request_state_secret=config["MCP_REQUEST_STATE_SECRET"] or config.get("SECRET_KEY") or None,
            request_state_ttl=positive(config, "MCP_REQUEST_STATE_TTL"),
            request_state_max_bytes=positive(config, "MCP_REQUEST_STATE_MAX_BYTES"),
            context_state_ttl=positive(config, "MCP_CONTEXT_STATE_TTL"),
            context_state_max_bytes=positive(config, "MCP_CONTEXT_STATE_MAX_BYTES"),
            listen_max_lifetime=float(positive_number(config, "MCP_LISTEN_MAX_LIFETIME")),
            task_ttl=positive(config, "MCP_TASK_TTL"),
            task_poll_interval=float(positive_number(config, "MCP_TASK_POLL_INTERVAL")),
            task_max_per_caller=optional_positive(config, "MCP_TASK_MAX_PER_CALLER"),
            task_workers=positive(config, "MCP_TASK_WORKERS"),
            task_max_bytes=positive(config, "MCP_TASK_MAX_BYTES"),
            task_executor=_executor(config["MCP_TASK_EXECUTOR"]),
            skills_folder=config["MCP_SKILLS_FOLDER"] or None,
            skill_file_max_bytes=positive(config, "MCP_SKILL_FILE_MAX_BYTES"),
            task_heartbeat=float(positive_number(config, "MCP_TASK_HEARTBEAT")),
            task_lost_after=optional_number(config, "MCP_TASK_LOST_AFTER"),
            task_max_kept_per_caller=optional_positive(config, "MCP_TASK_MAX_KEPT_PER_CALLER"),
            task_max_bytes_per_caller=optional_positive(config, "MCP_TASK_MAX_BYTES_PER_CALLER"),
            task_max_total=optional_positive(config, "MCP_TASK_MAX_TOTAL"),
            task_max_total_bytes=optional_positive(config, "MCP_TASK_MAX_TOTAL_BYTES"),
            task_workers_per_caller=optional_positive(config, "MCP_TASK_WORKERS_PER_CALLER"),
            approval=ApprovalSettings.from_config(config),
            audit=AuditSettings.from_config(config),
        )


def _cache_config(config: t.Mapping[str, t.Any], prefix: str, max_sessions: int | None) -> dict[str, t.Any]:
    """``CACHE_*`` settings from the keys starting with *prefix*; ``None`` values are left out."""
    found = {"CACHE_" + key[len(prefix) :]: value for key, value in config.items() if key.startswith(prefix)}
    kind = found.get("CACHE_TYPE")
    if isinstance(kind, str) and kind.lower().replace("_", "") in _CACHE_TYPES:
        found["CACHE_TYPE"] = _CACHE_TYPES[kind.lower().replace("_", "")]
    kind = str(found.get("CACHE_TYPE", ""))
    if "CACHE_OPTIONS" not in found:
        # A Redis that stops answering must fail requests in bounded time (503), not hang them, nor
        # retry for seconds: socket timeouts and short retries (an app's own MCP_CACHE_OPTIONS replace them).
        defaults = redis_options(kind)
        if defaults is not None:
            found["CACHE_OPTIONS"] = defaults
    if max_sessions is not None:
        # New sessions are admitted while the cache holds fewer than
        # MCP_MAX_SESSIONS entries, and each one adds at most four (its
        # record, its owner's index, its subscription list and that list's
        # lock): at four times the cap, SimpleCache never reaches its
        # threshold, where it would evict.
        threshold = found.get("CACHE_THRESHOLD")
        if threshold is None:
            found["CACHE_THRESHOLD"] = 4 * max_sessions
        elif threshold < 4 * max_sessions:
            raise ValueError(
                f"MCP_CACHE_THRESHOLD ({threshold}) must be at least four times MCP_MAX_SESSIONS ({max_sessions}): "
                "below that the session cache evicts live sessions instead of refusing new ones"
            )
    return {key: value for key, value in found.items() if value is not None}


def _executor(value: t.Any) -> str:
    if value not in ("thread", "celery"):
        raise ValueError(f"MCP_TASK_EXECUTOR must be 'thread' or 'celery', not {value!r}")
    return t.cast(str, value)


def _tool_defaults(config: t.Mapping[str, t.Any]) -> ToolDefaults:
    max_bytes = optional_number(config, "MCP_MAX_RESULT_BYTES")
    return ToolDefaults(
        output_format=coerce(OutputFormat, config["MCP_OUTPUT_FORMAT"], "MCP_OUTPUT_FORMAT"),
        include_structured_content=bool(config["MCP_INCLUDE_STRUCTURED_CONTENT"]),
        include_output_schema=bool(config["MCP_INCLUDE_OUTPUT_SCHEMA"]),
        timeout=optional_number(config, "MCP_TOOL_TIMEOUT"),
        max_result_bytes=None if max_bytes is None else int(max_bytes),
        error_format=coerce(ErrorFormat, config["MCP_ERROR_FORMAT"], "MCP_ERROR_FORMAT"),
        include_validation_value=bool(config["MCP_INCLUDE_VALIDATION_VALUE"]),
        spill_ttl=int(config["MCP_SPILL_TTL"]),
        confirm_destructive=bool(config["MCP_CONFIRM_DESTRUCTIVE"]),
    )
