"""The import paths apps use keep working after a move: each names the same objects as the code's new home.

A kept path is a small module (or the package itself) re-exporting its new
home, with a docstring naming it; the ``pytest11`` entry point names a
module that exists.
"""

from __future__ import annotations

import configparser
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Each kept public path, the names it has always exported, and the modules that now define them.
KEPT: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "flask_mcp.routes": (
        (
            "ROUTE_TOOL_ATTRIBUTE",
            "RouteArguments",
            "ViewRoute",
            "expose_routes",
            "route_arguments",
            "route_caller_digest",
            "route_for",
            "route_of",
            "route_tool",
        ),
        (
            "flask_mcp.integrations.routes.expose",
            "flask_mcp.integrations.routes.arguments",
            "flask_mcp.integrations.routes.view_tools",
        ),
    ),
    "flask_mcp.apps": (
        ("EXTENSION", "MIME_TYPE", "App", "as_app", "inline_static", "link_view", "register_view", "view_uri"),
        ("flask_mcp.integrations.apps",),
    ),
    "flask_mcp.tasks_celery": (
        ("CELERY_TASK", "CeleryTaskRunner", "celery_runner"),
        ("flask_mcp.integrations.tasks.celery",),
    ),
    "flask_mcp.pytest_plugin": (
        ("MCPClientFactory", "mcp_client", "mcp_client_factory", "mcp_principal"),
        ("flask_mcp.testing.pytest_plugin",),
    ),
    "flask_mcp.testing": (
        ("RESULT_TYPES", "TASK_PAUSES", "Answers", "MCPTestClient", "SchemaValidator"),
        (
            "flask_mcp.testing.client",
            "flask_mcp.testing.calls",
            "flask_mcp.testing.schema_checks",
            "flask_mcp.testing.streams",
        ),
    ),
    "flask_mcp.cli": (("mcp_group",), ("flask_mcp.cli.commands",)),
    "flask_mcp.config": (
        (
            "DEFAULTS",
            "LateSettingWarning",
            "ProcessLocalSessionsWarning",
            "Settings",
            "UnknownSettingWarning",
            "changed_settings",
        ),
        ("flask_mcp.config.settings",),
    ),
}
#: The kept paths that are modules of their own (the others are the new packages themselves).
SHIMS = ("flask_mcp.routes", "flask_mcp.apps", "flask_mcp.tasks_celery", "flask_mcp.pytest_plugin")
#: Public paths that did not move.
UNMOVED = ("flask_mcp.signals", "flask_mcp.globals", "flask_mcp.extension")


@pytest.mark.parametrize("path", sorted(KEPT))
def test_a_kept_path_exposes_the_objects_of_the_new_home(path: str) -> None:
    names, homes = KEPT[path]
    kept = importlib.import_module(path)
    modules = [importlib.import_module(home) for home in homes]
    assert set(names) <= set(kept.__all__)
    for name in names:
        defined = [module for module in modules if name in getattr(module, "__all__", ())]
        assert len(defined) == 1, f"{path}.{name} is defined in {[m.__name__ for m in defined]}"
        assert getattr(kept, name) is getattr(defined[0], name)


@pytest.mark.parametrize("path", SHIMS)
def test_a_kept_module_names_its_new_home(path: str) -> None:
    doc = importlib.import_module(path).__doc__ or ""
    assert any(f":mod:`{home}" in doc or f":mod:`{home.rpartition('.')[0]}" in doc for home in KEPT[path][1])


@pytest.mark.parametrize("path", UNMOVED)
def test_the_unmoved_paths_import(path: str) -> None:
    assert importlib.import_module(path).__all__


def test_the_pytest_entry_point_names_the_plugin() -> None:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    lines = config["options.entry_points"]["pytest11"].strip().splitlines()
    entries = {name.strip(): value.strip() for name, value in (line.split("=", 1) for line in lines)}
    plugin = importlib.import_module(entries["flask_mcp"])
    assert plugin.__name__ == "flask_mcp.testing.pytest_plugin"
    assert callable(plugin.mcp_client)
