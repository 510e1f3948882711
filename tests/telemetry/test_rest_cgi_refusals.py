"""What the REST routes and the CGI view refuse before the core sees it: a span and a measurement each, as on
the MCP endpoint, with the network attributes of the spans those surfaces make for the calls they serve."""

from __future__ import annotations

import json
import typing as t

import pytest
from flask import Flask
from opentelemetry.trace import SpanKind, StatusCode

from flask_mcp import MCP
from tests.telemetry.conftest import Telemetry, cgi

TOKEN = "s3cret-token-of-the-caller"


@pytest.fixture
def app(calc: MCP, make_app: t.Callable[..., Flask], telemetry: Telemetry) -> Flask:
    return telemetry.instrument(make_app(calc))


@pytest.fixture
def locked(calc: MCP, make_app: t.Callable[..., Flask], telemetry: Telemetry) -> Flask:
    return telemetry.instrument(make_app(calc, MCP_AUTH_TOKENS={TOKEN: "ops"}))


def refused(telemetry: Telemetry) -> t.Any:
    """The one MCP span of the request, which must be a refusal's."""
    (span,) = telemetry.mcp_spans()
    assert span.kind == SpanKind.SERVER
    assert span.status.status_code == StatusCode.ERROR
    return span


def rest_call(app: Flask, name: str, body: bytes = b"{}", **headers: str) -> t.Any:
    headers.setdefault("Content-Type", "application/json")
    return app.test_client().post(f"/mcp/rest/tools/{name}", data=body, headers=headers)


@pytest.mark.filterwarnings("ignore::flask_mcp.UnprotectedToolWarning")  # the calculator's tools are open
def test_a_rest_call_without_credentials_is_a_span_of_its_tool(locked: Flask, telemetry: Telemetry) -> None:
    assert rest_call(locked, "add", Authorization="Bearer wrong").status_code == 401
    span = refused(telemetry)
    assert span.name == "tools/call add"
    attributes = dict(span.attributes or {})
    assert (attributes["error.type"], attributes["gen_ai.tool.name"]) == ("401", "add")
    # Where it came from, as the span of a REST call the core handles says it.
    assert (attributes["network.transport"], attributes["network.protocol.name"]) == ("tcp", "http")
    assert "Bearer" not in repr(attributes) and "wrong" not in repr(attributes)
    (point,) = telemetry.points("mcp.server.operation.duration")
    assert (point.attributes["error.type"], point.attributes["gen_ai.tool.name"]) == ("401", "add")


@pytest.mark.parametrize(
    ("body", "headers", "status"),
    [
        (b"{not json", {}, 400),
        (b"[1, 2]", {}, 400),
        (b"{}", {"Content-Type": "text/plain"}, 415),
        (b"{}", {"Origin": "http://evil.example"}, 403),
    ],
)
def test_a_rest_call_refused_for_its_request_is_a_span(
    app: Flask, telemetry: Telemetry, body: bytes, headers: dict[str, str], status: int
) -> None:
    assert rest_call(app, "add", body, **headers).status_code == status
    span = refused(telemetry)
    assert (span.name, span.attributes["error.type"]) == ("tools/call add", str(status))
    assert span.status.description  # the answer's own words


def test_a_rest_call_of_an_unknown_tool_is_a_span_named_other(app: Flask, telemetry: Telemetry) -> None:
    assert rest_call(app, "no-such-tool-" + "x" * 1000).status_code == 404
    span = refused(telemetry)
    assert span.name == "tools/call _OTHER"
    assert len(span.attributes["gen_ai.tool.name"]) == 256
    (point,) = telemetry.points("mcp.server.operation.duration")
    assert point.attributes["gen_ai.tool.name"] == "_OTHER"


def test_a_rest_method_not_allowed_is_a_span(app: Flask, telemetry: Telemetry) -> None:
    assert app.test_client().get("/mcp/rest/tools/add").status_code == 405
    assert refused(telemetry).attributes["error.type"] == "405"


def test_a_rest_read_without_a_uri_is_a_resources_read_span(app: Flask, telemetry: Telemetry) -> None:
    assert app.test_client().get("/mcp/rest/resources").status_code == 400
    assert refused(telemetry).name == "resources/read"


def test_a_rest_call_the_core_refuses_is_its_span_only(app: Flask, telemetry: Telemetry) -> None:
    assert rest_call(app, "add", json.dumps({"a": "x"}).encode()).status_code == 400
    (span,) = telemetry.mcp_spans()
    assert span.attributes["error.type"] == "invalid_arguments"
    assert len(telemetry.points("mcp.server.operation.duration")) == 1


def test_rest_answers_that_are_not_errors_make_no_refusal(app: Flask, telemetry: Telemetry) -> None:
    assert app.test_client().options("/mcp/rest/tools/add").status_code == 204
    assert rest_call(app, "add", json.dumps({"a": 1, "b": 2}).encode()).status_code == 200
    assert [span.name for span in telemetry.mcp_spans()] == ["tools/call add"]


@pytest.mark.filterwarnings("ignore::flask_mcp.UnprotectedToolWarning")
def test_a_cgi_call_without_credentials_is_a_span(
    locked: Flask, telemetry: Telemetry, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cgi(locked, monkeypatch, "/tools/add") == 401
    span = refused(telemetry)
    assert (span.name, span.attributes["error.type"]) == ("tools/call add", "401")
    # As the span of a call CGI serves: the CGI request's client.
    assert (span.attributes["network.transport"], span.attributes["client.address"]) == ("tcp", "192.0.2.1")


@pytest.mark.parametrize(
    ("path", "body", "status", "name"),
    [
        ("/tools/nope", b"{}", 404, "tools/call _OTHER"),
        ("/tools/add", b"{not json", 400, "tools/call add"),
        ("/tools/add", b'"text"', 400, "tools/call add"),
    ],
)
def test_a_cgi_call_refused_before_the_core_is_a_span(
    app: Flask, telemetry: Telemetry, monkeypatch: pytest.MonkeyPatch, path: str, body: bytes, status: int, name: str
) -> None:
    assert cgi(app, monkeypatch, path, body) == status
    span = refused(telemetry)
    assert (span.name, span.attributes["error.type"]) == (name, str(status))
    assert len(telemetry.points("mcp.server.operation.duration")) == 1


def test_a_cgi_call_the_core_answers_is_its_span_only(
    app: Flask, telemetry: Telemetry, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cgi(app, monkeypatch, "/tools/add", json.dumps({"a": "x"}).encode()) == 400
    (span,) = telemetry.mcp_spans()
    assert span.attributes["error.type"] == "invalid_arguments"


def test_a_cgi_request_that_is_no_mcp_message_makes_no_span(
    app: Flask, telemetry: Telemetry, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cgi(app, monkeypatch, "/elsewhere") == 404
    assert telemetry.mcp_spans() == []
