"""The API reference lists every public name, and the guides link the names they mention.

Nothing is built: the ``.rst`` sources are read for autodoc directives
(``autoclass``, ``autofunction``, ``automodule`` with ``:members:``...) and
hand-written object descriptions (``.. data::``, ``.. attribute::``...), and
the public names of the package are looked up in what they describe. A new
public name without an entry, or a guide that mentions one as a plain
literal only, fails here rather than going unnoticed.
"""

from __future__ import annotations

import importlib
import inspect
import re
import typing as t
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import flask_mcp

DOCS = Path(__file__).resolve().parent.parent / "docs"
API_PAGE = DOCS / "api.rst"
#: The guides: every page but the reference itself.
GUIDES = sorted(path for path in DOCS.glob("*.rst") if path != API_PAGE)

#: The classes whose public attributes are all documented.
CLASSES: dict[str, type] = {"flask_mcp.MCP": flask_mcp.MCP, "flask_mcp.Context": flask_mcp.Context}
#: Modules whose ``__all__`` is documented in full, besides those the guides name.
MODULES = (
    "flask_mcp.testing",
    "flask_mcp.pytest_plugin",
    "flask_mcp.auth",
    "flask_mcp.testing.schema_checks",
    "flask_mcp.schemas.pydantic_models",
    "flask_mcp.results.output",
    "flask_mcp.components.list_tools",
    "flask_mcp.components.list_tools_filters",
    "flask_mcp.components.bulk",
)

DIRECTIVE = re.compile(
    r"^(?P<indent>[ ]*)\.\.[ ]+(?:py:)?"
    r"(?P<kind>auto(?:module|class|exception|function|method|attribute|property|data|decorator)"
    r"|module|currentmodule|class|exception|function|method|attribute|property|data|decorator)"
    r"::[ ]*(?P<target>[\w.]+)"
)
OPTION = re.compile(r"^(?P<indent>[ ]+):(?P<name>[\w-]+):[ ]*(?P<value>.*)$")
#: Directives that describe a class, whose nested directives describe its members.
CLASS_KINDS = {"autoclass", "autoexception", "class", "exception"}
#: ``:role:`target``` or ``:role:`title <target>```.
ROLE = re.compile(r":(?:py:)?(?:meth|func|class|exc|attr|data|const|obj|mod|property):`(?P<text>[^`]+)`")
#: An inline literal: double backticks, possibly across lines.
LITERAL = re.compile(r"(?<![`\w])``(?P<text>[^`]+?)``(?!`)", re.S)


@dataclass
class Reference:
    """What the ``.rst`` sources document: dotted names, and the objects behind them."""

    names: set[str] = field(default_factory=set)
    #: The objects documented under some name, so that one re-exported by
    #: another module is documented once: a class or function by identity, a
    #: value by identity and its name (two equal strings are not one constant).
    objects: dict[tuple[str, int], object] = field(default_factory=dict)

    def add(self, name: str) -> None:
        self.names.add(name)
        found, obj = resolve(name)
        if found:
            self.objects[identity(name, obj)] = obj

    def documents(self, name: str) -> bool:
        if name in self.names:
            return True
        found, obj = resolve(name)
        return found and identity(name, obj) in self.objects


def identity(name: str, obj: object) -> tuple[str, int]:
    return ("" if has_identity(obj) else name.rpartition(".")[2], id(obj))


def has_identity(obj: object) -> bool:
    """Whether two names holding *obj* are one object rather than two equal values."""
    return (
        inspect.isclass(obj)
        or inspect.isroutine(obj)
        or inspect.ismodule(obj)
        or isinstance(obj, (property, dict, list, set))
    )


def resolve(name: str) -> tuple[bool, object]:
    """``(True, obj)`` for the object at dotted *name*, ``(False, None)`` when there is none."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            if part not in dir(obj):
                return False, None
            try:
                obj = inspect.getattr_static(obj, part)
            except AttributeError:
                obj = getattr(obj, part)  # a module's attribute made on first use (its __getattr__, PEP 562)
        return True, obj
    return False, None


def public_names(obj: object) -> list[str]:
    """What ``:members:`` without a list documents: a module's ``__all__``, a class's own public attributes."""
    if inspect.ismodule(obj):
        declared = getattr(obj, "__all__", None)
        if declared is not None:
            return list(declared)
        return [
            name
            for name, value in vars(obj).items()
            if not name.startswith("_") and getattr(value, "__module__", None) == obj.__name__
        ]
    return [name for name in vars(obj) if not name.startswith("_")]


def has_doc(owner: object, member: str) -> bool:
    """Whether autodoc has a description of *owner*'s *member* to show.

    A class or function has its docstring. A value has none of its own: a
    module's value needs a ``#:`` comment in that module's source, where
    autodoc looks (not in the module it was imported from).
    """
    found, obj = resolve(f"{owner.__name__}.{member}") if inspect.ismodule(owner) else (True, None)
    if not found:
        return False
    if not inspect.ismodule(owner):
        value = inspect.getattr_static(owner, member, None)
        if isinstance(value, (classmethod, staticmethod)):
            value = value.__func__
        return not (inspect.isroutine(value) or isinstance(value, property)) or bool(inspect.getdoc(value))
    if inspect.isclass(obj) or inspect.isroutine(obj):
        return bool(inspect.getdoc(obj))
    comment = rf"^[ ]*#:.*\n(?:[ ]*#:.*\n)*[ ]*{member}\b[ ]*[:=]|^[ ]*{member}\b[ ]*[:=].*#:"
    return re.search(comment, inspect.getsource(owner), re.M) is not None


def split_names(value: str) -> list[str]:
    return [name.strip() for name in value.split(",") if name.strip()]


def read_options(lines: list[str], start: int, indent: int) -> dict[str, str]:
    """The options of the directive whose first line is ``lines[start - 1]``, continuation lines joined."""
    options: dict[str, str] = {}
    current: str | None = None
    option_indent = 0
    for line in lines[start:]:
        match = OPTION.match(line)
        if match and len(match["indent"]) > indent:
            current, option_indent = match["name"], len(match["indent"])
            options[current] = match["value"]
        elif current is not None and line.strip() and len(line) - len(line.lstrip()) > option_indent:
            options[current] += " " + line.strip()
        else:
            break
    return options


def documented_in(path: Path, reference: Reference) -> None:
    """Add what the directives of the page at *path* document to *reference*."""
    lines = path.read_text(encoding="utf-8").splitlines()
    module = ""
    enclosing = ""  # the class whose indented content we are in
    for number, line in enumerate(lines, start=1):
        match = DIRECTIVE.match(line)
        if match is None:
            continue
        kind, target, indent = match["kind"], match["target"], len(match["indent"])
        if kind in {"module", "currentmodule"}:
            module = "" if target == "None" else target
            continue
        if indent and enclosing and "." not in target:
            name = f"{enclosing}.{target}"
        elif target.startswith("flask_mcp") or not module:
            name = target
        else:
            name = f"{module}.{target}"
        if kind == "automodule":
            module = name
        if indent == 0:
            enclosing = name if kind in CLASS_KINDS else ""
        reference.add(name)
        options = read_options(lines, number, indent)
        if "members" not in options:
            continue
        found, obj = resolve(name)
        assert found, f"{path.name}:{number}: {name} does not exist"
        members = split_names(options["members"]) or public_names(obj)
        excluded = set(split_names(options.get("exclude-members", "")))
        for member in members:
            # autodoc leaves out a member with nothing to say, listed or not.
            if member not in excluded and ("undoc-members" in options or has_doc(obj, member)):
                reference.add(f"{name}.{member}")


@pytest.fixture(scope="module")
def reference() -> Reference:
    reference = Reference()
    for path in [API_PAGE, *GUIDES]:
        documented_in(path, reference)
    return reference


def undocumented(reference: Reference, names: t.Iterable[str]) -> list[str]:
    return sorted(name for name in names if not reference.documents(name))


def test_every_name_of_the_package_is_documented(reference: Reference) -> None:
    assert undocumented(reference, (f"flask_mcp.{name}" for name in flask_mcp.__all__)) == []


@pytest.mark.parametrize("qualified", CLASSES)
def test_every_public_attribute_of_the_main_classes_is_documented(reference: Reference, qualified: str) -> None:
    names = (f"{qualified}.{name}" for name in dir(CLASSES[qualified]) if not name.startswith("_"))
    assert undocumented(reference, names) == []


def modules_the_guides_name() -> list[str]:
    """The modules under flask_mcp a guide names (``flask_mcp.auth``, ``flask_mcp.testing``...), those the API
    page documents, and :data:`MODULES`."""
    named = set(MODULES)
    # Every module the API page documents documents all of its public names.
    named.update(re.findall(r"^\.\. automodule:: (\S+)", API_PAGE.read_text(encoding="utf-8"), re.MULTILINE))
    for path in GUIDES:
        for dotted in re.findall(r"\bflask_mcp(?:\.\w+)+", path.read_text(encoding="utf-8")):
            found, obj = resolve(dotted)
            while found and not inspect.ismodule(obj):
                dotted = dotted.rpartition(".")[0]
                found, obj = resolve(dotted)
            if found and dotted != "flask_mcp":
                named.add(dotted)
    return sorted(named)


@pytest.mark.parametrize("module", modules_the_guides_name())
def test_every_name_of_the_modules_the_guides_name_is_documented(reference: Reference, module: str) -> None:
    names = getattr(importlib.import_module(module), "__all__", [])
    assert undocumented(reference, (f"{module}.{name}" for name in names)) == []


def test_the_reference_notices_a_new_name(reference: Reference) -> None:
    # What the other tests rely on: a name nobody wrote an entry for is not documented.
    assert not reference.documents("flask_mcp.NotARealName")
    assert not reference.documents("flask_mcp.MCP.not_a_real_method")
    assert reference.documents("flask_mcp.MCP.tool")


# -- the guides link what they mention ------------------------------------------

#: Modules whose public names the guides link, besides the package's own.
LINKED_MODULES = ("flask_mcp.testing", "flask_mcp.pytest_plugin", "flask_mcp.auth", "flask_mcp.testing.schema_checks")


@dataclass(frozen=True)
class PublicName:
    """A public name as a guide mentions it in a literal, and as a role targets it."""

    label: str
    #: Matches the text of a literal that mentions the name.
    mention: re.Pattern[str]
    #: The name's last components (``MCP.tool``): a role links the name when its target ends with them.
    target: str

    def linked_by(self, target: str, mention: str) -> bool:
        """Whether a role to *target* links the name, first mentioned as the literal *mention*."""
        if f".{target}".endswith(f".{self.target}"):
            return True
        # A member, ``ArgumentBinding.BUNDLE``, is linked by a role to a member.
        dotted = re.match(r"(?:flask_mcp\.)?([\w.]+)", mention)
        return dotted is not None and "." in dotted[1] and f".{self.target}." in f".{target}"


def public_api() -> list[PublicName]:
    """The package's names, :class:`~flask_mcp.MCP`'s, and those of :data:`LINKED_MODULES`."""
    names = []
    for module in ("flask_mcp", *LINKED_MODULES):
        prefix = re.escape(f"{module}.")
        for name in importlib.import_module(module).__all__:
            # ``Content`` or ``ToolError("...")``, not ``Content-Type`` or ``MCP_URL_PREFIX``.
            names.append(PublicName(f"{module}.{name}", re.compile(rf"^(?:{prefix})?{name}(?![\w-])"), name))
    for name in dir(flask_mcp.MCP):
        if name.startswith("_"):
            continue
        # ``mcp.tool`` or ``@mcp.tool(...)``; a bare ``tool`` or ``tools`` is too
        # often something else (a JSON key), a bare ``register_tools`` never is.
        bare = "?" if "_" in name else ""
        # Not a dotted name that only starts so (the attribute ``mcp.resource.uri`` of OpenTelemetry).
        mention = re.compile(rf"^(?:@?mcp\.){bare}{name}(?![\w-]|\.\w)")
        names.append(PublicName(f"flask_mcp.MCP.{name}", mention, f"MCP.{name}"))
    return names


def role_targets(text: str) -> list[tuple[int, str]]:
    """Where each cross-reference role of *text* is, and what it targets."""
    targets = []
    for match in ROLE.finditer(text):
        target = match["text"]
        if "<" in target:
            target = target[target.rindex("<") + 1 :].rstrip(">")
        targets.append((match.start(), target.lstrip("~!").strip().removesuffix("()")))
    return targets


def unlinked_mentions(text: str) -> list[str]:
    """The public names *text* mentions as a literal before any role targets them.

    A page links a name at its first mention; the later ones may stay literals.
    """
    literals = [(match.start(), " ".join(match["text"].split())) for match in LITERAL.finditer(text)]
    roles = role_targets(text)
    unlinked = []
    for name in public_api():
        mentions = [(position, literal) for position, literal in literals if name.mention.match(literal)]
        if not mentions:
            continue
        first, literal = mentions[0]
        links = [position for position, target in roles if name.linked_by(target, literal)]
        if not links or links[0] > first:
            line = text.count("\n", 0, first) + 1
            unlinked.append(f"line {line}: {name.label} (``{literal}``)")
    return unlinked


@pytest.mark.parametrize("page", GUIDES, ids=lambda path: path.name)
def test_the_guides_link_the_public_names_they_mention(page: Path) -> None:
    assert unlinked_mentions(page.read_text(encoding="utf-8")) == []


def test_a_mention_before_its_link_is_noticed() -> None:
    assert unlinked_mentions("Call ``mcp.register_tools(defs)``.") == [
        "line 1: flask_mcp.MCP.register_tools (``mcp.register_tools(defs)``)"
    ]
    assert unlinked_mentions("Call ``register_tools``,\nthen :meth:`~flask_mcp.MCP.register_tools`.") == [
        "line 1: flask_mcp.MCP.register_tools (``register_tools``)"
    ]
    assert unlinked_mentions("Call :meth:`~flask_mcp.MCP.register_tools`, then ``register_tools`` again.") == []
    assert unlinked_mentions("Raise :class:`ToolError <flask_mcp.ToolError>`, a ``ToolError(msg)``.") == []
    assert unlinked_mentions("Pass :attr:`~flask_mcp.ArgumentBinding.BUNDLE` or ``ArgumentBinding.SPREAD``.") == []
    assert unlinked_mentions("See :meth:`~flask_mcp.MCP.tool`, then ``MCP(name=...)``.") == [
        "line 1: flask_mcp.MCP (``MCP(name=...)``)"
    ]
    assert unlinked_mentions("The ``Content-Type`` header, the ``tools`` key, ``MCP_URL_PREFIX``.") == []
