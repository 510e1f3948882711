"""Messages the endpoint refuses before the protocol core sees them: each one an MCP span and a measurement."""

from __future__ import annotations

import json
import typing as t

import pytest
from flask import Flask
from opentelemetry.trace import SpanKind, StatusCode

from flask_mcp import MCP
from flask_mcp.protocol.envelope import CLIENT_CAPABILITIES, CLIENT_INFO, PROTOCOL_VERSION
from flask_mcp.protocol.versions import MODERN_PROTOCOL_VERSIONS
from flask_mcp.telemetry.tracer import REFUSED_SPAN_NAME
from tests.telemetry.conftest import Telemetry

MODERN = MODERN_PROTOCOL_VERSIONS[0]
TOKEN = "s3cret-token-of-the-caller"
TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


@pytest.fixture
def app(calc: MCP, make_app: t.Callable[..., Flask], telemetry: Telemetry) -> Flask:
    return telemetry.instrument(make_app(calc, MCP_SESSION_RATE_LIMIT="2/hour"))


def post(app: Flask, body: t.Any, headers: dict[str, str] | None = None, *, raw: bool = False) -> t.Any:
    data = body if raw else json.dumps(body)
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json", **(headers or {})}
    return app.test_client().post("/mcp", data=data, headers=headers)


def modern(method: str, params: dict[str, t.Any] | None = None, **meta: t.Any) -> dict[str, t.Any]:
    envelope = {PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: {}, CLIENT_INFO: {"name": "t", "version": "1"}, **meta}
    return {"jsonrpc": "2.0", "id": 7, "method": method, "params": {**(params or {}), "_meta": envelope}}


def refused(telemetry: Telemetry) -> t.Any:
    """The one MCP span of the request, which must be a refusal's."""
    (span,) = telemetry.mcp_spans()
    assert span.kind == SpanKind.SERVER
    assert span.status.status_code == StatusCode.ERROR
    return span


def measured(telemetry: Telemetry) -> t.Any:
    (point,) = telemetry.points("mcp.server.operation.duration")
    return point


def test_an_unauthenticated_request_is_a_span_named_by_its_method_header_and_never_tells_the_token(
    make_app: t.Callable[..., Flask], telemetry: Telemetry
) -> None:
    app = telemetry.instrument(make_app(MCP(name="locked"), MCP_AUTH_TOKENS={"another-token": "ops"}))
    headers = {"Authorization": f"Bearer {TOKEN}", "Mcp-Method": "tools/call", "MCP-Protocol-Version": MODERN}
    assert post(app, modern("tools/call", {"name": "add", "arguments": {"a": 1}}), headers).status_code == 401
    span = refused(telemetry)
    assert span.name == "tools/call _OTHER"  # no tool of that name: a client's string is no span name
    assert span.attributes["error.type"] == "401"
    assert span.attributes["rpc.response.status_code"] == "-32600"
    assert span.attributes["mcp.protocol.version"] == MODERN
    assert TOKEN not in repr(dict(span.attributes)) and "arguments" not in repr(dict(span.attributes))
    point = measured(telemetry)
    assert (point.attributes["error.type"], point.attributes["mcp.method.name"]) == ("401", "tools/call")


def test_an_unauthenticated_handshake_request_without_a_method_header_has_the_fixed_name(
    make_app: t.Callable[..., Flask], telemetry: Telemetry
) -> None:
    app = telemetry.instrument(make_app(MCP(name="locked"), MCP_AUTH_TOKENS={"another-token": "ops"}))
    assert post(app, {"jsonrpc": "2.0", "id": 1, "method": "ping"}).status_code == 401
    span = refused(telemetry)
    # The body of a caller without credentials is never read, for a span or anything else.
    assert (span.name, span.attributes["mcp.method.name"]) == (REFUSED_SPAN_NAME, "_OTHER")


@pytest.mark.parametrize("era", ["handshake", "modern"])
def test_a_refused_host_or_origin_is_a_span(app: Flask, telemetry: Telemetry, era: str) -> None:
    body = modern("tools/list") if era == "modern" else {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"} if era == "modern" else {}
    assert post(app, body, {"Origin": "http://evil.example", **headers}).status_code == 403
    span = refused(telemetry)
    assert span.name == ("tools/list" if era == "modern" else REFUSED_SPAN_NAME)
    assert span.attributes["error.type"] == "403"


def test_an_unknown_session_is_a_span_of_the_method_it_carried(app: Flask, telemetry: Telemetry) -> None:
    answer = post(app, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, {"Mcp-Session-Id": "no-such-session"})
    assert answer.status_code == 404
    span = refused(telemetry)
    assert span.name == "tools/list"
    assert span.attributes["error.type"] == "404"
    assert span.attributes["rpc.response.status_code"] == "-32001"
    assert span.attributes["jsonrpc.request.id"] == "3"
    assert "mcp.session.id" not in span.attributes  # an id the server does not know is the client's string


@pytest.mark.parametrize("era", ["handshake", "modern"])
def test_a_body_that_is_not_json_is_a_span(app: Flask, telemetry: Telemetry, era: str) -> None:
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call"} if era == "modern" else {}
    assert post(app, b"{not json", headers, raw=True).status_code == 400
    span = refused(telemetry)
    assert span.name == ("tools/call _OTHER" if era == "modern" else REFUSED_SPAN_NAME)
    assert (span.attributes["error.type"], span.attributes["rpc.response.status_code"]) == ("400", "-32700")


@pytest.mark.parametrize(
    "body", [{"jsonrpc": "2.0", "id": 1}, [1, 2], {"jsonrpc": "1.0", "id": 1, "method": "tools/list"}]
)
def test_a_body_that_is_not_json_rpc_is_a_span(app: Flask, telemetry: Telemetry, body: t.Any) -> None:
    assert post(app, body).status_code == 400
    span = refused(telemetry)
    assert span.attributes["error.type"] == "400"
    assert span.attributes["rpc.response.status_code"] == "-32600"


def test_an_envelope_in_error_is_a_span_that_continues_the_client_s_trace(app: Flask, telemetry: Telemetry) -> None:
    # The routing header says another method than the body: -32020, before the core.
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "prompts/list"}
    assert post(app, modern("tools/list", traceparent=TRACEPARENT), headers).status_code == 400
    span = refused(telemetry)
    assert span.name == "tools/list"  # the body's method: the header is the one in error
    assert (span.attributes["error.type"], span.attributes["rpc.response.status_code"]) == ("400", "-32020")
    assert span.attributes["mcp.protocol.version"] == MODERN
    assert format(span.context.trace_id, "032x") == TRACEPARENT.split("-")[1]


def test_an_unsupported_revision_is_a_span_without_the_client_s_string(app: Flask, telemetry: Telemetry) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    assert post(app, body, {"MCP-Protocol-Version": "1999-01-01" + "x" * 300}).status_code == 400
    span = refused(telemetry)
    assert "mcp.protocol.version" not in span.attributes
    assert "mcp.protocol.version" not in measured(telemetry).attributes


def test_a_rate_limited_session_is_a_span(app: Flask, make_client: t.Any, telemetry: Telemetry) -> None:
    for _ in range(2):
        make_client(app).initialize()
    telemetry.exporter.clear()
    answer = post(app, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
    assert answer.status_code == 429
    span = refused(telemetry)
    assert (span.name, span.attributes["error.type"]) == ("initialize", "429")


def test_a_stream_refused_has_the_fixed_name(app: Flask, telemetry: Telemetry) -> None:
    answer = app.test_client().get("/mcp", headers={"Accept": "text/event-stream", "Mcp-Session-Id": "gone"})
    assert answer.status_code == 404
    assert refused(telemetry).name == REFUSED_SPAN_NAME


def test_an_error_the_core_answers_is_its_span_only(app: Flask, make_client: t.Any, telemetry: Telemetry) -> None:
    client = make_client(app, era="modern")
    client.error("tools/call", {"name": "nope", "arguments": {}})
    assert client.last_response.status_code >= 400
    (span,) = telemetry.mcp_spans()
    assert span.attributes["error.type"] != str(client.last_response.status_code)
    assert len(telemetry.points("mcp.server.operation.duration")) == 1


def test_a_successful_request_makes_no_refusal(app: Flask, make_client: t.Any, telemetry: Telemetry) -> None:
    make_client(app, era="modern").request("tools/list")
    assert [span.name for span in telemetry.mcp_spans()] == ["tools/list"]


def test_without_an_sdk_a_refusal_records_nothing(calc: MCP, make_app: t.Callable[..., Flask]) -> None:
    app = make_app(calc)
    tracer = app.extensions["mcp"].server.tracer
    assert tracer is not None and not tracer.recording
    assert post(app, b"{not json", raw=True).status_code == 400
