"""The import statements of a package, read with ``ast`` (imports inside functions included).

Shared by ``test_layers`` and ``test_import_cycles``: both reason about who
imports whom without importing anything.
"""

from __future__ import annotations

import ast
import typing as t
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "flask_mcp"


class Edge(t.NamedTuple):
    """One import: *source* module imports *target* (a module of the package, or an outside top-level name)."""

    source: str
    target: str
    #: False for imports under ``if TYPE_CHECKING:``, which never run.
    runtime: bool
    line: int


def module_name(root: Path, path: Path) -> str:
    """``pkg/sub/mod.py`` -> ``pkg.sub.mod``; a package's ``__init__.py`` is the package."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _nodes(tree: ast.AST, runtime: bool = True) -> t.Iterator[tuple[ast.AST, bool]]:
    """Every node, with whether it runs (``False`` inside ``if TYPE_CHECKING:``)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                yield child, False
                yield from _nodes(child, False)
            for child in node.orelse:
                yield child, runtime
                yield from _nodes(child, runtime)
            continue
        yield node, runtime
        yield from _nodes(node, runtime)


def edges(root: Path) -> list[Edge]:
    """Every import in the package under *root*, resolved to module names."""
    modules = {module_name(root, path): path for path in root.rglob("*.py")}
    found: list[Edge] = []
    for name, path in sorted(modules.items()):
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node, runtime in _nodes(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = package
                for _ in range(max(0, node.level - 1)):
                    base = base.rpartition(".")[0]
                source = ".".join(p for p in (base if node.level else "", node.module or "") if p)
                # "from pkg import mod" imports the module; "from mod import name", the module.
                targets = [
                    f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source for alias in node.names
                ]
            else:
                continue
            for target in targets:
                if target not in modules:
                    target = target.partition(".")[0]  # an outside package, by its top-level name
                if target != name:
                    found.append(Edge(name, target, runtime, node.lineno))
    return found
