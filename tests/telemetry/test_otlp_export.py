"""End to end: spans and metrics through the OTLP/HTTP exporters to a receiver process the test runs."""

from __future__ import annotations

import typing as t

import pytest
from flask import Flask
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from flask_mcp import MCP
from flask_mcp.protocol.versions import MODERN_PROTOCOL_VERSIONS
from flask_mcp.telemetry import instrument
from tests.telemetry.collector import Collector, collector


@pytest.fixture
def receiver() -> t.Iterator[Collector]:
    with collector() as started:
        yield started


def test_tool_calls_of_both_eras_reach_a_collector_over_otlp_http(
    calc: MCP, make_app: t.Callable[..., Flask], make_client: t.Any, receiver: Collector
) -> None:
    resource = Resource.create({"service.name": "calc-e2e"})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{receiver.url}/v1/traces")))
    # Exported only when flushed: the interval never comes within the test.
    reader = PeriodicExportingMetricReader(
        OTLPMetricExporter(endpoint=f"{receiver.url}/v1/metrics"), export_interval_millis=3_600_000
    )
    meter_provider = MeterProvider(resource=resource, metric_readers=[reader])
    try:
        app = make_app(calc)
        instrument(app, tracer_provider=tracer_provider, meter_provider=meter_provider)
        handshake = make_client(app)
        handshake.initialize()
        assert handshake.call_tool("add", {"a": 2, "b": 3})["structuredContent"] == {"result": 5}
        modern = make_client(app, era="modern")
        assert modern.call_tool("add", {"a": 4, "b": 5})["structuredContent"] == {"result": 9}
        assert handshake.call_tool("refuse", {"reason": "no"})["isError"] is True
    finally:
        # Shutting down exports what is left: the batch of spans, and the one collection of the
        # metrics (cumulative: a flush before it would send every point twice).
        tracer_provider.shutdown()
        meter_provider.shutdown()

    spans = receiver.spans()
    calls = [span for span in spans if span["name"] == "tools/call add"]
    assert len(calls) == 2, [span["name"] for span in spans]
    by_version = {span["attributes"]["mcp.protocol.version"]: span for span in calls}
    assert set(by_version) == {handshake.protocol_version, MODERN_PROTOCOL_VERSIONS[0]}
    for span in calls:
        attributes = span["attributes"]
        assert span["kind"] == "SPAN_KIND_SERVER"
        assert span["resource"]["service.name"] == "calc-e2e"
        assert attributes["mcp.method.name"] == "tools/call"
        assert attributes["gen_ai.operation.name"] == "execute_tool"
        assert attributes["gen_ai.tool.name"] == "add"
        assert attributes["network.transport"] == "tcp"
        assert attributes["jsonrpc.request.id"]
        assert "error.type" not in attributes
    assert by_version[handshake.protocol_version]["attributes"]["mcp.session.id"] == handshake.session_id
    assert "mcp.session.id" not in by_version[MODERN_PROTOCOL_VERSIONS[0]]["attributes"]
    # A tool's isError result reaches the collector as the span's error.
    (refused,) = [span for span in spans if span["name"] == "tools/call refuse"]
    assert refused["attributes"]["error.type"] == "tool_error"
    assert refused["status"]["code"] == "STATUS_CODE_ERROR"

    points = receiver.metric_points("mcp.server.operation.duration")
    assert points, receiver.received()
    assert {point["unit"] for point in points} == {"s"}
    add_points = [point for point in points if point["attributes"].get("gen_ai.tool.name") == "add"]
    versions = {point["attributes"]["mcp.protocol.version"] for point in add_points}
    assert versions == {handshake.protocol_version, MODERN_PROTOCOL_VERSIONS[0]}
    assert sum(point["count"] for point in add_points) == 2
    for point in add_points:
        assert point["attributes"]["mcp.method.name"] == "tools/call"
        assert point["attributes"]["gen_ai.operation.name"] == "execute_tool"
        assert "mcp.session.id" not in point["attributes"]
