"""Every ``MCP_*`` configuration key with its default, and why it is what it is.

:mod:`flask_mcp.config.settings` reads them into :class:`~flask_mcp.config.settings.Settings`;
``docs/configuration.rst`` describes each (a test checks that every key
the docs name is one of these).
"""

from __future__ import annotations

import typing as t

__all__ = ["DEFAULTS"]

#: Every configuration key with its default. ``init_app`` fills in the missing
#: ones with ``app.config.setdefault`` so ``app.config`` shows what is in force.
DEFAULTS: dict[str, t.Any] = {
    # Path of the MCP endpoint when registered through init_app.
    "MCP_URL_PREFIX": "/mcp",
    # Items per page of every */list result; None disables pagination.
    "MCP_PAGE_SIZE": 100,
    # Issue no sessions: every request stands alone.
    "MCP_STATELESS": False,
    # Seconds a session may stay idle before it expires.
    "MCP_SESSION_TTL": 3600,
    # Largest request body accepted, in bytes (4 MiB).
    "MCP_MAX_CONTENT_LENGTH": 4 * 1024 * 1024,
    # Browser origins allowed to call the endpoint, besides the server's own
    # and loopback ones; "*" allows every origin.
    "MCP_ALLOWED_ORIGINS": (),
    # Host header values accepted; None means loopback names when serving on
    # loopback and anything otherwise.
    "MCP_ALLOWED_HOSTS": None,
    # Seconds a handler waits for the client to answer sampling, elicitation or roots requests.
    "MCP_CLIENT_REQUEST_TIMEOUT": 300,
    # Seconds between keep-alive comments on an idle event stream.
    "MCP_SSE_KEEPALIVE": 15,
    # Run a handler that takes a Context on a thread of its own, instead of in
    # a greenlet of the request's thread beside its event stream.
    "MCP_STREAM_THREADS": False,
    # Reconnection delay (ms) suggested to clients in the first event of a stream.
    "MCP_SSE_RETRY_MS": 1000,
    # Seconds a GET event stream stays open before the server ends it (clients reconnect).
    "MCP_SSE_MAX_LIFETIME": 300,
    # Seconds between two looks at the store by the one watcher per process
    # that wakes waiting streams and handlers.
    "MCP_SSE_POLL_INTERVAL": 0.05,
    # Hide exception detail from clients; None means "unless app.debug".
    "MCP_MASK_ERRORS": None,
    # Serve every tool as POST <MCP_REST_PREFIX>/tools/<name>, with an OpenAPI document and a docs page.
    "MCP_REST_ENABLED": True,
    # Path under which the REST routes, openapi.json and the docs page live.
    # None: MCP_URL_PREFIX + "/rest" (where the endpoint is, + "/rest"); a path: there.
    "MCP_REST_PREFIX": None,
    # Where the docs page loads swagger-ui-bundle.js and swagger-ui.css from;
    # empty: the copy installed with flask-swagger-ui, served by the app itself.
    "MCP_SWAGGER_UI_URL": "",
    # Text block of structured tool results: "json", "toon" (needs toon-format) or "auto".
    "MCP_OUTPUT_FORMAT": "json",
    # Send structuredContent with tool results (tools may override).
    "MCP_INCLUDE_STRUCTURED_CONTENT": True,
    # Advertise tools' outputSchema in tools/list (tools may override). True
    # with MCP_INCLUDE_STRUCTURED_CONTENT False is refused: the spec forbids it.
    "MCP_INCLUDE_OUTPUT_SCHEMA": True,
    # Seconds a tool call may take before it ends with a time-out error; None: no limit.
    "MCP_TOOL_TIMEOUT": None,
    # Largest tool result in bytes of JSON; None: no limit.
    "MCP_MAX_RESULT_BYTES": None,
    # Seconds a result spilled to a resource (spill_to_resource=True) stays readable.
    "MCP_SPILL_TTL": 3600,
    # Wording of failed tool calls: "text", "json" or "plain".
    "MCP_ERROR_FORMAT": "text",
    # Echo the arguments in validation errors (they may hold sensitive data).
    "MCP_INCLUDE_VALIDATION_VALUE": False,
    # flask-caching backend of the session store (any CACHE_* key works as MCP_CACHE_*).
    "MCP_CACHE_TYPE": "SimpleCache",
    "MCP_CACHE_KEY_PREFIX": "flask_mcp:",
    # Entries the session cache holds before SimpleCache evicts; None: four
    # times MCP_MAX_SESSIONS, so that new sessions are refused before any is evicted.
    "MCP_CACHE_THRESHOLD": None,
    # Static bearer tokens: {token or "sha256:<hex>": subject or {"subject", "scopes"}};
    # None configures no static backend (MCP(auth=...) may give another).
    "MCP_AUTH_TOKENS": None,
    # The caller of stdio and the flask mcp commands when no token is given
    # (--token, FLASK_MCP_TOKEN): a subject, or {"subject", "scopes"}; None: nobody.
    "MCP_LOCAL_PRINCIPAL": None,
    # Also accept a static token in this header (e.g. "X-API-Key"); None: Authorization only.
    "MCP_AUTH_API_KEY_HEADER": None,
    # This server's resource identifier (RFC 8707/9728); None: the endpoint's absolute URL.
    "MCP_AUTH_RESOURCE": None,
    # Issuer URLs of the authorization servers listed in the resource metadata.
    "MCP_AUTH_AUTHORIZATION_SERVERS": (),
    # scopes_supported of the resource metadata.
    "MCP_AUTH_SCOPES_SUPPORTED": (),
    # Scopes named (scope="...") in the 401 challenge.
    "MCP_AUTH_REQUIRED_SCOPES": (),
    # Refuse the REST adapter's OpenAPI document without a credential. None: refused when the
    # server has an auth backend (the docs page then asks the user to sign in first);
    # False: public (the tools an anonymous caller may list); True: refused, said explicitly.
    # A server without a backend has no credential to check: its document is public.
    "MCP_AUTH_OPENAPI": None,
    # The OAuth authorization server (flask_mcp.oauth.OAuthServer, the oauth extra).
    # Its issuer identifier; None: the origin of MCP_AUTH_RESOURCE.
    "MCP_OAUTH_ISSUER": None,
    # Path of its endpoints (authorize, token, register, revoke, jwks.json, connections).
    "MCP_OAUTH_URL_PREFIX": "/oauth",
    # SQLAlchemy URL of its database; None: SQLite in the app's instance folder
    # (or the Flask-SQLAlchemy db given to OAuthServer).
    "MCP_OAUTH_DATABASE_URI": None,
    # Lifetimes in seconds: access tokens are short-lived, codes live a minute.
    "MCP_OAUTH_ACCESS_TOKEN_TTL": 600,
    "MCP_OAUTH_REFRESH_TOKEN_TTL": 30 * 86400,
    "MCP_OAUTH_CODE_TTL": 60,
    # Serve RFC 7591 dynamic client registration.
    "MCP_OAUTH_REGISTRATION": True,
    # An initial access token registration needs (Authorization: Bearer); None: open registration.
    "MCP_OAUTH_REGISTRATION_TOKEN": None,
    # Registrations per client address.
    "MCP_OAUTH_REGISTRATION_RATE_LIMIT": "20/hour",
    # Refused token, registration and revocation requests per client address (bad secrets,
    # invalid grants, malformed input); once spent, the address waits (429 with Retry-After).
    "MCP_OAUTH_RATE_LIMIT_FAILURES": "30/minute",
    # Tokens issued per client; once spent, its token and revocation requests wait.
    "MCP_OAUTH_RATE_LIMIT_CLIENT": "300/minute",
    # Seconds after a refresh token's rotation during which the same client presenting it again
    # (two tabs, a retry after a lost answer) gets a new pair instead of revoking the family; 0: none.
    "MCP_OAUTH_REFRESH_GRACE": 10,
    # Seconds between sweeps of expired codes, tokens, families and unused clients, run after an
    # answer of the token, registration or revocation endpoint; None: only `flask mcp oauth prune`.
    "MCP_OAUTH_PRUNE_INTERVAL": 300,
    # Rows a sweep deletes per table at most (its cost on the request that runs it).
    "MCP_OAUTH_PRUNE_BATCH": 1000,
    # Seconds after which a registered client that never obtained a token is deleted; None: kept.
    "MCP_OAUTH_UNUSED_CLIENT_TTL": 86400,
    # {scope: description} shown on the consent page, besides the scopes the tools' permissions use.
    "MCP_OAUTH_SCOPES": {},
    # Private signing keys (JWKs, the newest first); empty: generated once and kept in the database.
    "MCP_OAUTH_SIGNING_KEYS": (),
    # Endpoint of the app's login view; None: Flask-Login's login_manager.login_view.
    "MCP_OAUTH_LOGIN_VIEW": None,
    # Seconds a consent page stays valid before its form is refused.
    "MCP_OAUTH_CONSENT_MAX_AGE": 600,
    # The service the consent page says the user connects to; None: the MCP server's name.
    "MCP_OAUTH_SERVICE_NAME": None,
    # Client ID Metadata Documents: a client_id that is an https URL is fetched and used as the client.
    "MCP_OAUTH_CLIENT_METADATA_DOCUMENTS": True,
    # Largest document read, in bytes.
    "MCP_OAUTH_CLIENT_METADATA_MAX_BYTES": 5120,
    # Seconds for the whole fetch (connect, TLS, headers, body).
    "MCP_OAUTH_CLIENT_METADATA_TIMEOUT": 5,
    # Seconds a document is kept in the ephemeral cache at least (when its headers allow) and at most.
    "MCP_OAUTH_CLIENT_METADATA_CACHE_MIN": 60,
    "MCP_OAUTH_CLIENT_METADATA_CACHE_MAX": 86400,
    # Document fetches per client address.
    "MCP_OAUTH_CLIENT_METADATA_RATE_LIMIT": "30/minute",
    # A PEM CA bundle to verify document servers with; None: the default bundle.
    "MCP_OAUTH_CLIENT_METADATA_CA_BUNDLE": None,
    # Fetch from loopback addresses (only with TESTING = True, for documents served by tests).
    "MCP_OAUTH_CLIENT_METADATA_ALLOW_LOOPBACK": False,
    # Upstream identity provider mode: users sign in with this OpenID Connect provider
    # (its discovery document's URL; None: the app's own users) as this client of it.
    "MCP_OAUTH_UPSTREAM_DISCOVERY_URL": None,
    "MCP_OAUTH_UPSTREAM_CLIENT_ID": None,
    # None: a public client of the provider (PKCE only).
    "MCP_OAUTH_UPSTREAM_CLIENT_SECRET": None,
    # Scopes asked of the provider ("openid" is always added).
    "MCP_OAUTH_UPSTREAM_SCOPE": "openid profile email",
    # Seconds each request to the provider may take.
    "MCP_OAUTH_UPSTREAM_TIMEOUT": 10,
    # Live sessions per principal; past it the oldest is ended. None: no cap.
    "MCP_SESSIONS_PER_PRINCIPAL": 100,
    # Absolute lifetime of a session in seconds, however active; None: no limit.
    "MCP_SESSION_MAX_AGE": 86400,
    # With Redis: keep the session records read in each process while Redis reports them
    # unchanged (client tracking), instead of reading the store on every request.
    "MCP_TRACK_SESSION_READS": True,
    # Leave out of */list results the components the caller's permissions deny.
    "MCP_FILTER_LISTINGS_BY_PERMISSIONS": False,
    # Serve only components with one of these tags (tags=); None or empty: no such filter.
    "MCP_INCLUDE_TAGS": None,
    # Serve no component with one of these tags. MCP(include_tags=..., exclude_tags=...) win over both keys.
    "MCP_EXCLUDE_TAGS": (),
    # Refuse, instead of warning about, tools without permissions when auth is configured.
    "MCP_REQUIRE_PERMISSIONS": False,
    # Every caller's budget of tool calls, all tools together: "100/minute", a
    # FixedWindow or a TokenBucket; None: no server-wide limit.
    "MCP_RATE_LIMIT": None,
    # Sessions under load.
    # Every caller's budget of new sessions (principal, else remote address);
    # past it initialize gets 429. A rule string, FixedWindow or TokenBucket; None: no quota.
    "MCP_SESSION_RATE_LIMIT": "1000/hour",
    # Live sessions a SimpleCache session store holds; past it initialize gets 503.
    "MCP_MAX_SESSIONS": 10000,
    # Fraction of Redis's maxmemory past which initialize gets 503 (before Redis evicts);
    # also the fraction of Redis's maxmemory, or of the ephemeral SimpleCache's threshold,
    # past which client-driven short-lived entries (ctx.state, spilled results...) get 429.
    "MCP_STORE_HIGH_WATER": 0.9,
    # The shared short-lived store: what one caller (principal, else remote address)
    # may keep there of each kind (ctx.state records, spilled results, cached results,
    # task records), in entries and in bytes; past it, 429. None: no such bound.
    "MCP_STORE_QUOTA_ENTRIES": 1000,
    "MCP_STORE_QUOTA_BYTES": 16 * 1024 * 1024,
    # Resource URIs one session may subscribe to at once.
    "MCP_MAX_SUBSCRIPTIONS": 100,
    # Seconds a request id stays in use after the worker running it stopped
    # renewing it (it died); live workers renew theirs every third of it.
    "MCP_INFLIGHT_TTL": 60,
    # Short-lived entries (answers, cancellations, in-flight ids, stream events,
    # rate-limit counters, spilled results) live in a cache of their own, so
    # they can never evict a session. It is configured like the session cache
    # (MCP_CACHE_*); these keys override single settings of it.
    "MCP_EPHEMERAL_CACHE_KEY_PREFIX": None,  # None: MCP_CACHE_KEY_PREFIX + "e:"
    "MCP_EPHEMERAL_CACHE_THRESHOLD": 50000,
    # Streams and slow clients.
    # GET event streams one process holds open at once; past it GET gets 503.
    # Keep it below the worker's thread count (gthread: --threads).
    "MCP_MAX_STREAMS": 32,
    # Handlers of one caller waiting at once in a process for that caller's answers (each holds a
    # thread); the next question fails at once. Keep it below the worker's thread count too.
    "MCP_MAX_WAITING_PER_CALLER": 4,
    # Seconds a GET stream stays open without sending an event; the client reconnects with Last-Event-ID.
    "MCP_SSE_IDLE_TIMEOUT": 60,
    # Most events replayed to a client resuming a stream; older ones are skipped.
    "MCP_SSE_REPLAY_MAX": 100,
    # Seconds events stay in the store for replay.
    "MCP_SSE_REPLAY_AGE": 300,
    # Seconds a request body may take to arrive, however slowly; past it 408. None: no limit.
    "MCP_BODY_TIMEOUT": 10,
    # Seconds a body may take before it needs one of the process's waiting places (MCP_BODY_WAITERS).
    "MCP_BODY_GRACE": 1.0,
    # Bodies one process waits for at once past their grace (each holds a thread); one more gets 503.
    # Keep it well below the worker's thread count (gthread: --threads). None: no limit.
    "MCP_BODY_WAITERS": 2,
    # Input limits.
    # Members of one JSON object in a message; more is -32600.
    "MCP_MAX_JSON_KEYS": 10_000,
    # Objects and arrays nested in each other in a message; deeper is -32600.
    "MCP_MAX_JSON_DEPTH": 64,
    # Characters of one JSON string (keys too); None: bounded by MCP_MAX_CONTENT_LENGTH alone.
    "MCP_MAX_JSON_STRING": None,
    # UTF-8 bytes of a resource URI in resources/read, subscribe, unsubscribe and completion refs; longer is -32602.
    "MCP_MAX_URI_LENGTH": 8192,
    # The modern era (2026-07-28).
    # Serve stateless 2026-07-28 requests beside the handshake era; False: handshake only.
    "MCP_MODERN_ERA": True,
    # Seconds (or a timedelta) clients may reuse server/discover, the */list
    # results and resources/read before asking again (ttlMs); 0: always ask.
    "MCP_CLIENT_CACHE_TTL": 0,
    # cacheScope of those results: "public", "private", or None for "private"
    # when answers depend on the caller (authentication, filtered listings).
    "MCP_CLIENT_CACHE_SCOPE": None,
    # Key that signs the requestState of input_required rounds; None: the
    # app's SECRET_KEY, else a random key kept in the shared store.
    "MCP_REQUEST_STATE_SECRET": None,
    # Seconds a requestState stays valid: the time a user has to answer.
    "MCP_REQUEST_STATE_TTL": 600,
    # Largest requestState issued or accepted, in bytes.
    "MCP_REQUEST_STATE_MAX_BYTES": 65536,
    # Seconds a ctx.state value lives unless set with its own ttl.
    "MCP_CONTEXT_STATE_TTL": 3600,
    # Largest ctx.state of one session or principal (keys and JSON values), in bytes.
    "MCP_CONTEXT_STATE_MAX_BYTES": 65536,
    # Seconds a subscriptions/listen stream stays open before the server ends it
    # with its result (clients listen again).
    "MCP_LISTEN_MAX_LIFETIME": 3600,
    # Tasks (tools with task=): seconds a task is kept from its creation (a client may ask for less).
    "MCP_TASK_TTL": 3600,
    # Seconds clients are told to wait between two polls of a task.
    "MCP_TASK_POLL_INTERVAL": 0.5,
    # Tasks one caller may have that have not ended; None: no limit.
    "MCP_TASK_MAX_PER_CALLER": 100,
    # Threads of this process that run tasks (the embedded executor).
    "MCP_TASK_WORKERS": 4,
    # The most one task's record (its result, answers and questions) may hold, in bytes of JSON.
    "MCP_TASK_MAX_BYTES": 1024 * 1024,
    # The folder of Agent Skills to serve (one subfolder per skill); None: <app root>/skills, if any.
    "MCP_SKILLS_FOLDER": None,
    # The largest skill file served, in bytes: a larger one is neither listed nor read (the log says so).
    "MCP_SKILL_FILE_MAX_BYTES": 4 * 1024 * 1024,
    # What runs tasks: "thread" (a pool in each process) or "celery" (the app's Celery workers).
    "MCP_TASK_EXECUTOR": "thread",
    # Seconds between two signs of life of a running task.
    "MCP_TASK_HEARTBEAT": 5,
    # Seconds without one after which a running task is failed as lost (its worker died); None: never.
    "MCP_TASK_LOST_AFTER": 30,
    # Tasks one caller keeps, ended ones included; past it its oldest ended one is let go
    # (and a new one refused while none has ended). None: no bound.
    "MCP_TASK_MAX_KEPT_PER_CALLER": 200,
    # Bytes (JSON) of one caller's kept tasks, arguments and results; past it as above. None: no bound.
    "MCP_TASK_MAX_BYTES_PER_CALLER": 32 * 1024 * 1024,
    # Tasks the store keeps for everybody; past it new tasks get 503. None: no bound.
    "MCP_TASK_MAX_TOTAL": 10000,
    # Bytes (JSON) of every task kept; past it new tasks get 503. None: no bound.
    "MCP_TASK_MAX_TOTAL_BYTES": 256 * 1024 * 1024,
    # Threads of the embedded executor one caller's tasks may hold at once; None: half of
    # MCP_TASK_WORKERS (at least one), so that another caller's task never waits behind them.
    "MCP_TASK_WORKERS_PER_CALLER": None,
    # OpenTelemetry spans and metrics by the MCP conventions, when the API is installed (the otel extra).
    "MCP_OTEL_ENABLED": True,
    # Record a tool call's arguments and result on its span (the caller's data: off by default).
    "MCP_OTEL_CAPTURE_CONTENT": False,
    # Characters of JSON recorded of each of them at most.
    "MCP_OTEL_CONTENT_MAX_LENGTH": 4096,
    # redact(kind, value) -> value to record, or None for nothing; kind is "arguments" or "result".
    "MCP_OTEL_CONTENT_REDACTOR": None,
    # flask_mcp's log records carry the current trace and span ids (otelTraceID, otelSpanID).
    "MCP_OTEL_LOG_CORRELATION": True,
    # Seconds of one window of mcp.server.session.duration: a session that idles out or passes its maximum
    # age is measured two to three windows after its end, by one request of one process.
    "MCP_OTEL_SESSION_SWEEP_INTERVAL": 60,
    # Ask the human before every tool whose annotations say destructiveHint: true, as confirm=True does.
    "MCP_CONFIRM_DESTRUCTIVE": False,
    # How approval is asked for: "auto" (the approval page when the client can open it and the app can
    # sign users in, else a form elicitation), "form" or "url" (only the approval page).
    "MCP_CONFIRM_MODE": "auto",
    # Seconds an approval may take, from the question to the answer (and, on the approval page, from
    # the approval to the call that uses it).
    "MCP_CONFIRM_TTL": 300,
    # Record every tools/call in the audit table (SQLAlchemy; the sqlalchemy extra).
    "MCP_AUDIT": False,
    # Record resources/read and prompts/get too.
    "MCP_AUDIT_READS": False,
    # Keep the arguments themselves (without the fields a schema marks secret), not only their digest.
    "MCP_AUDIT_ARGUMENTS": False,
    # Where the audit table lives when the app has no Flask-SQLAlchemy; None: SQLite in the instance folder.
    "MCP_AUDIT_DATABASE_URI": None,
    # Days rows are kept; None: forever.
    "MCP_AUDIT_RETENTION_DAYS": 90,
    # Records waiting to be written at most; past it new ones are counted and logged, not kept.
    "MCP_AUDIT_BUFFER": 10000,
    # Rows written in one transaction at most.
    "MCP_AUDIT_BATCH": 500,
    # Seconds the writer waits for a batch to fill before it writes a smaller one.
    "MCP_AUDIT_LINGER": 1.0,
}
