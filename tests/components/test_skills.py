"""Agent Skills: folders loaded into a manifest, served as resources and by the skills methods."""

from __future__ import annotations

import hashlib
import os
import typing as t
from pathlib import Path

import pytest
from flask import Flask

from flask_mcp import MCP, ScopeRequired
from flask_mcp.components.skills import SkillError, load_skill, parse_frontmatter

SKILLS = "io.modelcontextprotocol/skills"


def write_skill(root: Path, name: str = "pdf-tools", frontmatter: str | None = None) -> Path:
    folder = root / name
    (folder / "references").mkdir(parents=True)
    head = frontmatter if frontmatter is not None else f"name: {name}\ndescription: Work with PDF files\n"
    (folder / "SKILL.md").write_text(f"---\n{head}---\n\nRead references/FORMS.md first.\n")
    (folder / "references" / "FORMS.md").write_text("Fields: name, date.\n")
    (folder / "fill.py").write_bytes(b"print('fill')\n")
    return folder


def test_a_skill_is_its_frontmatter_and_a_manifest_of_its_files(tmp_path: Path) -> None:
    folder = write_skill(tmp_path)
    skill = load_skill(folder)
    entry = skill.entry()
    assert entry["uri"] == "skill://pdf-tools/SKILL.md"
    assert entry["frontmatter"] == {"name": "pdf-tools", "description": "Work with PDF files"}
    files = {resource["uri"]: resource for resource in entry["resources"]}
    assert set(files) == {
        "skill://pdf-tools/SKILL.md",
        "skill://pdf-tools/references/FORMS.md",
        "skill://pdf-tools/fill.py",
    }
    forms = (folder / "references" / "FORMS.md").read_bytes()
    assert files["skill://pdf-tools/references/FORMS.md"] == {
        "uri": "skill://pdf-tools/references/FORMS.md",
        "digest": "sha256:" + hashlib.sha256(forms).hexdigest(),
        "size": len(forms),
    }


def test_frontmatter_reads_as_yaml_1_2(tmp_path: Path) -> None:
    parsed = parse_frontmatter("---\nname: a\ndescription: b\nreleased: 2024-01-01\nlegacy: yes\nstable: true\n---\n")
    # Dates and yes/no stay strings, as a YAML 1.2 host reads them; true is a boolean.
    assert parsed == {"name": "a", "description": "b", "released": "2024-01-01", "legacy": "yes", "stable": True}


@pytest.mark.parametrize(
    ("frontmatter", "message"),
    [
        ("description: no name\n", "needs a non-empty 'name'"),
        ("name: pdf-tools\n", "needs a non-empty 'description'"),
        ("name: other-name\ndescription: x\n", "must be the name of its folder"),
        ("name: [broken\ndescription: x\n", "not valid YAML"),
    ],
)
def test_an_invalid_skill_is_refused_saying_why(tmp_path: Path, frontmatter: str, message: str) -> None:
    with pytest.raises(SkillError, match=message):
        load_skill(write_skill(tmp_path, frontmatter=frontmatter))


def test_a_bad_name_and_a_folder_without_skill_md_are_refused(tmp_path: Path) -> None:
    with pytest.raises(SkillError, match="lowercase letters"):
        load_skill(write_skill(tmp_path, "Bad--Name", "name: Bad--Name\ndescription: x\n"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(SkillError, match=r"has no SKILL\.md"):
        load_skill(tmp_path / "empty")


def test_links_out_of_the_skill_and_hidden_files_are_not_served(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "skills")
    secret = tmp_path / "secret.txt"
    secret.write_text("do not serve")
    os.symlink(secret, folder / "leak.txt")
    (folder / ".env").write_text("TOKEN=x")
    uris = {resource["uri"] for resource in load_skill(folder).entry()["resources"]}
    assert not any(uri.endswith(("leak.txt", ".env")) for uri in uris)


@pytest.fixture
def skills_app(tmp_path: Path, make_app: t.Any) -> Flask:
    write_skill(tmp_path / "skills")
    mcp = MCP(name="skilled")

    @mcp.tool()
    def fill(name: str) -> str:
        return name

    return t.cast(Flask, make_app(mcp, MCP_SKILLS_FOLDER=str(tmp_path / "skills")))


def test_skills_are_declared_listed_got_and_read(skills_app: Flask, make_client: t.Any) -> None:
    client = make_client(skills_app, era="modern")
    capabilities = client.discover()["capabilities"]
    assert capabilities["extensions"][SKILLS] == {"directoryRead": True} and "resources" in capabilities
    listed = client.request("skills/list", {})
    assert [skill["uri"] for skill in listed["skills"]] == ["skill://pdf-tools/SKILL.md"]
    assert "ttlMs" in listed and "cacheScope" in listed
    got = client.request("skills/get", {"uri": "skill://pdf-tools/SKILL.md"})
    assert got["skill"] == listed["skills"][0]
    assert client.error("skills/get", {"uri": "skill://nope/SKILL.md"})["code"] == -32602
    (text,) = client.read_resource("skill://pdf-tools/SKILL.md")
    assert text["mimeType"] == "text/markdown" and text["text"].startswith("---\nname: pdf-tools")
    resources = {resource["uri"]: resource for resource in client.list_resources()}
    entry = resources["skill://pdf-tools/SKILL.md"]
    assert (entry["name"], entry["description"]) == ("pdf-tools", "Work with PDF files")


def test_a_skills_folders_are_read_as_directories(skills_app: Flask, make_client: t.Any) -> None:
    client = make_client(skills_app, era="modern")
    root = client.request("resources/directory/read", {"uri": "skill://pdf-tools"})["resources"]
    assert [(child["name"], child["mimeType"]) for child in root] == [
        ("SKILL.md", "text/markdown"),
        ("fill.py", "text/x-python"),
        ("references", "inode/directory"),
    ]
    nested = client.request("resources/directory/read", {"uri": "skill://pdf-tools/references"})["resources"]
    assert [child["uri"] for child in nested] == ["skill://pdf-tools/references/FORMS.md"]
    for not_a_folder in ("skill://pdf-tools/SKILL.md", "skill://other"):
        assert client.error("resources/directory/read", {"uri": not_a_folder})["code"] == -32602


def test_a_skill_added_in_code_takes_resource_options(tmp_path: Path, make_app: t.Any, make_client: t.Any) -> None:
    mcp = MCP(name="guarded")
    mcp.add_skill(write_skill(tmp_path), permissions=[ScopeRequired("skills")])
    with pytest.raises(ValueError, match="already served"):
        mcp.add_skill(tmp_path / "pdf-tools")
    app = make_app(mcp, MCP_AUTH_TOKENS={"reader": {"subject": "r", "scopes": ["skills"]}, "other": "o"})
    assert make_client(app, era="modern", token="reader").read_resource("skill://pdf-tools/fill.py")
    denied = make_client(app, era="modern", token="other")
    assert denied.error("resources/read", {"uri": "skill://pdf-tools/fill.py"})["code"] == -31403


def test_a_skills_folder_beside_the_app_is_served_by_default(tmp_path: Path) -> None:
    write_skill(tmp_path / "skills")
    app = Flask("beside", root_path=str(tmp_path))
    mcp = MCP(name="default-folder")
    mcp.init_app(app)
    assert set(mcp.skills) == {"pdf-tools"}


def test_a_handshake_client_finds_the_extension_and_the_files(skills_app: Flask, make_client: t.Any) -> None:
    client = make_client(skills_app)
    assert client.initialize()["capabilities"]["extensions"] == {SKILLS: {"directoryRead": True}}
    assert client.request("skills/get", {"uri": "skill://pdf-tools/SKILL.md"})["skill"]["frontmatter"]["name"] == (
        "pdf-tools"
    )
    (forms,) = client.read_resource("skill://pdf-tools/references/FORMS.md")
    assert forms["text"] == "Fields: name, date.\n"


def _manifest(client: t.Any) -> dict[str, dict[str, t.Any]]:
    listed = client.request("skills/list", {})["skills"]
    return {resource["uri"]: resource for resource in listed[0]["resources"]}


def test_in_debug_a_changed_skill_is_loaded_again(
    tmp_path: Path, make_app: t.Any, make_client: t.Any, caplog: pytest.LogCaptureFixture
) -> None:
    folder = write_skill(tmp_path / "skills")
    mcp = MCP(name="watched")
    app = make_app(mcp, MCP_SKILLS_FOLDER=str(tmp_path / "skills"))
    app.debug = True
    mcp.skill_watch.interval = 0  # look before every request
    client = make_client(app, era="modern")
    before = _manifest(client)
    (folder / "fill.py").write_bytes(b"print('fill, and more')\n")
    (folder / "references" / "DATES.md").write_text("ISO 8601.\n")
    (folder / "references" / "FORMS.md").unlink()
    after = _manifest(client)
    assert set(after) == {
        "skill://pdf-tools/SKILL.md",
        "skill://pdf-tools/fill.py",
        "skill://pdf-tools/references/DATES.md",
    }
    fill = after["skill://pdf-tools/fill.py"]
    assert fill["digest"] == "sha256:" + hashlib.sha256(b"print('fill, and more')\n").hexdigest()
    assert fill["digest"] != before["skill://pdf-tools/fill.py"]["digest"]
    (dates,) = client.read_resource("skill://pdf-tools/references/DATES.md")
    assert dates["text"] == "ISO 8601.\n"
    assert client.error("resources/read", {"uri": "skill://pdf-tools/references/FORMS.md"})["code"] == -32602
    # A skill broken mid-edit keeps being served as it was, and the log says why.
    (folder / "SKILL.md").write_text("---\nname: pdf-tools\n---\n")
    assert _manifest(client) == after
    assert "skill 'pdf-tools' was not reloaded" in caplog.text


def test_out_of_debug_the_manifest_is_the_one_of_the_start(tmp_path: Path, make_app: t.Any, make_client: t.Any) -> None:
    folder = write_skill(tmp_path / "skills")
    mcp = MCP(name="unwatched")
    app = make_app(mcp, MCP_SKILLS_FOLDER=str(tmp_path / "skills"))
    mcp.skill_watch.interval = 0
    client = make_client(app, era="modern")
    before = _manifest(client)
    (folder / "fill.py").write_bytes(b"print('changed')\n")
    assert _manifest(client) == before


def test_a_reloaded_skill_is_swapped_in_whole(tmp_path: Path, make_app: t.Any, make_client: t.Any) -> None:
    folder = write_skill(tmp_path / "skills")
    mcp = MCP(name="swapped")
    app = make_app(mcp, MCP_SKILLS_FOLDER=str(tmp_path / "skills"))
    app.debug = True
    mcp.skill_watch.interval = 0
    unchanged = "skill://pdf-tools/references/FORMS.md"
    # Whenever the served resources change, a read at that moment must still find the unchanged file.
    missing: list[str] = []
    mcp.registry.on_change(lambda kind: missing.extend([kind] if unchanged not in mcp.resources else []))
    (folder / "fill.py").write_bytes(b"print('changed')\n")
    client = make_client(app, era="modern")
    manifest = _manifest(client)
    assert (
        manifest["skill://pdf-tools/fill.py"]["digest"] == "sha256:" + hashlib.sha256(b"print('changed')\n").hexdigest()
    )
    assert missing == []
    (forms,) = client.read_resource(unchanged)
    assert forms["text"] == "Fields: name, date.\n"
