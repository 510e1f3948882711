"""One SERVER span per MCP message, on every surface, by the OpenTelemetry MCP conventions."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap
import typing as t

import pytest
from flask import Flask
from opentelemetry.trace import SpanKind, StatusCode

from flask_mcp import MCP
from flask_mcp.cli.client import request as cli_request
from flask_mcp.protocol.versions import MODERN_PROTOCOL_VERSIONS
from flask_mcp.telemetry import TelemetrySettings, tracer_for
from flask_mcp.telemetry.content import TRUNCATED
from flask_mcp.telemetry.tracer import OpenTelemetryTracer
from flask_mcp.transport.stdio import StdioServer
from tests.telemetry.conftest import Telemetry, cgi


@pytest.fixture
def app(calc: MCP, make_app: t.Callable[..., Flask], telemetry: Telemetry) -> Flask:
    return telemetry.instrument(make_app(calc))


def test_a_handshake_tool_call_is_one_server_span(app: Flask, make_client: t.Any, telemetry: Telemetry) -> None:
    client = make_client(app)
    client.initialize()
    assert client.call_tool("add", {"a": 2, "b": 3})["structuredContent"] == {"result": 5}
    span = telemetry.only("tools/call add")
    assert span.kind == SpanKind.SERVER
    attributes = dict(span.attributes or {})
    assert attributes["mcp.method.name"] == "tools/call"
    assert attributes["gen_ai.operation.name"] == "execute_tool"
    assert attributes["gen_ai.tool.name"] == "add"
    assert attributes["mcp.protocol.version"] == client.protocol_version
    assert attributes["mcp.session.id"] == client.session_id
    assert attributes["jsonrpc.request.id"].isdigit()
    assert attributes["network.transport"] == "tcp"
    assert attributes["network.protocol.name"] == "http"
    assert "error.type" not in attributes
    assert span.status.status_code == StatusCode.UNSET
    # Never the caller's data by default.
    assert not any(key.startswith("gen_ai.tool.call.") for key in attributes)


def test_every_message_of_a_session_has_its_span(app: Flask, make_client: t.Any, telemetry: Telemetry) -> None:
    client = make_client(app)
    client.initialize()
    client.list_tools()
    client.read_resource("data://numbers")
    client.get_prompt("greet", {"name": "Ada"})
    names = [span.name for span in telemetry.mcp_spans()]
    assert names == ["initialize", "notifications/initialized", "tools/list", "resources/read", "prompts/get greet"]
    initialize = telemetry.only("initialize")
    assert initialize.attributes["mcp.protocol.version"] == client.protocol_version  # type: ignore[index]
    assert "jsonrpc.request.id" not in telemetry.only("notifications/initialized").attributes  # type: ignore[operator]
    assert telemetry.only("resources/read").attributes["mcp.resource.uri"] == "data://numbers"  # type: ignore[index]
    assert telemetry.only("prompts/get greet").attributes["gen_ai.prompt.name"] == "greet"  # type: ignore[index]


def test_a_modern_request_names_its_revision_and_no_session(
    app: Flask, make_client: t.Any, telemetry: Telemetry
) -> None:
    client = make_client(app, era="modern")
    client.call_tool("add", {"a": 1, "b": 1})
    attributes = dict(telemetry.only("tools/call add").attributes or {})
    assert attributes["mcp.protocol.version"] == MODERN_PROTOCOL_VERSIONS[0]
    assert "mcp.session.id" not in attributes


def test_a_json_rpc_error_is_the_span_error(app: Flask, make_client: t.Any, telemetry: Telemetry) -> None:
    client = make_client(app)
    client.initialize()
    assert client.error("resources/read", {"uri": "data://missing"})["code"] == -32002
    span = telemetry.only("resources/read")
    assert span.attributes["error.type"] == "-32002"  # type: ignore[index]
    assert span.attributes["rpc.response.status_code"] == "-32002"  # type: ignore[index]
    assert span.status.status_code == StatusCode.ERROR
    assert span.status.description == "Resource not found: data://missing"


def test_a_tool_error_result_marks_the_span_tool_error(app: Flask, make_client: t.Any, telemetry: Telemetry) -> None:
    client = make_client(app)
    client.initialize()
    assert client.call_tool("refuse", {"reason": "no"})["isError"] is True
    span = telemetry.only("tools/call refuse")
    assert span.attributes["error.type"] == "tool_error"  # type: ignore[index]
    assert "rpc.response.status_code" not in span.attributes  # type: ignore[operator]
    assert span.status.status_code == StatusCode.ERROR
    assert span.status.description == "Error executing tool: refused: no"


def test_what_a_client_names_freely_stays_out_of_span_names(
    app: Flask, make_client: t.Any, telemetry: Telemetry
) -> None:
    client = make_client(app)
    client.initialize()
    client.error("tools/call", {"name": "no-such-tool-" + "x" * 1000, "arguments": {}})
    client.error("made/up", {})
    names = [span.name for span in telemetry.mcp_spans()][-2:]
    assert names == ["tools/call _OTHER", "_OTHER"]
    tool_span = telemetry.mcp_spans()[-2]
    assert len(tool_span.attributes["gen_ai.tool.name"]) == 256  # type: ignore[arg-type,index]


def test_stdio_messages_are_spans_over_a_pipe(calc: MCP, make_app: t.Any, telemetry: Telemetry) -> None:
    app = telemetry.instrument(make_app(calc))
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}},
    ]
    stdin = io.BytesIO(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    StdioServer(app, stdin, io.BytesIO()).run()
    span = telemetry.only("tools/call add")
    assert span.attributes["network.transport"] == "pipe"  # type: ignore[index]
    assert "network.protocol.name" not in span.attributes  # type: ignore[operator]
    assert span.attributes["mcp.protocol.version"] == "2025-11-25"  # type: ignore[index]


def test_a_rest_call_is_a_tools_call_span(app: Flask, telemetry: Telemetry) -> None:
    response = app.test_client().post("/mcp/rest/tools/add", json={"a": 1, "b": 2})
    assert response.status_code == 200, response.data
    span = telemetry.only("tools/call add")
    assert span.attributes["network.transport"] == "tcp"  # type: ignore[index]
    assert "error.type" not in span.attributes  # type: ignore[operator]
    refused = app.test_client().post("/mcp/rest/tools/add", json={"a": "x"})
    assert refused.status_code == 400
    assert telemetry.mcp_spans()[-1].attributes["error.type"] == "invalid_arguments"  # type: ignore[index]


def test_a_rest_resource_read_is_a_span(app: Flask, telemetry: Telemetry) -> None:
    response = app.test_client().get("/mcp/rest/resources", query_string={"uri": "data://numbers"})
    if response.status_code == 404:
        pytest.skip("no REST route for resources here")
    assert telemetry.only("resources/read").attributes["mcp.resource.uri"] == "data://numbers"  # type: ignore[index]


def test_a_cgi_call_is_a_span(app: Flask, telemetry: Telemetry, monkeypatch: pytest.MonkeyPatch) -> None:
    assert cgi(app, monkeypatch, "/tools/add", json.dumps({"a": 4, "b": 5}).encode()) == 200
    span = telemetry.only("tools/call add")
    assert span.attributes["client.address"] == "192.0.2.1"  # type: ignore[index]


def test_a_cli_request_is_a_span_without_a_network(app: Flask, telemetry: Telemetry) -> None:
    with app.app_context():
        result = cli_request(app, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
    assert result["structuredContent"] == {"result": 3}
    span = telemetry.only("tools/call add")
    assert "network.transport" not in span.attributes  # type: ignore[operator]


@pytest.mark.parametrize("era", ["handshake", "modern"])
def test_arguments_and_results_are_recorded_only_when_asked_bounded_and_redacted(
    calc: MCP, make_app: t.Any, make_client: t.Any, telemetry: Telemetry, era: str
) -> None:
    seen: list[str] = []

    def redact(kind: str, value: t.Any) -> t.Any:
        seen.append(kind)
        return {**value, "b": "[redacted]"} if kind == "arguments" else value

    app = telemetry.instrument(
        make_app(calc, MCP_OTEL_CAPTURE_CONTENT=True, MCP_OTEL_CONTENT_MAX_LENGTH=40, MCP_OTEL_CONTENT_REDACTOR=redact)
    )
    client = make_client(app, era=era)
    if era == "handshake":
        client.initialize()
    client.call_tool("add", {"a": 2, "b": 3})
    attributes = dict(telemetry.only("tools/call add").attributes or {})
    assert json.loads(attributes["gen_ai.tool.call.arguments"]) == {"a": 2, "b": "[redacted]"}
    assert attributes["gen_ai.tool.call.result"].endswith(TRUNCATED)
    assert len(attributes["gen_ai.tool.call.result"]) == 40 + len(TRUNCATED)
    assert seen == ["arguments", "result"]


def test_a_redactor_that_fails_records_nothing(
    calc: MCP, make_app: t.Any, make_client: t.Any, telemetry: Telemetry
) -> None:
    def broken(kind: str, value: t.Any) -> t.Any:
        raise RuntimeError("oops")

    app = telemetry.instrument(make_app(calc, MCP_OTEL_CAPTURE_CONTENT=True, MCP_OTEL_CONTENT_REDACTOR=broken))
    client = make_client(app, era="modern")
    client.call_tool("add", {"a": 2, "b": 3})
    assert not any(key.startswith("gen_ai.tool.call.") for key in telemetry.only("tools/call add").attributes or {})


def test_turned_off_there_is_no_tracer(calc: MCP, make_app: t.Any) -> None:
    app = make_app(calc, MCP_OTEL_ENABLED=False)
    assert app.extensions["mcp"].server.tracer is None


def test_without_an_sdk_nothing_is_made(calc: MCP, make_app: t.Any, make_client: t.Any) -> None:
    """The API's global providers are its stand-ins here: a message gets the quiet trace, no span."""
    app = make_app(calc)
    tracer = app.extensions["mcp"].server.tracer
    assert isinstance(tracer, OpenTelemetryTracer)
    assert tracer.recording is False
    client = make_client(app, era="modern")
    assert client.call_tool("add", {"a": 1, "b": 1})["structuredContent"] == {"result": 2}
    assert tracer.outgoing({"x": 1}) == {"x": 1}


def test_settings_are_checked(calc: MCP, make_app: t.Any) -> None:
    with pytest.raises(ValueError, match="MCP_OTEL_CONTENT_REDACTOR"):
        make_app(calc, MCP_OTEL_CONTENT_REDACTOR="not callable")
    app = make_app(MCP(name="x", version="1"))
    assert tracer_for(app.extensions["mcp"].server, TelemetrySettings(enabled=False)) is None


def test_without_the_api_installed_there_is_no_tracer_and_calls_work() -> None:
    """An app without the otel extra: ``opentelemetry`` cannot be imported at all, and nothing asks for it twice."""
    program = textwrap.dedent(
        """
        import importlib.abc, sys

        class NoOpenTelemetry(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name == "opentelemetry" or name.startswith("opentelemetry."):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None

        sys.meta_path.insert(0, NoOpenTelemetry())
        from flask import Flask
        from flask_mcp import MCP
        from flask_mcp.testing import MCPTestClient

        mcp = MCP(name="plain", version="1")

        @mcp.tool()
        def add(a: int, b: int) -> int:
            return a + b

        app = Flask("plain")
        app.config.update(TESTING=True)
        mcp.init_app(app)
        assert app.extensions["mcp"].server.tracer is None
        print(MCPTestClient(app, "/mcp").call_tool("add", {"a": 1, "b": 2})["structuredContent"])
        mcp.shutdown(app)
        """
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "{'result': 3}"
