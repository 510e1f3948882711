"""The extras: each is listed in docs/installation.rst, and the ``oauth`` one brings what its docs import."""

from __future__ import annotations

import ast
import configparser
import re
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent


def _options() -> configparser.ConfigParser:
    parser = configparser.ConfigParser()
    parser.read(ROOT / "setup.cfg")
    return parser


def _requirements(text: str) -> list[Requirement]:
    lines = (line.split("#", 1)[0].strip() for line in text.splitlines())
    return [Requirement(line) for line in lines if line]


def _extras() -> dict[str, list[Requirement]]:
    section = _options()["options.extras_require"]
    return {name: _requirements(section[name]) for name in section}


def _closure(requirements: list[Requirement]) -> set[str]:
    """The distributions *requirements* bring, theirs included (as installed here)."""
    seen: set[str] = set()
    pending = [(req, frozenset(req.extras)) for req in requirements]
    while pending:
        req, extras = pending.pop()
        if req.marker is not None and not any(req.marker.evaluate({"extra": extra}) for extra in (extras or {""})):
            continue
        name = canonicalize_name(req.name)
        if name in seen:
            continue
        seen.add(name)
        for line in metadata.requires(req.name) or []:
            nested = Requirement(line)
            pending.append((nested, frozenset(nested.extras) | extras if nested.marker else frozenset(nested.extras)))
    return seen


def _imported_modules(source: str) -> set[str]:
    modules: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules.add(node.module.split(".")[0])
    return modules


def _python_blocks(rst: str) -> list[str]:
    """The ``code-block:: python`` blocks of an reST page, dedented."""
    blocks = re.findall(r"\.\. code-block:: python\n\n((?:(?:   .*)?\n)+)", rst)
    return ["\n".join(line[3:] for line in block.splitlines()) for block in blocks]


def _distributions_of(modules: set[str]) -> dict[str, set[str]]:
    owners = metadata.packages_distributions()
    third_party = {m for m in modules if m not in sys.stdlib_module_names and m != "flask_mcp"}
    return {module: {canonicalize_name(dist) for dist in owners.get(module, [module])} for module in third_party}


def test_every_extra_is_in_the_installation_table() -> None:
    table = (ROOT / "docs" / "installation.rst").read_text()
    # A row starts with the extra's name; "``lint``," shares its row with the next line's name.
    listed = set(re.findall(r"^``([a-z]+)``", table, re.MULTILINE))
    assert set(_extras()) - listed == set()


def test_the_oauth_extra_brings_every_module_its_setup_and_example_import() -> None:
    install = _requirements(_options()["options"]["install_requires"])
    brought = _closure(install + _extras()["oauth"])
    modules = _imported_modules((ROOT / "examples" / "oauth_app" / "app.py").read_text())
    for block in _python_blocks((ROOT / "docs" / "oauth.rst").read_text()):
        # The client side's snippets run with the sdk extra (their page says so).
        if "mcp.client" not in block:
            modules |= _imported_modules(block)
    missing = {module: dists for module, dists in _distributions_of(modules).items() if not dists & brought}
    assert missing == {}, f"pip install '.[oauth]' does not bring {missing}"
