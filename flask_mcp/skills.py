"""Serving Agent Skills from folders: each skill's files as resources, and the skills themselves.

``MCP_SKILLS_FOLDER`` (by default a ``skills/`` folder next to the app's
``root_path``, when there is one) holds one folder per skill; each is loaded
when the extension is set up, and ``mcp.add_skill(folder)`` adds one from
code. A skill's files become resources ``skill://<name>/<path>`` (so
permissions and tags apply to them as to any resource), and
``skills/list``, ``skills/get`` and ``resources/directory/read`` describe
them (:mod:`flask_mcp.core.methods.skills`). Sizes and digests are computed
when a skill is loaded; a file changed on disk afterwards is served as it
now is, so reload the app (the debug reloader does) after changing one.
"""

from __future__ import annotations

import typing as t
from pathlib import Path

from .components.build import build_resource
from .components.skills import SKILL_FILE, Skill, SkillFile, load_skill

if t.TYPE_CHECKING:
    from .extension import MCP

__all__ = ["add_skill", "add_skills_folder", "skills_folder_of"]


def _reader(file: SkillFile) -> t.Callable[[], str | bytes]:
    def read() -> str | bytes:
        data = file.path.read_bytes()
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
    skill = load_skill(folder)
    if skill.name in mcp.skills:
        raise ValueError(f"a skill named {skill.name!r} is already served (from {mcp.skills[skill.name].root})")
    for file in skill.files:
        is_entry = file.relative == SKILL_FILE
        resource = build_resource(
            _reader(file),
            file.uri,
            name=skill.frontmatter["name"] if is_entry else file.relative,
            description=skill.frontmatter["description"] if is_entry else None,
            mime_type=file.mime_type,
            size=file.size,
            **options,
        )
        mcp.registry.add_resource(resource)
    mcp.skills[skill.name] = skill
    return skill


def add_skills_folder(mcp: MCP, folder: str | Path, **options: t.Any) -> list[Skill]:
    """Serve every skill in *folder* (each subfolder with a ``SKILL.md``), by name."""
    found = [path for path in sorted(Path(folder).iterdir()) if (path / SKILL_FILE).is_file()]
    return [add_skill(mcp, path, **options) for path in found]


def skills_folder_of(root_path: str, configured: str | None) -> Path | None:
    """The folder of skills: *configured* (``MCP_SKILLS_FOLDER``), else ``<root_path>/skills`` when it exists."""
    if configured:
        return Path(configured)
    default = Path(root_path) / "skills"
    return default if default.is_dir() else None
