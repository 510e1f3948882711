"""Imports go down the layers, and the layers under the Flask boundary never import Flask.

The order is the one ``flask_mcp/core/README.md`` and ``docs/architecture.rst``
draw. A module may import its own package and any layer below it. In the core
layers (schemas up to core) that holds for ``if TYPE_CHECKING:`` imports too:
a reader of the core never has to open the Flask binding to understand it, and
a core module that must name something above it names a small ``Protocol``.
Above the core, type-only imports may point up (they never run, as in Flask
itself); those are listed in :data:`TYPE_ONLY_UPWARD` so that a new one is a
decision, not an accident.
"""

from __future__ import annotations

from pathlib import Path

from tests.imports import PACKAGE, Edge, edges

#: Lowest first. Packages on one rank (``stores`` and ``auth``) do not import each other.
LAYERS: list[tuple[str, ...]] = [
    ("schemas",),
    ("protocol",),
    ("policies",),
    ("results",),
    ("components",),
    ("core",),
    # The MCP_* keys and the settings read from them: below everything that reads settings.
    ("config",),
    ("globals",),
    ("stores", "auth"),
    ("transport",),
    # The official SDK's client speaking to an app in process (an optional extra): under the test tools.
    ("sdk",),
    # What the extension serves from the rest of the app, the command line, the test tools and
    # the tracer given to the core: built on the transports, none importing another.
    ("integrations", "cli", "testing", "telemetry"),
    # The audit trail: its table, its writer, and ``flask mcp audit`` (drawn with the CLI's tables).
    ("audit",),
    # The Flask binding: the extension object, what init_app builds on an app, the signals it sends.
    ("binding",),
    # The OAuth authorization server (an optional extra) is built on an MCP server and on Flask.
    ("oauth",),
    # The package's own namespace and the import paths kept for apps (each re-exports a new home).
    ("api",),
]
#: The layers that know nothing of Flask, Werkzeug or flask-caching.
FLASK_FREE = {"schemas", "protocol", "policies", "results", "components", "core"}
FLASK = {"flask", "werkzeug", "flask_caching"}

#: Every module and package at the top of ``flask_mcp``, and its layer: the top of the package
#: reads as the architecture, and a new top-level module must be given a place here.
TOP_LEVEL: dict[str, str] = {
    **{name: name for names in LAYERS for name in names if name != "api"},
    "extension": "binding",
    "signals": "binding",
    # Kept import paths, each a module re-exporting its new home.
    "routes": "api",
    "apps": "api",
    "tasks_celery": "api",
    "pytest_plugin": "api",
}
#: What else lies at the top: data, not code.
TOP_LEVEL_DATA = {"__init__.py", "py.typed", "official_schema"}
#: The parts of the integration layer: none imports another.
INTEGRATIONS = ("routes", "tasks", "skills", "apps")

#: Type-only references up the layers, kept where a ``Protocol`` would only restate the class.
TYPE_ONLY_UPWARD: set[tuple[str, str]] = {
    # What current_state() returns, what current_mcp is, and what the transports are handed.
    ("flask_mcp.globals", "flask_mcp.binding.state"),
    ("flask_mcp.globals", "flask_mcp.extension"),
    ("flask_mcp.transport.metadata", "flask_mcp.binding.state"),
    ("flask_mcp.transport.cgi", "flask_mcp.binding.state"),
    ("flask_mcp.transport.http", "flask_mcp.binding.state"),
    ("flask_mcp.transport.fast_lane", "flask_mcp.binding.state"),
    ("flask_mcp.transport.session_lookup", "flask_mcp.binding.state"),
    ("flask_mcp.transport.landing", "flask_mcp.binding.state"),
    ("flask_mcp.transport.listen", "flask_mcp.binding.state"),
    ("flask_mcp.transport.modern", "flask_mcp.binding.state"),
    ("flask_mcp.transport.openapi", "flask_mcp.binding.state"),
    ("flask_mcp.transport.rest", "flask_mcp.binding.state"),
    ("flask_mcp.transport.status", "flask_mcp.binding.state"),
    ("flask_mcp.transport.streaming", "flask_mcp.binding.state"),
    ("flask_mcp.transport.channel", "flask_mcp.binding.state"),
    ("flask_mcp.transport.lost_requests", "flask_mcp.binding.state"),
    # The test client speaks to a server's state.
    ("flask_mcp.testing.client", "flask_mcp.binding.state"),
    # Routes, skills and views are registered on an extension.
    ("flask_mcp.integrations.apps", "flask_mcp.extension"),
    ("flask_mcp.integrations.skills", "flask_mcp.extension"),
    ("flask_mcp.integrations.routes.expose", "flask_mcp.extension"),
}


def layer_of(module: str) -> str:
    """``flask_mcp.core.server`` -> ``core``, ``flask_mcp.extension`` -> ``binding``; ``flask_mcp`` itself is ``api``.

    :raises KeyError: a top-level module or package with no place in :data:`TOP_LEVEL`.
    """
    parts = module.split(".")
    return TOP_LEVEL[parts[1]] if len(parts) > 1 else "api"


def test_each_top_level_name_is_placed() -> None:
    assert layer_of("flask_mcp.telemetry.tracer") == "telemetry"
    assert layer_of("flask_mcp.core.tracing") == "core"
    assert layer_of("flask_mcp.extension") == "binding"
    assert layer_of("flask_mcp.integrations.routes.expose") == "integrations"
    assert layer_of("flask_mcp.routes") == "api"


def test_the_top_of_the_package_is_the_architecture() -> None:
    """Only the layers, the extension and its signals, and the kept import paths lie at the top."""
    found = {path.stem if path.suffix == ".py" else path.name for path in PACKAGE.iterdir()}
    found -= {"__pycache__"}
    assert found == set(TOP_LEVEL) | {name.removesuffix(".py") for name in TOP_LEVEL_DATA}


def test_the_integrations_do_not_import_each_other() -> None:
    def part(module: str) -> str | None:
        parts = module.split(".")
        return parts[2] if len(parts) > 2 and parts[1] == "integrations" else None

    found = [
        f"{edge.source}:{edge.line} imports {edge.target}"
        for edge in edges(PACKAGE)
        if part(edge.source) and part(edge.target) and part(edge.source) != part(edge.target)
    ]
    assert found == []
    parts = {path.stem for path in (PACKAGE / "integrations").iterdir()} - {"__init__", "__pycache__"}
    assert parts == set(INTEGRATIONS)


def rank_of(layer: str) -> int:
    return next(rank for rank, names in enumerate(LAYERS) if layer in names)


def violations(found: list[Edge], package: str) -> list[str]:
    """Every import that goes up or sideways, and every Flask import below the boundary.

    Type-only imports count too from the core layers (:data:`FLASK_FREE`).
    """
    problems: list[str] = []
    for edge in found:
        source = layer_of(edge.source)
        if edge.target.split(".")[0] != package:
            if edge.target in FLASK and source in FLASK_FREE:
                problems.append(f"{edge.source}:{edge.line} imports {edge.target} (layer {source} is Flask-free)")
            continue
        target = layer_of(edge.target)
        if (not edge.runtime and source not in FLASK_FREE) or target == source:
            continue
        if rank_of(target) >= rank_of(source):
            problems.append(f"{edge.source}:{edge.line} imports {edge.target} ({source} may not import {target})")
    return list(dict.fromkeys(problems))  # one line per statement, however many names it imports


def test_flask_mcp_imports_go_down_the_layers() -> None:
    assert violations(edges(PACKAGE), "flask_mcp") == []


def test_type_only_upward_references_are_the_listed_ones() -> None:
    upward = {
        (edge.source, edge.target)
        for edge in edges(PACKAGE)
        if not edge.runtime
        and edge.target.startswith("flask_mcp.")
        and rank_of(layer_of(edge.target)) > rank_of(layer_of(edge.source))
    }
    assert upward == TYPE_ONLY_UPWARD


def _plant(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_planted_violations_are_found(tmp_path: Path) -> None:
    """An upward import inside a function, a sideways one, Flask in the core, a type-only one up from the core.

    A type-only upward import above the core (the extension naming a store's type) passes.
    """
    root = tmp_path / "pkg"
    _plant(
        root,
        {
            "__init__.py": "",
            "protocol/__init__.py": "",
            "protocol/jsonrpc.py": "def f():\n    from ..core import server\n",
            "core/__init__.py": "",
            "core/server.py": (
                "import typing as t\nfrom werkzeug import Request\n"
                "if t.TYPE_CHECKING:\n    from ..extension import MCP\n"
            ),
            "stores/__init__.py": "",
            "stores/sessions.py": (
                "import typing as t\nfrom ..auth import gate\nfrom flask_caching import Cache\n"
                "if t.TYPE_CHECKING:\n    from ..extension import MCP\n"
            ),
            "auth/__init__.py": "",
            "auth/gate.py": "from flask import request\nfrom ..protocol import jsonrpc\n",
            "extension.py": "from .stores import sessions\nfrom flask import Flask\n",
        },
    )
    assert violations(edges(root), "pkg") == [
        "pkg.core.server:2 imports werkzeug (layer core is Flask-free)",
        "pkg.core.server:4 imports pkg.extension (core may not import binding)",
        "pkg.protocol.jsonrpc:2 imports pkg.core.server (protocol may not import core)",
        "pkg.stores.sessions:2 imports pkg.auth.gate (stores may not import auth)",
    ]
