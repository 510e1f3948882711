"""A small app for the gunicorn tests of ``test_transport_streaming``, configured from the environment.

``gunicorn tests.streaming_app:app`` serves one tool that samples and then
elicits, and three that change the tool list at run time (for listen streams
and removals).
``MCP_CACHE_*`` environment variables configure the session cache
(``MCP_CACHE_TYPE=RedisCache`` and ``MCP_CACHE_REDIS_URL`` to share sessions
between processes; ``MCP_CACHE_REDIS_SENTINELS`` as JSON);
``MCP_CLIENT_REQUEST_TIMEOUT`` bounds how long the tool
waits for the client, ``MCP_INFLIGHT_TTL`` how long a dead worker's request
ids stay in use, ``MCP_BODY_*`` (JSON values) how slow request bodies are
waited for.

To show where each request ran, a WSGI wrapper notes the handling thread in
the environ and remembers, per session, the threads that received the
client's answers; every response carries the worker's pid in
``X-Worker-Pid``.
"""

from __future__ import annotations

import io
import json
import os
import threading
import typing as t

import marshmallow as ma
from flask import Flask, Response, request
from marshmallow import fields

from flask_mcp import MCP, Context

if t.TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

THREAD_KEY = "streaming_app.thread"

mcp = MCP(name="streaming-app", version="1.0.0")
#: Session id -> idents of the threads that received a JSON-RPC response from the client.
ANSWER_THREADS: dict[str, list[int]] = {}
_lock = threading.Lock()


class Profile(ma.Schema):
    name = fields.String(required=True)
    team = fields.String(load_default="core")


@mcp.tool
def interview(prompt: str, ctx: Context) -> dict[str, t.Any]:
    """Ask the client's model, then the user; report where everything ran."""
    reply = ctx.sample(prompt, max_tokens=32)
    answer = ctx.elicit("Who are you?", Profile)
    with _lock:
        answer_threads = list(ANSWER_THREADS.get(ctx.session_id or "", []))
    return {
        "reply": reply["content"]["text"],
        "action": answer.action,
        "content": answer.content,
        "pid": os.getpid(),
        "request_thread": request.environ[THREAD_KEY],
        "answer_threads": answer_threads,
    }


@mcp.tool
def spare() -> str:
    """A tool that ``flip`` takes away and gives back."""
    return "spare"


@mcp.tool
def flip() -> str:
    """Disable ``spare`` if it is served, else enable it: every process hears of the change."""
    # mcp.tools is what this process serves, kept in step with the store before every request.
    served = "spare" in mcp.tools
    (mcp.disable if served else mcp.enable)("spare")
    return "disabled" if served else "enabled"


@mcp.tool
def drop(name: str) -> str:
    """Remove the tool *name*: every process stops serving it."""
    mcp.remove_tool(name)
    return f"removed {name}"


@mcp.tool(task="optional")
def confirm_on(host: str, ctx: Context) -> dict[str, t.Any]:
    """A task that asks for confirmation; reports which process ran each of its runs."""
    ctx.report_progress(0, message=f"asking about {host}")
    answer = ctx.elicit(f"Restart {host}?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}, key="ok")
    return {"host": host, "ok": bool((answer.content or {}).get("ok")), "pid": os.getpid()}


class NoteThreads:
    """WSGI wrapper: note the thread of every request and of every client answer."""

    def __init__(self, wsgi_app: WSGIApplication) -> None:
        self.wsgi_app = wsgi_app

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> t.Iterable[bytes]:
        environ[THREAD_KEY] = threading.get_ident()
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        environ["wsgi.input"] = io.BytesIO(body)
        try:
            message = json.loads(body) if body else None
        except ValueError:
            message = None
        if isinstance(message, dict) and "method" not in message and ("result" in message or "error" in message):
            with _lock:
                ANSWER_THREADS.setdefault(environ.get("HTTP_MCP_SESSION_ID", ""), []).append(threading.get_ident())
        return self.wsgi_app(environ, start_response)


def create_app(note_threads: bool = True) -> Flask:
    """The app; without *note_threads*, flask_mcp reads request bodies itself (the wrapper reads them first)."""
    app = Flask(__name__)
    app.config.update({key: value for key, value in os.environ.items() if key.startswith("MCP_CACHE_")})
    if "MCP_CACHE_REDIS_SENTINELS" in os.environ:  # the sentinels' addresses, as JSON: [["host", port], ...]
        sentinels = json.loads(os.environ["MCP_CACHE_REDIS_SENTINELS"])
        app.config["MCP_CACHE_REDIS_SENTINELS"] = [tuple(node) for node in sentinels]
    app.config["MCP_CLIENT_REQUEST_TIMEOUT"] = float(os.environ.get("MCP_CLIENT_REQUEST_TIMEOUT", "30"))
    app.config["MCP_INFLIGHT_TTL"] = int(os.environ.get("MCP_INFLIGHT_TTL", "60"))
    # The slow-body limits, as JSON numbers (or null), when a test sets them.
    app.config.update({key: json.loads(value) for key, value in os.environ.items() if key.startswith("MCP_BODY_")})
    mcp.init_app(app)

    @app.after_request
    def tag_worker(response: Response) -> Response:
        response.headers["X-Worker-Pid"] = str(os.getpid())
        return response

    if note_threads:
        app.wsgi_app = NoteThreads(app.wsgi_app)  # type: ignore[method-assign]
    return app


app = create_app()
