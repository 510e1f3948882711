"""What a client sends never makes span names or metric attribute values without end.

Every string a hostile client may choose (a tool, prompt or resource it names, a method, the routing
headers, a revision, the HTTP version of its request line) is sent in many variants, each marked, on
every surface; no span name and no attribute of ``mcp.server.operation.duration`` may carry one.
"""

from __future__ import annotations

import io
import json
import typing as t

import pytest
from flask import Flask

from flask_mcp import MCP
from flask_mcp.protocol.envelope import CLIENT_CAPABILITIES, CLIENT_INFO, PROTOCOL_VERSION
from flask_mcp.protocol.versions import MODERN_PROTOCOL_VERSIONS
from flask_mcp.transport.cgi import serve_cgi
from flask_mcp.transport.stdio import StdioServer
from tests.telemetry.conftest import Telemetry

MODERN = MODERN_PROTOCOL_VERSIONS[0]
MARK = "hostile"
VARIANTS = 12
JSON_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture
def app(calc: MCP, make_app: t.Callable[..., Flask], telemetry: Telemetry) -> Flask:
    return telemetry.instrument(make_app(calc))


def marked(n: int) -> str:
    return f"{MARK}-{n}-" + "x" * n


def modern(method: str, params: dict[str, t.Any], version: str = MODERN) -> dict[str, t.Any]:
    envelope = {PROTOCOL_VERSION: version, CLIENT_CAPABILITIES: {}, CLIENT_INFO: {"name": "t", "version": "1"}}
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": envelope}}


def post(app: Flask, body: t.Any, **headers: str) -> None:
    data = body if isinstance(body, bytes) else json.dumps(body)
    environ = {"SERVER_PROTOCOL": headers.pop("protocol")} if "protocol" in headers else None
    app.test_client().post("/mcp", data=data, headers={**JSON_HEADERS, **headers}, environ_overrides=environ)


def hostile_traffic(app: Flask, make_client: t.Any, n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """One variant of every attack, on every surface."""
    name = marked(n)
    handshake = make_client(app)
    handshake.initialize()
    handshake.envelope("tools/call", {"name": name, "arguments": {}})
    handshake.envelope("prompts/get", {"name": name})
    handshake.envelope("resources/read", {"uri": f"data://{name}"})
    handshake.envelope("resources/subscribe", {"uri": f"data://{name}"})
    handshake.envelope(f"{name}/method", {})
    handshake.notify(f"notifications/{name}")
    client = make_client(app, era="modern")
    client.envelope("tools/call", {"name": name, "arguments": {}})
    client.envelope(name, {})
    # The routing headers, alone (a body that is not JSON) and against a body.
    post(app, b"{not json", **{"MCP-Protocol-Version": MODERN, "Mcp-Method": name, "Mcp-Name": name})
    post(app, b"{not json", **{"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": name})
    body = modern("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
    post(app, body, **{"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": name})
    # A revision nobody speaks, in the envelope and in the header; an HTTP version nobody speaks.
    post(app, modern("tools/list", {}, version=f"2099-{name}"), **{"MCP-Protocol-Version": f"2099-{name}"})
    post(app, modern("tools/list", {}, version=f"2099-{name}"))
    post(
        app,
        modern("tools/list", {}),
        **{"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"},
        protocol=f"HTTP/{n}.{MARK}",
    )
    # REST and CGI name the tool in the path.
    app.test_client().post(f"/mcp/rest/tools/{name}", json={})
    app.test_client().get("/mcp/rest/resources", query_string={"uri": f"data://{name}"})
    for key, value in {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": f"/tools/{name}",
        "SERVER_NAME": "example.org",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": "example.org",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": "2",
    }.items():
        monkeypatch.setenv(key, value)
    serve_cgi(app, io.BytesIO(b"{}"), io.BytesIO())
    # Over stdio.
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
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": name, "arguments": {}}},
        {"jsonrpc": "2.0", "id": 3, "method": name},
    ]
    stdin = io.BytesIO(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    StdioServer(app, stdin, io.BytesIO()).run()


def test_nothing_a_client_chooses_names_a_span_or_a_metric(
    app: Flask, make_client: t.Any, telemetry: Telemetry, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(VARIANTS):
        hostile_traffic(app, make_client, n, monkeypatch)
    names = {span.name for span in telemetry.mcp_spans()}
    assert not [name for name in names if MARK in name], names
    points = telemetry.points("mcp.server.operation.duration")
    values = {str(value) for point in points for value in point.attributes.values()}
    assert not [value for value in values if MARK in value], values
    assert not any("mcp.resource.uri" in point.attributes for point in points)
    # Bounded, whatever VARIANTS is: every variant made the same names and attribute sets as the first.
    first = Telemetry()
    try:
        first.instrument(app)  # one more variant, on providers of its own
        hostile_traffic(app, make_client, VARIANTS, monkeypatch)
        assert first.mcp_spans()
        assert {span.name for span in first.mcp_spans()} <= names
        once = {frozenset(point.attributes.items()) for point in first.points("mcp.server.operation.duration")}
        assert once >= {frozenset(point.attributes.items()) for point in points}
    finally:
        first.shutdown()


def test_the_client_s_strings_stay_on_the_spans_only_bounded(
    app: Flask, make_client: t.Any, telemetry: Telemetry
) -> None:
    client = make_client(app)
    client.initialize()
    client.error("resources/read", {"uri": "data://" + "u" * 5000})
    client.error("tools/call", {"name": "t" * 5000, "arguments": {}})
    for span in telemetry.mcp_spans():
        assert all(len(str(value)) <= 256 for value in (span.attributes or {}).values()), span.name
    assert telemetry.only("resources/read").attributes["mcp.resource.uri"].startswith("data://uuu")  # type: ignore[index,union-attr]
    assert telemetry.only("tools/call _OTHER").attributes["gen_ai.tool.name"] == "t" * 256  # type: ignore[index]
