"""The ``mcp_client`` fixtures, as a project using them sees them: in a pytest run of its own."""

from __future__ import annotations

from importlib.metadata import entry_points

import pytest

pytest_plugins = ["pytester"]

#: A user's conftest: an app with one of each kind, as the ``app`` fixture (pytest-flask's convention).
CONFTEST = """
import pytest
from flask import Flask

from flask_mcp import MCP


def build(**config):
    mcp = MCP(name="user-app", version="1")

    @mcp.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @mcp.resource("config://app")
    def settings() -> str:
        return "on"

    @mcp.prompt(completions={"language": ["go", "python"]})
    def review(code: str, language: str = "python") -> str:
        return code

    app = Flask("user_app")
    app.config.update(TESTING=True, **config)
    mcp.init_app(app)
    return app


@pytest.fixture
def app():
    return build()
"""


def test_plugin_is_registered_as_a_pytest11_entry_point() -> None:
    plugins = {ep.name: ep.value for ep in entry_points(group="pytest11")}
    assert plugins.get("flask_mcp") == "flask_mcp.testing.pytest_plugin"


def test_mcp_client_speaks_the_modern_era_to_the_app_fixture(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        """
        def test_tools(mcp_client):
            assert mcp_client.modern and mcp_client.session_id is None
            assert "2026-07-28" in mcp_client.discover()["supportedVersions"]
            assert [tool["name"] for tool in mcp_client.list_tools()] == ["add"]
            assert mcp_client.call_tool("add", {"a": 1, "b": 2})["structuredContent"] == {"result": 3}

        def test_resources_prompts_and_completion(mcp_client):
            assert [r["uri"] for r in mcp_client.list_resources()] == ["config://app"]
            assert mcp_client.read_resource("config://app")[0]["text"] == "on"
            assert [p["name"] for p in mcp_client.list_prompts()] == ["review"]
            completion = mcp_client.complete({"type": "ref/prompt", "name": "review"}, "language", "g")
            assert completion["values"] == ["go"]

        def test_each_handshake_client_gets_its_own_session(mcp_client_factory):
            first, second = mcp_client_factory(era="handshake"), mcp_client_factory(era="handshake")
            assert first.session_id and first.protocol_version == "2025-11-25"
            assert first.session_id != second.session_id
            assert first.call_tool("add", {"a": 1, "b": 2})["structuredContent"] == {"result": 3}
        """
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=3)


def test_factory_takes_another_app_path_and_handshake(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        """
        from conftest import build

        def test_custom_prefix(mcp_client_factory):
            client = mcp_client_factory(build(MCP_URL_PREFIX="/api/mcp"))
            assert client.path == "/api/mcp"
            assert client.call_tool("add", {"a": 2, "b": 2})["structuredContent"] == {"result": 4}

        def test_uninitialized(mcp_client_factory):
            client = mcp_client_factory(era="handshake", initialize=False)
            assert client.session_id is None
            result = client.initialize(version="2025-06-18", capabilities={"sampling": {}})
            assert result["protocolVersion"] == "2025-06-18"
        """
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)


def test_every_answer_is_checked_against_the_shipped_official_schema(pytester: pytest.Pytester) -> None:
    """A user's tests validate with no schema of their own; an answer that breaks it fails the test."""
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        """
        from flask_mcp.testing import SchemaValidator

        def test_the_clients_validators(mcp_client, mcp_client_factory):
            assert mcp_client.modern_validator is SchemaValidator.official("2026-07-28")
            assert mcp_client_factory(era="handshake").validator is SchemaValidator.official("2025-11-25")
            assert mcp_client_factory(validate=False).modern_validator is None

        def test_a_malformed_answer_fails(mcp_client, monkeypatch):
            from flask_mcp.core.methods import MODERN_HANDLERS

            real = MODERN_HANDLERS["tools/call"]
            monkeypatch.setitem(MODERN_HANDLERS, "tools/call", lambda call: {**real(call), "content": "not a list"})
            mcp_client.call_tool("add", {"a": 1, "b": 2})
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*ValidationError*not a list*"])


#: A user's conftest with authentication: a tool that needs a scope.
PROTECTED_CONFTEST = """
import pytest
from flask import Flask

from flask_mcp import MCP, Context, ScopeRequired


@pytest.fixture
def app():
    mcp = MCP(name="protected")

    @mcp.tool(permissions=[ScopeRequired("notes:read")])
    def notes(ctx: Context) -> str:
        return f"notes for {ctx.principal.subject}"

    app = Flask("protected_app")
    app.config.update(TESTING=True, MCP_AUTH_TOKENS={"t": "someone"})
    mcp.init_app(app)
    return app
"""


def test_mcp_client_stands_in_for_the_mcp_principal_fixture(pytester: pytest.Pytester) -> None:
    """``mcp_principal`` (None by default) is overridden as any fixture: in a conftest, a module or by parametrize."""
    pytester.makeconftest(PROTECTED_CONFTEST)
    pytester.makepyfile(
        """
        import pytest

        from flask_mcp import Principal


        @pytest.fixture
        def mcp_principal():
            return Principal("ada", scopes={"notes:read"})


        def test_as_ada(mcp_client):
            assert mcp_client.call_tool("notes")["content"][0]["text"] == "notes for ada"


        @pytest.mark.parametrize("mcp_principal", ["eve"])
        def test_as_eve_without_the_scope(mcp_client):
            assert mcp_client.error("tools/call", {"name": "notes", "arguments": {}})["code"] == -31403
        """
    )
    pytester.makepyfile(
        test_nobody="""
        def test_by_default_nobody(mcp_client, mcp_principal):
            assert mcp_principal is None
            mcp_client.error("tools/list")
            assert mcp_client.last_response.status_code == 401
        """
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=3)


def test_a_failing_call_fails_the_user_test(pytester: pytest.Pytester) -> None:
    """The fixtures do not swallow errors: an unknown tool fails the test that called it."""
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        """
        def test_unknown_tool(mcp_client):
            mcp_client.call_tool("nope")
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*AssertionError*"])


def test_without_an_app_fixture_the_error_names_it(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        def test_needs_app(mcp_client):
            pass
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*fixture 'app' not found*"])


def test_disabling_the_plugin_removes_the_fixtures(pytester: pytest.Pytester) -> None:
    """The fixtures come from the entry point, not from this project's conftest."""
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        """
        def test_tools(mcp_client):
            pass
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:flask_mcp")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*fixture 'mcp_client' not found*"])
