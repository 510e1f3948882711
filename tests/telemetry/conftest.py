"""Providers of the OpenTelemetry SDK with in-memory exporters, handed to one app at a time.

The API's global providers are never set here: every other test keeps
running with them as its stand-ins, which record nothing.
"""

from __future__ import annotations

import io
import typing as t

import pytest
from flask import Flask
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from flask_mcp import MCP
from flask_mcp.telemetry import instrument
from flask_mcp.transport.cgi import serve_cgi


class Telemetry:
    """What one test's providers recorded."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])

    def instrument(self, app: Flask) -> Flask:
        instrument(app, tracer_provider=self.tracer_provider, meter_provider=self.meter_provider)
        return app

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def mcp_spans(self) -> list[ReadableSpan]:
        """The spans flask_mcp made, in the order they ended."""
        return [span for span in self.spans() if "mcp.method.name" in (span.attributes or {})]

    def only(self, name: str) -> ReadableSpan:
        found = [span for span in self.mcp_spans() if span.name == name]
        assert len(found) == 1, [span.name for span in self.mcp_spans()]
        return found[0]

    def points(self, metric: str) -> list[t.Any]:
        data = self.reader.get_metrics_data()
        found = []
        for resource in data.resource_metrics if data is not None else ():
            for scope in resource.scope_metrics:
                for item in scope.metrics:
                    if item.name == metric:
                        found.extend(item.data.data_points)
        return found

    def shutdown(self) -> None:
        self.tracer_provider.shutdown()
        self.meter_provider.shutdown()


@pytest.fixture
def telemetry() -> t.Iterator[Telemetry]:
    recorded = Telemetry()
    yield recorded
    recorded.shutdown()


@pytest.fixture
def calc() -> MCP:
    """An extension with a tool that works, one that fails, a resource and a prompt."""
    extension = MCP(name="calc", version="1.0.0")

    @extension.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @extension.tool
    def refuse(reason: str) -> str:
        """Fails with a message for the caller."""
        from flask_mcp import ToolError

        raise ToolError(f"refused: {reason}")

    @extension.resource("data://numbers", mime_type="application/json")
    def numbers() -> list[int]:
        """Some numbers."""
        return [1, 2, 3]

    @extension.prompt
    def greet(name: str) -> str:
        """Greets somebody."""
        return f"Hello {name}"

    return extension


def cgi(app: Flask, monkeypatch: pytest.MonkeyPatch, path: str, body: bytes = b"{}", **extra: str) -> int:
    """Run one CGI request in this process; its status."""
    environ = {
        "GATEWAY_INTERFACE": "CGI/1.1",
        "REQUEST_METHOD": "POST",
        "SCRIPT_NAME": "/cgi-bin/mcp",
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_NAME": "example.org",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "192.0.2.1",
        "HTTP_HOST": "example.org",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(body)),
        **extra,
    }
    for key, value in environ.items():
        monkeypatch.setenv(key, value)
    out = io.BytesIO()
    serve_cgi(app, io.BytesIO(body), out)
    status_line = out.getvalue().split(b"\r\n", 1)[0]
    return int(status_line.split()[1])
