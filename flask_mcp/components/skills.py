"""Agent Skills served as MCP resources (the ``io.modelcontextprotocol/skills`` extension, SEP-2640).

A skill is a folder with a ``SKILL.md`` (YAML frontmatter with ``name`` and
``description``, then instructions) and the files it points to. Each file
is a resource ``skill://<name>/<path>``; ``skills/list`` and ``skills/get``
describe a skill by its frontmatter and a manifest of its files (each with
its size and SHA-256 digest, computed once when the skill is loaded; its
:func:`fingerprint` tells cheaply whether they changed since).
Folder walks never leave the skill's folder: a symbolic link that points
outside it is not served.
"""

from __future__ import annotations

import dataclasses
import hashlib
import mimetypes
import re
import typing as t
from pathlib import Path

import yaml

__all__ = ["SKILL_FILE", "Skill", "SkillError", "SkillFile", "fingerprint", "load_skill", "parse_frontmatter"]

#: The file that makes a folder a skill.
SKILL_FILE = "SKILL.md"
#: Agent Skills names: lowercase letters, digits and single hyphens, at most 64 characters.
_NAME = re.compile(r"^(?!.*--)[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$")
_FRONTMATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


class SkillError(ValueError):
    """A folder that is not a valid skill; the message says why."""


class _Yaml12Loader(yaml.SafeLoader):
    """YAML as the 1.2 core schema reads it: ``yes``, ``on`` and dates stay strings, as other hosts parse them."""


_DROPPED = ("tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:bool")
_Yaml12Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in _DROPPED]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def parse_frontmatter(text: str) -> dict[str, t.Any]:
    """The YAML frontmatter at the start of a ``SKILL.md``.

    :raises SkillError: no frontmatter, not a mapping, or no ``name``/``description``.
    """
    found = _FRONTMATTER.match(text)
    if found is None:
        raise SkillError(f"{SKILL_FILE} must start with YAML frontmatter between '---' lines")
    try:
        data = yaml.load(found.group(1), Loader=_Yaml12Loader)
    except yaml.YAMLError as exc:
        raise SkillError(f"the frontmatter of {SKILL_FILE} is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise SkillError(f"the frontmatter of {SKILL_FILE} must be a mapping")
    for key in ("name", "description"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise SkillError(f"the frontmatter of {SKILL_FILE} needs a non-empty {key!r}")
    return data


@dataclasses.dataclass(frozen=True)
class SkillFile:
    """One file of a skill, as its manifest lists it."""

    path: Path
    #: Its path in the skill, with ``/`` separators (``references/FORMS.md``).
    relative: str
    uri: str
    size: int
    digest: str
    mime_type: str

    def manifest(self) -> dict[str, t.Any]:
        """The ``SkillResource`` entry."""
        return {"uri": self.uri, "digest": self.digest, "size": self.size}


@dataclasses.dataclass(frozen=True)
class Skill:
    """A loaded skill: its frontmatter and its files."""

    name: str
    root: Path
    frontmatter: dict[str, t.Any]
    files: tuple[SkillFile, ...]

    @property
    def root_uri(self) -> str:
        """``skill://<name>``, the skill's folder."""
        return f"skill://{self.name}"

    @property
    def uri(self) -> str:
        """The URI of its ``SKILL.md``."""
        return f"{self.root_uri}/{SKILL_FILE}"

    def entry(self) -> dict[str, t.Any]:
        """The ``Skill`` object of ``skills/list`` and ``skills/get``."""
        return {"uri": self.uri, "frontmatter": self.frontmatter, "resources": [f.manifest() for f in self.files]}

    def directory(self, uri: str) -> list[dict[str, t.Any]] | None:
        """The direct children of the folder *uri* of this skill (files and folders); ``None``: no such folder."""
        if uri != self.root_uri and not uri.startswith(self.root_uri + "/"):
            return None
        prefix = uri[len(self.root_uri) :].strip("/")
        children: dict[str, dict[str, t.Any]] = {}
        for file in self.files:
            if prefix and not file.relative.startswith(prefix + "/"):
                continue
            rest = file.relative[len(prefix) + 1 :] if prefix else file.relative
            head, _, tail = rest.partition("/")
            child_uri = f"{self.root_uri}/{prefix + '/' if prefix else ''}{head}"
            if tail:
                children.setdefault(head, {"uri": child_uri, "name": head, "mimeType": "inode/directory"})
            else:
                children[head] = {"uri": child_uri, "name": head, "mimeType": file.mime_type}
        if not children and prefix:
            return None
        return [children[name] for name in sorted(children)]


def _mime_type(path: Path) -> str:
    if path.name == SKILL_FILE or path.suffix == ".md":
        return "text/markdown"
    return mimetypes.guess_type(path.name)[0] or "application/octet-stream"


def load_skill(folder: str | Path) -> Skill:
    """Read the skill in *folder*: its frontmatter, and every file's size and digest.

    :raises SkillError: no ``SKILL.md``, bad frontmatter, or a name that is
        not a valid skill name or not the folder's.
    """
    root = Path(folder).resolve()
    skill_md = root / SKILL_FILE
    if not skill_md.is_file():
        raise SkillError(f"{root} has no {SKILL_FILE}")
    frontmatter = parse_frontmatter(skill_md.read_text(encoding="utf-8"))
    name = frontmatter["name"]
    if not _NAME.match(name):
        raise SkillError(f"skill name {name!r}: lowercase letters, digits and single hyphens, at most 64")
    if name != root.name:
        raise SkillError(f"skill name {name!r} must be the name of its folder, {root.name!r}")
    files = []
    for path, real, relative in _walk(root):
        data = real.read_bytes()
        files.append(
            SkillFile(
                path=real,
                relative=relative,
                uri=f"skill://{name}/{relative}",
                size=len(data),
                digest="sha256:" + hashlib.sha256(data).hexdigest(),
                mime_type=_mime_type(path),
            )
        )
    return Skill(name=name, root=root, frontmatter=frontmatter, files=tuple(files))


def _walk(root: Path) -> t.Iterator[tuple[Path, Path, str]]:
    """The files a skill serves: each path, where it really is, and its path in the skill."""
    for path in sorted(root.rglob("*")):
        real = path.resolve()
        hidden = any(part.startswith(".") for part in path.relative_to(root).parts)
        if not path.is_file() or not real.is_relative_to(root) or hidden:
            continue  # folders, links leading out of the skill, hidden files
        yield path, real, path.relative_to(root).as_posix()


def fingerprint(root: Path) -> tuple[tuple[str, int, int], ...]:
    """What the files of the skill at *root* are now (path, size, modification time): cheap, no file read.

    Two equal fingerprints mean the digests computed for the first still hold.
    """
    found = []
    for _, real, relative in _walk(root):
        try:
            stat = real.stat()
        except OSError:  # removed meanwhile: the next look sees it gone
            continue
        found.append((relative, stat.st_size, stat.st_mtime_ns))
    return tuple(found)
