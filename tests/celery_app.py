"""An app whose MCP tasks run on Celery workers, for the tests that start real ones.

The web processes (gunicorn) and the worker (``celery -A tests.celery_app:celery_app
worker``) import this module alike; they share one redis-server, the broker and
the store of task records, named by ``TEST_REDIS_URL`` and ``TEST_PREFIX``. With
``TEST_OTLP_ENDPOINT`` each process also sends its spans there over OTLP/HTTP,
each span as it ends, with the process's id in the resource.
"""

from __future__ import annotations

import os
import threading
import typing as t

from celery import Celery
from flask import Flask

from flask_mcp import MCP, Context

mcp = MCP(name="celery-tasks")


@mcp.tool(task="optional")
def slow_sum(a: int, b: int, seconds: float, ctx: Context) -> dict[str, t.Any]:
    """Add, slowly; says which process runs it."""
    ctx.report_progress(0, message=f"adding in process {os.getpid()}")
    pause = threading.Event()
    waited = 0.0
    while waited < seconds:
        if ctx.cancelled:
            return {"cancelled": True, "pid": os.getpid()}
        pause.wait(0.05)
        waited += 0.05
    return {"sum": a + b, "pid": os.getpid()}


def create_app() -> Flask:
    app = Flask(__name__)
    redis_url = os.environ["TEST_REDIS_URL"]
    app.config.update(
        MCP_CACHE_TYPE="RedisCache",
        MCP_CACHE_REDIS_URL=redis_url,
        MCP_CACHE_KEY_PREFIX=os.environ["TEST_PREFIX"],
        MCP_TASK_EXECUTOR="celery",
        MCP_TASK_HEARTBEAT=0.2,
        MCP_TASK_LOST_AFTER=2,
        MCP_TASK_POLL_INTERVAL=0.05,
    )
    # Flask's Celery pattern: the instance in app.extensions["celery"], before the MCP extension.
    celery = Celery(app.name, broker=redis_url, task_ignore_result=True)
    celery.conf.task_default_queue = os.environ["TEST_PREFIX"].strip(":").replace(":", "-")  # this run's own
    app.extensions["celery"] = celery
    mcp.init_app(app)
    if os.environ.get("TEST_OTLP_ENDPOINT"):
        trace_to(app, os.environ["TEST_OTLP_ENDPOINT"])
    return app


def trace_to(app: Flask, endpoint: str) -> None:
    """Send *app*'s MCP spans to the OTLP/HTTP receiver at *endpoint*, each as it ends."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from flask_mcp.telemetry import instrument

    # Each span is sent as it ends: a worker killed by its test has nothing left unsent.
    provider = TracerProvider(resource=Resource.create({"service.name": "celery-tasks", "process.pid": os.getpid()}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{endpoint}/v1/traces", timeout=10)))
    instrument(app, tracer_provider=provider)


app = create_app()
celery_app = app.extensions["celery"]
