"""Property-based check of the REST adapter against its own OpenAPI document.

Schemathesis reads ``<prefix>/openapi.json`` from the quickstart app in
process (WSGI, no server), generates requests for every tool and the
resource route from the declared schemas, and checks that each response is
one the document declares: its status code, its content type and its body.
A 5xx is a failure unless it is the documented ``500 Function error`` of a
tool that raised on purpose (the quickstart's ``get_note`` raises
:class:`~flask_mcp.ToolError` for an unknown id).
"""

from __future__ import annotations

import importlib.util
import typing as t
from pathlib import Path

import pytest

schemathesis = pytest.importorskip(
    "schemathesis", reason="schemathesis is not installed (pip install -e '.[test]' installs it)"
)
hypothesis = pytest.importorskip("hypothesis", reason="hypothesis is not installed (schemathesis depends on it)")

from schemathesis.checks import (  # noqa: E402  (only importable once the skip above has passed)
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

QUICKSTART = Path(__file__).resolve().parents[1] / "examples" / "quickstart" / "app.py"
OPENAPI_PATH = "/mcp/rest/openapi.json"


def _quickstart() -> t.Any:
    spec = importlib.util.spec_from_file_location("quickstart_schemathesis", QUICKSTART)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


quickstart = _quickstart()
app = quickstart.create_app({"TESTING": True})
# Only the REST operations: the MCP endpoint's JSON-RPC contract is checked
# against the official MCP schema elsewhere.
schema = schemathesis.openapi.from_wsgi(OPENAPI_PATH, app).include(tag=["tools", "resources"])


def expected_tool_error(case: schemathesis.Case) -> str | None:
    """The ``error`` a 500 must carry when the tool behind *case* raised by design, else ``None``."""
    body = case.body if isinstance(case.body, dict) else None
    if case.path.endswith("/tools/get_note") and body is not None:
        note_id = body.get("note_id")
        if isinstance(note_id, str) and note_id not in quickstart.NOTES:
            return f"Function error: no note with id {note_id!r}"
    return None


@schemathesis.check
def only_documented_server_errors(
    ctx: schemathesis.CheckContext, response: schemathesis.Response, case: schemathesis.Case
) -> bool | None:
    """No 5xx, except the documented ``Function error`` of a tool that raised itself."""
    if response.status_code < 500:
        return None
    expected = expected_tool_error(case)
    assert response.status_code == 500 and expected is not None, f"server error {response.status_code}: {response.text}"
    assert response.json() == {"error": expected}
    return None


@schema.parametrize()
@hypothesis.settings(
    max_examples=25,
    derandomize=True,  # the same inputs every run, so a failure is reproducible and CI is stable
    database=None,  # nothing written to .hypothesis/
    deadline=None,  # the first request builds the document; timing is not under test here
    suppress_health_check=list(hypothesis.HealthCheck),
)
def test_rest_operations_conform_to_openapi(case: schemathesis.Case) -> None:
    case.call_and_validate(
        checks=[
            only_documented_server_errors,
            status_code_conformance,
            content_type_conformance,
            response_schema_conformance,
        ]
    )


def test_document_declares_the_tool_error_status() -> None:
    """``get_note``'s ToolError reaches REST clients as a 500 the document declares."""
    document = app.test_client().get(OPENAPI_PATH).get_json()
    responses = document["paths"]["/mcp/rest/tools/get_note"]["post"]["responses"]
    assert responses["500"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}
    response = app.test_client().post("/mcp/rest/tools/get_note", json={"note_id": "nope"})
    assert response.status_code == 500
    assert response.get_json() == {"error": "Function error: no note with id 'nope'"}
