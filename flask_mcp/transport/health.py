"""``GET <endpoint>/health``: whether this process can serve, for a load balancer's health check.

``200 {"status": "serving"}`` while the store answers (or none is needed);
``503 {"status": "store_unavailable", "retryAfter": 1}`` with ``Retry-After``
while it does not. The process is up either way, and serves again by itself
once the store is back: a balancer takes it out of rotation, nothing restarts it.

Threat model. Anybody who can reach the endpoint may ask, with no credential,
as a balancer does; the answer says only whether this process can serve, never
where its store is or why it failed (that goes to the log). A probe costs one
read of one key of the store, and a process asks the store at most once a
second (:data:`RECHECK`), so a flood of probes costs the store nothing more.
"""

from __future__ import annotations

import threading
import time
import typing as t

from flask import Flask, Response, request

from ..globals import current_state
from ..stores.failures import RETRY_AFTER
from .errors import error_response, json_response
from .rules import add_rule

__all__ = ["RECHECK", "add_route", "health_view"]

#: Seconds a process keeps its last look at the store before it looks again.
RECHECK = 1.0
#: The key a probe reads: nothing is ever written under it.
_PROBE_KEY = "health-probe"
_ENDPOINT = "health"
_lock = threading.Lock()
#: Per store backend (by identity): when it was last asked, and whether it answered.
_verdicts: dict[int, tuple[float, bool]] = {}


def add_route(app: Flask, endpoint_prefix: str, mcp_path: str) -> None:
    """Route ``<mcp_path>/health`` to the health check of the server named *endpoint_prefix*."""
    # Every method reaches the view, so another one is answered with a JSON 405, not an HTML page.
    add_rule(app, mcp_path.rstrip("/") + "/health", f"{endpoint_prefix}.{_ENDPOINT}", health_view, ("GET", "HEAD"))


def health_view() -> Response:
    """200 while this server can serve, 503 with ``Retry-After`` while its store does not answer."""
    if request.method not in ("GET", "HEAD"):
        return error_response(405, "Method Not Allowed: the health check answers GET", headers={"Allow": "GET, HEAD"})
    state = current_state()
    cache = state.shared.cache if state.shared is not None else None
    if cache is None or _store_answers(cache, state.store_errors):
        return json_response({"status": "serving"})
    body = {"status": "store_unavailable", "retryAfter": RETRY_AFTER}
    return json_response(body, 503, {"Retry-After": str(RETRY_AFTER)})


def _store_answers(cache: t.Any, errors: tuple[type[BaseException], ...]) -> bool:
    now = time.monotonic()
    seen = _verdicts.get(id(cache))
    if seen is not None and now - seen[0] < RECHECK:
        return seen[1]
    with _lock:
        try:
            cache.get(_PROBE_KEY)
            answers = True
        except errors:
            answers = False
        _verdicts[id(cache)] = (now, answers)
    return answers
