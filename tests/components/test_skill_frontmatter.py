"""The frontmatter of a SKILL.md: no aliases, bounded, plain JSON data; one bad skill never breaks the others."""

from __future__ import annotations

import json
import typing as t
from pathlib import Path

import pytest

from flask_mcp import MCP
from flask_mcp.components.skill_frontmatter import MAX_FRONTMATTER_BYTES, SkillError, parse_frontmatter

HEAD = "name: a\ndescription: b\n"

#: Nine levels of nine aliases: a few hundred bytes that expand to 9**9 strings if aliases are followed.
LAUGHS = (
    HEAD
    + 'l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    + "".join(f"l{level}: &l{level} [{','.join([f'*l{level - 1}'] * 9)}]\n" for level in range(1, 9))
)


@pytest.mark.parametrize(
    ("frontmatter", "message"),
    [
        (LAUGHS, "aliases"),
        (HEAD + "loop: &loop [*loop]\n", "aliases"),  # refers to itself: no JSON can carry it
        (HEAD + "base: &base {x: 1}\nmerged:\n  <<: *base\n", "aliases"),
        (HEAD + "big: " + "x" * MAX_FRONTMATTER_BYTES + "\n", "longer than"),
        (HEAD + "ratio: .nan\n", "JSON cannot carry"),
        (HEAD + "limit: -.inf\n", "JSON cannot carry"),
        (HEAD + "blob: !!binary aGVsbG8=\n", "JSON cannot carry"),
        (HEAD + "set: !!set {a: null}\n", "JSON cannot carry"),
        (HEAD + "1: integer key\n", "key that is not a string"),
        (HEAD + "deep: " + "[" * 40 + "]" * 40 + "\n", "nests deeper"),
        (HEAD + "deeper: " + "[" * 5000 + "]" * 5000 + "\n", "cannot be read"),
        (HEAD + "huge: " + "9" * 5000 + "\n", "cannot be read"),
    ],
)
def test_a_frontmatter_that_would_break_a_listing_is_refused(frontmatter: str, message: str) -> None:
    with pytest.raises(SkillError, match=message):
        parse_frontmatter(f"---\n{frontmatter}---\n")


def test_an_anchor_without_an_alias_and_plain_data_are_accepted() -> None:
    parsed = parse_frontmatter("---\nname: a\ndescription: &d b\nmetadata: {version: '1.0', tags: [x, y]}\n---\n")
    assert parsed == {"name": "a", "description": "b", "metadata": {"version": "1.0", "tags": ["x", "y"]}}
    json.dumps(parsed, allow_nan=False)


def _skill(root: Path, name: str, frontmatter: str) -> None:
    (root / name).mkdir(parents=True)
    (root / name / "SKILL.md").write_text(f"---\n{frontmatter}---\nBody.\n")


def test_one_bad_skill_does_not_keep_the_others_from_being_served(
    tmp_path: Path, make_app: t.Any, make_client: t.Any, caplog: pytest.LogCaptureFixture
) -> None:
    skills = tmp_path / "skills"
    _skill(skills, "aaa-laughs", LAUGHS.replace("name: a\n", "name: aaa-laughs\n"))
    _skill(skills, "bbb-loop", "name: bbb-loop\ndescription: x\nloop: &loop [*loop]\n")
    _skill(skills, "ccc-good", "name: ccc-good\ndescription: Works\n")
    app = make_app(MCP(name="mixed"), MCP_SKILLS_FOLDER=str(skills))
    client = make_client(app, era="modern")
    listed = client.request("skills/list", {})
    assert [skill["uri"] for skill in listed["skills"]] == ["skill://ccc-good/SKILL.md"]
    assert len(json.dumps(listed)) < 4096
    # The log names each skill left out, and why.
    assert "aaa-laughs is not served" in caplog.text and "bbb-loop is not served" in caplog.text
    assert "aliases (*name) are not allowed" in caplog.text
