"""Checking what a server sends against the official MCP JSON schema of its revision.

:class:`SchemaValidator` validates envelopes and results (it needs the
``jsonschema`` package); :class:`~flask_mcp.testing.MCPTestClient` applies
one to every answer. The official schemas of the revisions it checks ship
with the package (``flask_mcp/official_schema/``, unchanged from the
specification repository, under the MCP project's license beside them).
"""

from __future__ import annotations

import copy
import functools
import json
import typing as t
from pathlib import Path

__all__ = ["OFFICIAL_REVISIONS", "RESULT_TYPES", "SchemaValidator", "official_schema"]

#: The folder of the official schema files shipped with the package.
OFFICIAL_SCHEMA_DIR = Path(__file__).parents[1] / "official_schema"
#: The revisions whose official schema ships with the package: the newest of each era.
OFFICIAL_REVISIONS = ("2025-11-25", "2026-07-28")

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
    "server/discover": "DiscoverResult",
    # 2025-11-25's experimental tasks (the 2026-07-28 schema has none: tasks are an extension there).
    "tasks/get": "GetTaskResult",
    "tasks/list": "ListTasksResult",
    "tasks/cancel": "CancelTaskResult",
}


def official_schema(revision: str) -> Path:
    """The shipped official ``schema.json`` of *revision* (one of :data:`OFFICIAL_REVISIONS`).

    :raises ValueError: for a revision whose schema is not shipped.
    """
    if revision not in OFFICIAL_REVISIONS:
        raise ValueError(f"no official schema ships for {revision!r}; shipped: {', '.join(OFFICIAL_REVISIONS)}")
    return OFFICIAL_SCHEMA_DIR / revision / "schema.json"


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

    @classmethod
    def official(cls, revision: str) -> SchemaValidator:
        """The validator of *revision*'s shipped official schema, one per process and revision.

        Handshake-era revisions older than 2025-11-25 are checked against
        2025-11-25's schema, the one their answers are a subset of.
        """
        return _official(revision if revision in OFFICIAL_REVISIONS else OFFICIAL_REVISIONS[0])

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

    def defines(self, name: str) -> bool:
        """Whether the schema has the definition *name* (tasks' are only in 2025-11-25's)."""
        return name in self._root.get("$defs", {})

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
            result = envelope["result"]
            name = _result_type(method, result)
            if name is not None and (name == "InputRequiredResult" or self.defines(name)):
                self.check(name, result)
            if method == "tools/call":
                assert envelope["result"].get("isError", True) is True, "a success result never carries isError"


def _result_type(method: str | None, result: dict[str, t.Any]) -> str | None:
    """The definition a result of *method* must satisfy, by what it is."""
    kind = result.get("resultType")
    if kind == "input_required":
        return "InputRequiredResult"
    if kind == "task":
        return "Result"  # the tasks extension's CreateTaskResult: not in the core schema
    if method == "tools/call" and "task" in result and "content" not in result:
        return "CreateTaskResult"
    return RESULT_TYPES.get(method or "")


@functools.cache
def _official(revision: str) -> SchemaValidator:
    # Validators compile lazily and are kept: one instance serves every test client.
    return SchemaValidator(official_schema(revision))
