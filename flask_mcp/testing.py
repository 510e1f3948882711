"""Helpers for testing an MCP server in-process.

:class:`MCPTestClient` speaks MCP to a Flask app through Flask's own test
client, so a test needs no network and no server process::

    from flask_mcp.testing import MCPTestClient

    def test_add(app):
        client = MCPTestClient(app)
        client.initialize()
        assert client.call_tool("add", {"a": 1, "b": 2})["structuredContent"] == {"result": 3}

:class:`SchemaValidator` checks every envelope against an official MCP JSON
schema file (it needs the ``jsonschema`` package).
"""

from __future__ import annotations

import copy
import json
import typing as t
from pathlib import Path

if t.TYPE_CHECKING:
    from flask import Flask
    from werkzeug.test import TestResponse

__all__ = ["RESULT_TYPES", "MCPTestClient", "SchemaValidator"]

#: The schema definition the result of each request method must satisfy.
RESULT_TYPES = {
    "initialize": "InitializeResult",
    "ping": "EmptyResult",
    "logging/setLevel": "EmptyResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
    "completion/complete": "CompleteResult",
}

ACCEPT = "application/json, text/event-stream"


class SchemaValidator:
    """Validates envelopes and results against an MCP ``schema.json`` (2025-11-25 layout, ``$defs``).

    :param path: the schema file; when it does not exist, :attr:`available`
        is false and every check passes without validating.
    """

    def __init__(self, path: str | Path) -> None:
        path = Path(path)
        self.path = path
        self.available = path.exists()
        self._root = json.loads(path.read_text()) if self.available else {}
        self._validators: dict[str, t.Any] = {}

    def validator(self, name: str) -> t.Any:
        """A ``jsonschema`` validator for the definition *name*."""
        import jsonschema

        if name not in self._validators:
            # A definition is validated by a copy of the whole document that
            # refers to it, so its own $refs resolve.
            document = copy.deepcopy(self._root)
            document["$ref"] = f"#/$defs/{name}"
            self._validators[name] = jsonschema.Draft202012Validator(document)
        return self._validators[name]

    def check(self, name: str, instance: t.Any) -> None:
        """Raise ``jsonschema.ValidationError`` unless *instance* is a valid *name*."""
        if self.available:
            self.validator(name).validate(instance)

    def check_envelope(self, method: str | None, envelope: dict[str, t.Any]) -> None:
        """Check JSON-RPC shape rules, then validate against the schema.

        An error response may carry ``"id": null`` (JSON-RPC 2.0 requires it
        when the request id could not be read); the MCP schema leaves the id
        out in that case, so it is dropped before validating.
        """
        assert envelope["jsonrpc"] == "2.0"
        assert "id" in envelope
        if "error" in envelope:
            assert "result" not in envelope
            assert isinstance(envelope["error"]["code"], int)
            assert isinstance(envelope["error"]["message"], str)
            if envelope["id"] is None:
                envelope = {k: v for k, v in envelope.items() if k != "id"}
            self.check("JSONRPCErrorResponse", envelope)
        else:
            assert "result" in envelope
            self.check("JSONRPCResultResponse", envelope)
            if method in RESULT_TYPES:
                self.check(RESULT_TYPES[method], envelope["result"])
            if method == "tools/call":
                assert envelope["result"].get("isError", True) is True, "a success result never carries isError"


class MCPTestClient:
    """An MCP client over Flask's test client.

    :param app: the Flask app serving the endpoint.
    :param path: the endpoint path (``MCP_URL_PREFIX``).
    :param validator: optional :class:`SchemaValidator` applied to every response.
    """

    def __init__(self, app: Flask, path: str = "/mcp", validator: SchemaValidator | None = None) -> None:
        self.http = app.test_client()
        self.path = path
        self.validator = validator
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self._next_id = 0

    def headers(self, **extra: str) -> dict[str, str]:
        """Request headers: Accept, and the session and version once initialized."""
        headers = {"Accept": ACCEPT}
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version:
            headers["MCP-Protocol-Version"] = self.protocol_version
        headers.update(extra)
        return headers

    def post(self, payload: t.Any, **headers: str) -> TestResponse:
        """POST *payload* as JSON with :meth:`headers`; returns the raw response."""
        return self.http.post(self.path, json=payload, headers=self.headers(**headers))

    def _check(self, method: str | None, body: dict[str, t.Any]) -> None:
        if self.validator is not None:
            self.validator.check_envelope(method, body)

    def initialize(self, version: str = "2025-11-25", capabilities: dict[str, t.Any] | None = None) -> dict[str, t.Any]:
        """Run the handshake (``initialize`` + ``notifications/initialized``); return the result."""
        response = self.post(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": version,
                    "capabilities": capabilities or {},
                    "clientInfo": {"name": "flask_mcp.testing", "version": "1"},
                },
            }
        )
        assert response.status_code == 200, response.get_data(as_text=True)
        body = t.cast(dict[str, t.Any], response.get_json())
        self._check("initialize", body)
        self.session_id = response.headers.get("Mcp-Session-Id")
        self.protocol_version = body["result"]["protocolVersion"]
        self.notify("notifications/initialized")
        return t.cast(dict[str, t.Any], body["result"])

    def notify(self, method: str, params: dict[str, t.Any] | None = None) -> None:
        """Send a notification; it must be accepted with 202 and no body."""
        message: dict[str, t.Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        response = self.post(message)
        assert response.status_code == 202, response.get_data(as_text=True)
        assert response.get_data() == b""

    def envelope(self, method: str, params: dict[str, t.Any] | None = None) -> dict[str, t.Any]:
        """Send a request and return the whole response envelope."""
        self._next_id += 1
        message: dict[str, t.Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            message["params"] = params
        response = self.post(message)
        assert response.status_code == 200, response.get_data(as_text=True)
        assert response.mimetype == "application/json"
        body = t.cast(dict[str, t.Any], response.get_json())
        assert body["id"] == self._next_id
        self._check(method, body)
        return body

    def request(self, method: str, params: dict[str, t.Any] | None = None) -> dict[str, t.Any]:
        """Send a request that must succeed; return its ``result``."""
        body = self.envelope(method, params)
        assert "result" in body, body
        return t.cast(dict[str, t.Any], body["result"])

    def error(self, method: str, params: dict[str, t.Any] | None = None) -> dict[str, t.Any]:
        """Send a request that must fail; return its ``error`` object."""
        body = self.envelope(method, params)
        assert "error" in body, body
        return t.cast(dict[str, t.Any], body["error"])

    def call_tool(self, name: str, arguments: dict[str, t.Any] | None = None) -> dict[str, t.Any]:
        """``tools/call``; returns the ``CallToolResult``."""
        return self.request("tools/call", {"name": name, "arguments": arguments or {}})

    def list_tools(self) -> list[dict[str, t.Any]]:
        """Every tool descriptor, following ``nextCursor`` across pages."""
        return self._list_all("tools/list", "tools")

    def list_resources(self) -> list[dict[str, t.Any]]:
        """Every static resource descriptor, following ``nextCursor`` across pages."""
        return self._list_all("resources/list", "resources")

    def list_resource_templates(self) -> list[dict[str, t.Any]]:
        """Every resource template descriptor, following ``nextCursor`` across pages."""
        return self._list_all("resources/templates/list", "resourceTemplates")

    def list_prompts(self) -> list[dict[str, t.Any]]:
        """Every prompt descriptor, following ``nextCursor`` across pages."""
        return self._list_all("prompts/list", "prompts")

    def complete(
        self,
        ref: dict[str, t.Any],
        argument: str,
        value: str,
        context: dict[str, str] | None = None,
    ) -> dict[str, t.Any]:
        """``completion/complete``; returns the ``completion`` object (``values``, ``total``, ``hasMore``).

        :param ref: what is completed: ``{"type": "ref/prompt", "name": ...}``
            or ``{"type": "ref/resource", "uri": <template>}``.
        :param argument: the argument (or template variable) being typed.
        :param value: what has been typed so far.
        :param context: the values of arguments already chosen.
        """
        params: dict[str, t.Any] = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context is not None:
            params["context"] = {"arguments": context}
        return t.cast(dict[str, t.Any], self.request("completion/complete", params)["completion"])

    def read_resource(self, uri: str) -> list[dict[str, t.Any]]:
        """``resources/read``; returns the ``contents`` list."""
        return t.cast(list[dict[str, t.Any]], self.request("resources/read", {"uri": uri})["contents"])

    def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> dict[str, t.Any]:
        """``prompts/get``; returns the ``GetPromptResult``."""
        return self.request("prompts/get", {"name": name, "arguments": arguments or {}})

    def _list_all(self, method: str, key: str) -> list[dict[str, t.Any]]:
        items: list[dict[str, t.Any]] = []
        params: dict[str, t.Any] = {}
        while True:
            result = self.request(method, params)
            items.extend(result[key])
            if "nextCursor" not in result:
                return items
            params = {"cursor": result["nextCursor"]}
