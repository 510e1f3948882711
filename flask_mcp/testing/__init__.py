"""Testing an app that serves MCP, in-process: the test client, schema checks and pytest fixtures.

:class:`MCPTestClient` speaks MCP to a Flask app through Flask's own test
client, so a test needs no network and no server process::

    from flask_mcp.testing import MCPTestClient

    def test_add(app):
        client = MCPTestClient(app)  # the 2026-07-28 revision: every request stands alone
        assert client.call_tool("add", {"a": 1, "b": 2})["structuredContent"] == {"result": 3}

    def test_add_in_a_session(app):
        client = MCPTestClient(app)
        client.initialize()  # the handshake era, in a session, from here on
        assert client.call_tool("add", {"a": 1, "b": 2})["structuredContent"] == {"result": 3}

In the modern era a tool that asks the client something answers
``input_required``; give ``answers=`` (canned answers by key, or a function
of the key and the request) and the client answers and retries as a real
one would, round after round. In the handshake era the same answers go back
as the client's responses to the requests on the event stream
(:mod:`flask_mcp.testing.streams`).

:class:`SchemaValidator` checks every envelope against an official MCP JSON
schema file (it needs the ``jsonschema`` package).

The package holds :mod:`~flask_mcp.testing.client` (the client),
:mod:`~flask_mcp.testing.calls` (its MCP methods), :mod:`~flask_mcp.testing.streams`
(reading event streams), :mod:`~flask_mcp.testing.schema_checks` (the official
schemas) and :mod:`~flask_mcp.testing.pytest_plugin` (the fixtures).
"""

from __future__ import annotations

from .calls import TASK_PAUSES
from .client import MCPTestClient
from .schema_checks import RESULT_TYPES, SchemaValidator
from .streams import Answers

__all__ = ["RESULT_TYPES", "TASK_PAUSES", "Answers", "MCPTestClient", "SchemaValidator"]
