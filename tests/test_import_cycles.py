"""No runtime import cycle in flask_mcp: found with ``ast``, imports inside functions included.

Imports under ``if TYPE_CHECKING:`` are left out: they never run.
"""

from __future__ import annotations

from pathlib import Path

from tests.imports import PACKAGE, edges, module_name


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports when it runs.

    Importing ``pkg.sub.mod`` runs ``pkg/sub/__init__.py`` first: each
    package on the way counts as imported too, unless it is one of the
    importer's own (already being set up when the importer runs).
    """
    modules = {module_name(root, path) for path in root.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for edge in edges(root):
        if not edge.runtime or edge.target not in modules:
            continue
        graph[edge.source].add(edge.target)
        own = {edge.source.rsplit(".", depth)[0] for depth in range(1, edge.source.count(".") + 1)}
        package = edge.target.rpartition(".")[0]
        while package and package not in own:
            graph[edge.source].add(package)
            package = package.rpartition(".")[0]
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_flask_mcp_has_no_runtime_import_cycle() -> None:
    assert cycles(import_graph(PACKAGE)) == []


def test_a_planted_cycle_is_found(tmp_path: Path) -> None:
    """Through a package's __init__, inside a function; a TYPE_CHECKING import does not count."""
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "a.py").write_text("from .sub import b\n")
    (root / "sub" / "__init__.py").write_text("")
    (root / "sub" / "b.py").write_text("def f():\n    from .. import a\n")
    (root / "c.py").write_text("import typing as t\nif t.TYPE_CHECKING:\n    from . import a\n")
    assert cycles(import_graph(root)) == [["pkg.a", "pkg.sub.b"]]


def test_a_cycle_through_a_package_imported_on_the_way_is_found(tmp_path: Path) -> None:
    """``from .sub.mod import f`` runs ``sub/__init__.py``, which may import the importer back."""
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "runner.py").write_text("from .sub.tools import f\n")
    (root / "sub" / "__init__.py").write_text("from . import handlers\n")
    (root / "sub" / "tools.py").write_text("def f():\n    pass\n")
    (root / "sub" / "handlers.py").write_text("from ..runner import g\n")
    assert cycles(import_graph(root)) == [["pkg.runner", "pkg.sub", "pkg.sub.handlers"]]
