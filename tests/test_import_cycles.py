"""No runtime import cycle in flask_mcp: found with ``ast``, imports inside functions included.

Imports under ``if TYPE_CHECKING:`` are left out: they never run.
"""

from __future__ import annotations

from pathlib import Path

from tests.imports import PACKAGE, edges, module_name


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports when it runs."""
    modules = {module_name(root, path) for path in root.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for edge in edges(root):
        if edge.runtime and edge.target in modules:
            graph[edge.source].add(edge.target)
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
