"""Agent Skills served as MCP resources (the ``io.modelcontextprotocol/skills`` extension, SEP-2640).

A skill is a folder with a ``SKILL.md`` (YAML frontmatter with ``name`` and
``description``, then instructions) and the files it points to. Each file
is a resource ``skill://<name>/<path>``; ``skills/list`` and ``skills/get``
describe a skill by its frontmatter and a manifest of its files (each with
its size and SHA-256 digest, computed once when the skill is loaded; its
:func:`fingerprint` tells cheaply whether they changed since).
Folder walks never leave the skill's folder: a symbolic link that points
outside it is not served. Every file is read through
:mod:`~flask_mcp.components.skill_files`, when the skill is loaded and at
each read: no link is followed then, and no file larger than the bound
(``MCP_SKILL_FILE_MAX_BYTES``) is served. The frontmatter is bounded by
:mod:`~flask_mcp.components.skill_frontmatter`.
"""

from __future__ import annotations

import dataclasses
import logging
import mimetypes
import re
import typing as t
from pathlib import Path

from . import skill_frontmatter
from .skill_files import DEFAULT_MAX_FILE_BYTES, FolderId, digest_file, folder_id, read_file
from .skill_frontmatter import SkillError, parse_frontmatter

__all__ = [
    "SKILL_FILE",
    "Skill",
    "SkillError",
    "SkillFile",
    "fingerprint",
    "load_skill",
    "parse_frontmatter",
]

logger = logging.getLogger("flask_mcp")

#: The file that makes a folder a skill.
SKILL_FILE = skill_frontmatter.SKILL_FILE
#: Agent Skills names: lowercase letters, digits and single hyphens, at most 64 characters.
_NAME = re.compile(r"^(?!.*--)[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$")


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
    #: Where it really is in the skill's folder (``relative``, unless it is a link to another file of the skill).
    location: str = ""

    def manifest(self) -> dict[str, t.Any]:
        """The ``SkillResource`` entry."""
        return {"uri": self.uri, "digest": self.digest, "size": self.size}


#: Whether a caller is shown the file with this URI (see :meth:`Skill.entry`).
Shown = t.Callable[[str], bool]


def _everything(uri: str) -> bool:
    return True


@dataclasses.dataclass(frozen=True)
class Skill:
    """A loaded skill: its frontmatter and its files."""

    name: str
    root: Path
    frontmatter: dict[str, t.Any]
    files: tuple[SkillFile, ...]
    #: The folder it was loaded from, on disk (:func:`~flask_mcp.components.skill_files.folder_id`).
    root_id: FolderId = (0, 0)
    #: The largest file it serves, in bytes (``MCP_SKILL_FILE_MAX_BYTES`` when it was loaded).
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES

    @property
    def root_uri(self) -> str:
        """``skill://<name>``, the skill's folder."""
        return f"skill://{self.name}"

    @property
    def uri(self) -> str:
        """The URI of its ``SKILL.md``."""
        return f"{self.root_uri}/{SKILL_FILE}"

    def entry(self, shown: Shown = _everything) -> dict[str, t.Any] | None:
        """The ``Skill`` object of ``skills/list`` and ``skills/get``, as a caller who is *shown* some files sees it.

        ``None`` when the caller is not shown its ``SKILL.md``: then neither
        its frontmatter nor any of its files.
        """
        if not shown(self.uri):
            return None
        resources = [file.manifest() for file in self.files if shown(file.uri)]
        return {"uri": self.uri, "frontmatter": self.frontmatter, "resources": resources}

    def directory(self, uri: str, shown: Shown = _everything) -> list[dict[str, t.Any]] | None:
        """The direct children of the folder *uri* of this skill (files and folders); ``None``: no such folder.

        Only what the caller is *shown*: a folder holding nothing it is shown
        is no folder, and nothing of a skill whose ``SKILL.md`` it is not shown is.
        """
        if uri != self.root_uri and not uri.startswith(self.root_uri + "/"):
            return None
        if not shown(self.uri):
            return None
        prefix = uri[len(self.root_uri) :].strip("/")
        children: dict[str, dict[str, t.Any]] = {}
        for file in self.files:
            if (prefix and not file.relative.startswith(prefix + "/")) or not shown(file.uri):
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

    def read(self, file: SkillFile) -> bytes:
        """The contents of *file* now: opened from the skill's folder through no link, at most :attr:`max_file_bytes`.

        :raises ~flask_mcp.components.skill_files.FileRefused: why it is not served.
        :raises OSError: it is gone, or cannot be read.
        """
        return read_file(self.root, self.root_id, file.location or file.relative, self.max_file_bytes)


def _mime_type(path: Path) -> str:
    if path.name == SKILL_FILE or path.suffix == ".md":
        return "text/markdown"
    return mimetypes.guess_type(path.name)[0] or "application/octet-stream"


def load_skill(folder: str | Path, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES) -> Skill:
    """Read the skill in *folder*: its frontmatter, and every file's size and digest.

    A file larger than *max_file_bytes*, or that cannot be opened without
    following a link out of the skill, is not served, and the log says why.

    :raises SkillError: no ``SKILL.md`` (or one larger than *max_file_bytes*), bad
        frontmatter, or a name that is not a valid skill name or not the folder's.
    """
    root = Path(folder).resolve()
    if not (root / SKILL_FILE).is_file():
        raise SkillError(f"{root} has no {SKILL_FILE}")
    try:
        root_id = folder_id(root)
        head = read_file(root, root_id, SKILL_FILE, max_file_bytes)
    except OSError as exc:
        raise SkillError(f"{root}: {SKILL_FILE} cannot be served: {exc}") from None
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        raise SkillError(f"{root}: {SKILL_FILE} is not UTF-8 text") from None
    frontmatter = parse_frontmatter(text)
    name = frontmatter["name"]
    if not _NAME.match(name):
        raise SkillError(f"skill name {name!r}: lowercase letters, digits and single hyphens, at most 64")
    if name != root.name:
        raise SkillError(f"skill name {name!r} must be the name of its folder, {root.name!r}")
    files = []
    for path, real, relative in _walk(root):
        location = real.relative_to(root).as_posix()
        try:
            size, digest = digest_file(root, root_id, location, max_file_bytes)
        except OSError as exc:
            logger.warning("skill %r: %s is not served: %s", name, relative, exc)
            continue
        files.append(
            SkillFile(
                path=real,
                relative=relative,
                uri=f"skill://{name}/{relative}",
                size=size,
                digest=digest,
                mime_type=_mime_type(path),
                location=location,
            )
        )
    return Skill(
        name=name,
        root=root,
        frontmatter=frontmatter,
        files=tuple(files),
        root_id=root_id,
        max_file_bytes=max_file_bytes,
    )


def _walk(root: Path) -> t.Iterator[tuple[Path, Path, str]]:
    """The files a skill serves: each path, where it really is, and its path in the skill."""
    for path in sorted(root.rglob("*")):
        real = path.resolve()
        if not path.is_file() or not real.is_relative_to(root) or real == root:
            continue  # folders, links leading out of the skill
        if any(part.startswith(".") for part in (*path.relative_to(root).parts, *real.relative_to(root).parts)):
            continue  # hidden files, and links to them
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
