"""Runtime imports go down the layers, and the layers under the Flask boundary never import Flask.

The order is the one ``flask_mcp/core/README.md`` and ``docs/architecture.rst``
draw. A module may import its own package and any layer below it at run time;
``if TYPE_CHECKING:`` imports may point anywhere (they never run), and the
ones that point up are listed in :data:`TYPE_ONLY_UPWARD` so that a new one
is a decision, not an accident.
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
    ("globals",),
    ("stores", "auth"),
    ("transport",),
    ("integration",),
    # The OAuth authorization server (an optional extra) is built on an MCP server and on Flask.
    ("oauth",),
]
#: The layers that know nothing of Flask, Werkzeug or flask-caching.
FLASK_FREE = {"schemas", "protocol", "policies", "results", "components", "core"}
FLASK = {"flask", "werkzeug", "flask_caching"}

#: Type-only references up the layers, kept where a ``Protocol`` would only restate the class.
TYPE_ONLY_UPWARD: set[tuple[str, str]] = {
    # A permission is asked about the component it guards.
    ("flask_mcp.policies.permissions", "flask_mcp.components.model"),
    # A binder fills parameters from the call being handled (principal, request, seeds).
    ("flask_mcp.components.binding", "flask_mcp.core.client"),
    # register_tools registers on an extension.
    ("flask_mcp.components.bulk", "flask_mcp.extension"),
    # What current_state() returns, what current_mcp is, and what the transports are handed.
    ("flask_mcp.globals", "flask_mcp.state"),
    ("flask_mcp.globals", "flask_mcp.extension"),
    ("flask_mcp.transport.metadata", "flask_mcp.state"),
    ("flask_mcp.transport.cgi", "flask_mcp.state"),
    ("flask_mcp.transport.http", "flask_mcp.state"),
    ("flask_mcp.transport.landing", "flask_mcp.state"),
    ("flask_mcp.transport.listen", "flask_mcp.state"),
    ("flask_mcp.transport.modern", "flask_mcp.state"),
    ("flask_mcp.transport.openapi", "flask_mcp.state"),
    ("flask_mcp.transport.rest", "flask_mcp.state"),
    ("flask_mcp.transport.status", "flask_mcp.state"),
    ("flask_mcp.transport.streaming", "flask_mcp.state"),
    ("flask_mcp.transport.lost_requests", "flask_mcp.state"),
    ("flask_mcp.transport.body", "flask_mcp.config"),
    # The gate is built from the app's settings.
    ("flask_mcp.auth.gate", "flask_mcp.config"),
}


#: Packages that are part of the Flask integration, as the top-level modules are: the telemetry is
#: given to the core (``core.tracing``) by the integration, and reads Flask's request and settings.
INTEGRATION_PACKAGES = {"telemetry"}


def layer_of(module: str) -> str:
    """``flask_mcp.core.server`` -> ``core``; the top-level modules are the Flask integration."""
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in INTEGRATION_PACKAGES:
        return "integration"
    if len(parts) > 1 and any(parts[1] in names for names in LAYERS):
        return parts[1]
    return "integration"


def test_the_telemetry_is_placed_in_the_integration() -> None:
    assert layer_of("flask_mcp.telemetry.tracer") == "integration"
    assert layer_of("flask_mcp.core.tracing") == "core"


def rank_of(layer: str) -> int:
    return next(rank for rank, names in enumerate(LAYERS) if layer in names)


def violations(found: list[Edge], package: str) -> list[str]:
    """Every runtime import that goes up or sideways, and every Flask import below the boundary."""
    problems: list[str] = []
    for edge in found:
        source = layer_of(edge.source)
        if edge.target.split(".")[0] != package:
            if edge.target in FLASK and source in FLASK_FREE:
                problems.append(f"{edge.source}:{edge.line} imports {edge.target} (layer {source} is Flask-free)")
            continue
        target = layer_of(edge.target)
        if not edge.runtime or target == source:
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
    """An upward import inside a function, a sideways one, and Flask in the core; type-only ones pass."""
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
            "stores/sessions.py": "from ..auth import gate\nfrom flask_caching import Cache\n",
            "auth/__init__.py": "",
            "auth/gate.py": "from flask import request\nfrom ..protocol import jsonrpc\n",
            "extension.py": "from .stores import sessions\nfrom flask import Flask\n",
        },
    )
    assert violations(edges(root), "pkg") == [
        "pkg.core.server:2 imports werkzeug (layer core is Flask-free)",
        "pkg.protocol.jsonrpc:2 imports pkg.core.server (protocol may not import core)",
        "pkg.stores.sessions:1 imports pkg.auth.gate (stores may not import auth)",
    ]
