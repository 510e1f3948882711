"""Property-based check of the REST adapter against its own OpenAPI document.

Schemathesis reads ``<prefix>/openapi.json`` from the quickstart app in
process (WSGI, no server), generates requests for every tool and the
resource route from the declared schemas, and checks that each response is
one the document declares: its status code, its content type and its body.
Any 5xx is a failure: the quickstart's tools fail only on purpose
(``get_note`` raises :class:`~flask_mcp.NotFoundError` for an unknown id,
which the REST adapter answers with 404).
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

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart" / "app.py"
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


@schemathesis.check
def no_server_errors(
    ctx: schemathesis.CheckContext, response: schemathesis.Response, case: schemathesis.Case
) -> bool | None:
    """No 5xx for any generated request."""
    assert response.status_code < 500, f"server error {response.status_code}: {response.text}"
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
            no_server_errors,
            status_code_conformance,
            content_type_conformance,
            response_schema_conformance,
        ]
    )


def test_a_missing_note_is_a_documented_404() -> None:
    """``get_note``'s NotFoundError reaches REST clients as a 404 the document declares."""
    document = app.test_client().get(OPENAPI_PATH).get_json()
    responses = document["paths"]["/mcp/rest/tools/get_note"]["post"]["responses"]
    assert responses["404"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}
    response = app.test_client().post("/mcp/rest/tools/get_note", json={"note_id": "nope"})
    assert response.status_code == 404
    assert response.get_json() == {"error": "no note with id 'nope'"}
