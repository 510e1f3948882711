"""Serving Agent Skills from folders: each skill's files as resources, and the skills themselves.

``MCP_SKILLS_FOLDER`` (by default a ``skills/`` folder next to the app's
``root_path``, when there is one) holds one folder per skill; each is loaded
when the extension is set up, and ``mcp.add_skill(folder)`` adds one from
code. A skill's files become resources ``skill://<name>/<path>`` (so
permissions and tags apply to them as to any resource), and
``skills/list``, ``skills/get`` and ``resources/directory/read`` describe
them (:mod:`flask_mcp.core.methods.skills`). Sizes and digests are computed
when a skill is loaded. In debug mode (``app.debug``) a :class:`SkillWatch`
looks at the skills' files before requests (at most once a second) and
loads again a skill whose files changed, were added or were removed: the new
skill is loaded whole and then swapped in for the old in one step, so a read
meanwhile never finds a file of neither. Out of debug mode a file changed on
disk is served as it now is, with the size and digest of the start, until
the app starts again. Whenever it is, a file is read again from the skill's
folder without following any link, and only up to ``MCP_SKILL_FILE_MAX_BYTES``
(:mod:`flask_mcp.components.skill_files`).
"""

from __future__ import annotations

import logging
import threading
import time
import typing as t
from pathlib import Path

from flask import current_app

from ..components.build import build_resource
from ..components.skill_files import DEFAULT_MAX_FILE_BYTES
from ..components.skills import SKILL_FILE, Skill, SkillError, SkillFile, fingerprint, load_skill
from ..protocol.errors import NotFoundError

if t.TYPE_CHECKING:
    from ..components.model import Resource
    from ..extension import MCP

__all__ = ["SkillWatch", "add_skill", "add_skills_folder", "skills_folder_of"]

logger = logging.getLogger("flask_mcp")


def _reader(skill: Skill, file: SkillFile) -> t.Callable[[], str | bytes]:
    def read() -> str | bytes:
        try:
            data = skill.read(file)
        except OSError as exc:  # replaced by a link, grown past the bound, gone: not served, and the log says why
            logger.warning("skill %r: %s was not served: %s", skill.name, file.relative, exc)
            raise NotFoundError(f"Resource not found: {file.uri}") from None
        if file.mime_type.startswith("text/"):
            try:
                return data.decode("utf-8")
            except UnicodeDecodeError:
                return data
        return data

    read.__name__ = "read_skill_file"
    return read


def add_skill(mcp: MCP, folder: str | Path, **options: t.Any) -> Skill:
    """Load the skill in *folder* and serve it from *mcp*: its files as resources.

    :param options: resource options for every file (``permissions``, ``tags``...).
    :raises ~flask_mcp.components.skills.SkillError: not a valid skill.
    :raises ValueError: a skill of that name is already served.
    """
    seen = fingerprint(Path(folder).resolve())  # before reading: a change made meanwhile shows next time
    skill = load_skill(folder, mcp.skill_watch.max_file_bytes)
    if skill.name in mcp.skills:
        raise ValueError(f"a skill named {skill.name!r} is already served (from {mcp.skills[skill.name].root})")
    mcp.registry.replace("resources", (), _resources(skill, options))
    mcp.skills[skill.name] = skill
    mcp.skill_watch.seen(skill, seen, options)
    return skill


def _resources(skill: Skill, options: dict[str, t.Any]) -> dict[str, Resource]:
    """The resources serving *skill*'s files, by URI."""
    resources = {}
    for file in skill.files:
        is_entry = file.relative == SKILL_FILE
        resources[file.uri] = t.cast(
            "Resource",
            build_resource(
                _reader(skill, file),
                file.uri,
                name=skill.frontmatter["name"] if is_entry else file.relative,
                description=skill.frontmatter["description"] if is_entry else None,
                mime_type=file.mime_type,
                size=file.size,
                **options,
            ),
        )
    return resources


class SkillWatch:
    """Loads again the skills whose files changed on disk (in debug mode), and those loaded under another bound.

    :param mcp: the extension whose skills it watches.
    :param interval: seconds between two looks at the files.
    """

    def __init__(self, mcp: MCP, interval: float = 1.0) -> None:
        self.mcp = mcp
        self.interval = interval
        #: The largest skill file served, in bytes (``MCP_SKILL_FILE_MAX_BYTES`` of the first app set up).
        self.max_file_bytes = DEFAULT_MAX_FILE_BYTES
        self._bound_set = False
        self._prints: dict[str, tuple[tuple[str, int, int], ...]] = {}
        self._options: dict[str, dict[str, t.Any]] = {}
        self._looked = 0.0
        # One request at a time looks and reloads; the others go on with what is served.
        self._looking = threading.Lock()

    def seen(self, skill: Skill, found: tuple[tuple[str, int, int], ...], options: dict[str, t.Any]) -> None:
        """Note what *skill*'s files were when it was loaded, and the options it is served with."""
        self._prints[skill.name] = found
        self._options[skill.name] = options

    def bound(self, max_file_bytes: int) -> None:
        """Serve no skill file larger than *max_file_bytes*: the skills loaded before are loaded again under it.

        :raises RuntimeError: another app sharing the extension set a different bound.
        """
        if self._bound_set and max_file_bytes != self.max_file_bytes:
            raise RuntimeError(
                "apps sharing one MCP extension must agree on MCP_SKILL_FILE_MAX_BYTES; use one MCP per app to differ"
            )
        self._bound_set = True
        if max_file_bytes == self.max_file_bytes:
            return
        self.max_file_bytes = max_file_bytes
        with self._looking:
            for skill in list(self.mcp.skills.values()):
                self._reload(skill, fingerprint(skill.root), "MCP_SKILL_FILE_MAX_BYTES is set")

    def __call__(self) -> None:
        """Look at the skills' files (in debug mode, at most every :attr:`interval` seconds); reload changed ones."""
        if not self.mcp.skills or not current_app.debug:
            return
        now = time.monotonic()
        if now - self._looked < self.interval or not self._looking.acquire(blocking=False):
            return
        try:
            self._looked = now
            for name, skill in list(self.mcp.skills.items()):
                found = fingerprint(skill.root)
                if found != self._prints.get(name):
                    self._reload(skill, found, "its files changed")
        finally:
            self._looking.release()

    def _reload(self, old: Skill, found: tuple[tuple[str, int, int], ...], why: str) -> None:
        # The new skill and its resources are made whole first, then swapped in
        # for the old in one step: a read meanwhile finds the old file or the new.
        try:
            skill = load_skill(old.root, self.max_file_bytes)
            if skill.name != old.name:
                raise SkillError(f"its name is now {skill.name!r}")
            resources = _resources(skill, self._options.get(old.name, {}))
            self.mcp.registry.replace("resources", [file.uri for file in old.files], resources)
        except (SkillError, OSError, ValueError) as exc:  # mid-edit: keep serving what was, and say why
            logger.warning("skill %r was not reloaded: %s", old.name, exc)
            self._prints[old.name] = found  # not again until it changes again
            return
        self.mcp.skills[skill.name] = skill
        self._prints[skill.name] = found
        logger.info("skill %r reloaded: %s", skill.name, why)


def add_skills_folder(mcp: MCP, folder: str | Path, **options: t.Any) -> list[Skill]:
    """Serve every skill in *folder* (each subfolder with a ``SKILL.md``), by name.

    A subfolder that is not a valid skill is not served, and the log says
    why: one bad skill does not keep the others (or the app) from being served.
    """
    found = [path for path in sorted(Path(folder).iterdir()) if (path / SKILL_FILE).is_file()]
    served = []
    for path in found:
        try:
            served.append(add_skill(mcp, path, **options))
        except (SkillError, ValueError) as exc:
            logger.error("the skill in %s is not served: %s", path, exc)
    return served


def skills_folder_of(root_path: str, configured: str | None) -> Path | None:
    """The folder of skills: *configured* (``MCP_SKILLS_FOLDER``), else ``<root_path>/skills`` when it exists."""
    if configured:
        return Path(configured)
    default = Path(root_path) / "skills"
    return default if default.is_dir() else None
