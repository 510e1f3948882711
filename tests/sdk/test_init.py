"""``flask_mcp.sdk`` without the SDK: flask_mcp and the fixtures import; the SDK's names say what is missing."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import flask_mcp.sdk


def test_the_public_names_are_found_where_they_live() -> None:
    from flask_mcp.sdk.in_process import connect
    from flask_mcp.sdk.tasks import TasksExtension

    assert flask_mcp.sdk.TasksExtension is TasksExtension and flask_mcp.sdk.connect is connect
    assert set(flask_mcp.sdk.__all__) <= set(dir(flask_mcp.sdk)) | set(flask_mcp.sdk._HOMES)
    assert "TasksExtension" in vars(flask_mcp.sdk)  # kept once found
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        flask_mcp.sdk.Nothing  # noqa: B018


def test_without_the_sdk_flask_mcp_imports_and_the_sdks_names_say_how_to_install_it() -> None:
    program = textwrap.dedent(
        """
        import importlib.abc, sys

        class NoSDK(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("mcp", "mcp_types", "httpx2"):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None

        sys.meta_path.insert(0, NoSDK())
        import flask_mcp
        import flask_mcp.sdk
        import flask_mcp.sdk.fixtures
        import flask_mcp.pytest_plugin
        try:
            flask_mcp.sdk.TasksExtension
        except ImportError as missing:
            print(missing)
        """
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "flask_mcp.sdk.TasksExtension needs the official MCP SDK: install flask_mcp with its sdk extra (mcp==2.3.0)"
    )
