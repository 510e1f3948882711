"""Messages a surface answers with an error before the protocol core sees them, told to the tracer.

The core's tracer makes a span of every message it handles. A message
refused on the way there never reaches it: on the MCP endpoint, no
credentials (401), Host or Origin refused (403), an unknown or expired
session (404), a body that is not JSON or not JSON-RPC, a 2026-07-28
envelope, routing header or revision in error, a rate limit, a store that
does not answer; on the REST tool and resource routes and the CGI view, the
same guards, an unknown tool, a body that is not a JSON object, a method
not allowed. So each surface looks at its every answer in one place
(:func:`report`: the endpoint's view, the REST views as they are routed
through :func:`traced_view`, :func:`~flask_mcp.transport.cgi.serve_cgi`): an error status, and no
message of the request handled by the core, is a refusal, told to
:meth:`Tracer.refused <flask_mcp.core.tracing.Tracer.refused>` with what
can be read of it: the method (the ``Mcp-Method`` header, the body once
decoded, or what the REST or CGI path stands for: ``tools/call`` of the
tool it names; the target in ``Mcp-Name`` when the body was not read), the
request id, the revision, and the answer's JSON-RPC
error. Nothing is read for it that the surface did not already read: a
refused request's body is looked at only when the endpoint decoded it.
"""

from __future__ import annotations

import functools
import json
import logging
import time
import typing as t

from flask import request

from ..core.tracing import Refusal
from ..globals import current_state
from ..protocol.envelope import PROTOCOL_VERSION
from .routing_headers import NAME_PARAMS, decode_header_value

if t.TYPE_CHECKING:
    from _typeshed.wsgi import WSGIEnvironment
    from flask import Response

    from ..core.tracing import Tracer

__all__ = ["CORE_REACHED_KEY", "MESSAGE_KEY", "Addressed", "refusal_of", "report", "traced_view"]

logger = logging.getLogger("flask_mcp")

#: Set in the WSGI environ by the tracer when the core handles a message of the request.
CORE_REACHED_KEY = "flask_mcp.core_reached"
#: The request's body once decoded as JSON (whatever it holds), set by the endpoint.
MESSAGE_KEY = "flask_mcp.message"
#: Longest answer looked into for its error: the endpoint's own refusals are a few hundred bytes.
_MAX_ANSWER = 16384
#: The message a REST or CGI path stands for: its method and params (``("tools/call", {"name": ...})``).
Addressed = tuple[str, dict[str, t.Any]]


def report(
    tracer: Tracer, environ: WSGIEnvironment, answer: Response, started: int, addressed: Addressed | None = None
) -> None:
    """Tell *tracer* of *answer* if it refused a message the core never saw; never raises.

    :param started: when the request arrived (:func:`time.time_ns`).
    :param addressed: what the path stands for, on a surface whose path names the message
        (REST, CGI); the endpoint reads it from the request instead.
    """
    if answer.status_code < 400 or environ.get(CORE_REACHED_KEY) or answer.is_streamed:
        return
    try:
        tracer.refused(refusal_of(environ, answer, started, addressed))
    except Exception:  # a span is never worth a failed request
        logger.warning("could not trace a refused MCP request", exc_info=True)


def traced_view(view: t.Callable[..., Response], addressed: t.Callable[..., Addressed]) -> t.Callable[..., Response]:
    r"""*view* (a REST route's), whose answers are :func:`report`\ ed as refusals of the message *addressed* names.

    *addressed* is called with the view's arguments. With nothing recording,
    it costs one check.
    """

    @functools.wraps(view)
    def traced(**arguments: t.Any) -> Response:
        tracer = current_state().server.tracer
        if tracer is None or not tracer.recording:
            return view(**arguments)
        started = time.time_ns()
        answer = view(**arguments)
        report(tracer, request.environ, answer, started, addressed(**arguments))
        return answer

    return traced


def refusal_of(environ: WSGIEnvironment, answer: Response, started: int, addressed: Addressed | None = None) -> Refusal:
    """The :class:`~flask_mcp.core.tracing.Refusal` that *answer* is, with what the request says of itself."""
    code, message, answered_id = _error_of(answer)
    if addressed is not None:
        return Refusal(str(answer.status_code), code, message, started, addressed[0], addressed[1])
    payload = environ.get(MESSAGE_KEY)
    method: str | None = None
    params: dict[str, t.Any] | None = None
    request_id = None
    if isinstance(payload, dict):
        method = payload.get("method") if isinstance(payload.get("method"), str) else None
        params = payload.get("params") if isinstance(payload.get("params"), dict) else None
        found = payload.get("id")
        request_id = found if isinstance(found, (str, int)) and not isinstance(found, bool) else None
    if method is None:
        header = environ.get("HTTP_MCP_METHOD")
        method = header if isinstance(header, str) else None
        target = NAME_PARAMS.get(method) if method is not None else None
        named = environ.get("HTTP_MCP_NAME")
        if params is None and target is not None and isinstance(named, str):
            # The routing header names the tool, prompt or resource (bounded where it is recorded).
            value = decode_header_value(named)
            params = {target: value} if value is not None else None
    meta = params.get("_meta") if params is not None else None
    version = meta.get(PROTOCOL_VERSION) if isinstance(meta, dict) else None
    if not isinstance(version, str):
        version = environ.get("HTTP_MCP_PROTOCOL_VERSION")
    return Refusal(
        error_type=str(answer.status_code),
        code=code,
        message=message,
        started=started,
        method=method,
        params=params or {},
        request_id=request_id if request_id is not None else answered_id,
        protocol_version=version,
    )


def _error_of(answer: Response) -> tuple[int | None, str, str | int | None]:
    """The code, message and id of the JSON-RPC error *answer* carries; its HTTP status's words otherwise."""
    body: t.Any = None
    if answer.mimetype == "application/json" and (answer.content_length or 0) <= _MAX_ANSWER:
        try:
            body = json.loads(answer.get_data())
        except ValueError:
            body = None
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, str):  # a REST or CGI error: {"error": message}
        return None, error, None
    if not isinstance(error, dict):
        return None, answer.status, None
    code = error.get("code")
    answered_id = body.get("id")
    return (
        code if isinstance(code, int) and not isinstance(code, bool) else None,
        str(error.get("message", "")),
        answered_id if isinstance(answered_id, (str, int)) and not isinstance(answered_id, bool) else None,
    )
