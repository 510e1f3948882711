"""A skill's files are read through no link, bounded in size, at load and at every read."""

from __future__ import annotations

import os
import shutil
import typing as t
from pathlib import Path

import pytest
from flask import Flask

from flask_mcp import MCP
from flask_mcp.components.skill_files import FileRefused, digest_file, folder_id, read_file
from flask_mcp.components.skills import load_skill

from .test_skills import write_skill

BOUND = 1024


def test_a_file_over_the_bound_is_neither_listed_nor_read(
    tmp_path: Path, make_app: t.Any, make_client: t.Any, caplog: pytest.LogCaptureFixture
) -> None:
    folder = write_skill(tmp_path / "skills")
    (folder / "big.bin").write_bytes(b"x" * (BOUND + 1))
    (folder / "edge.bin").write_bytes(b"x" * BOUND)
    app = make_app(MCP(name="bounded"), MCP_SKILLS_FOLDER=str(tmp_path / "skills"), MCP_SKILL_FILE_MAX_BYTES=BOUND)
    client = make_client(app, era="modern")
    (skill,) = client.request("skills/list", {})["skills"]
    uris = {resource["uri"] for resource in skill["resources"]}
    assert "skill://pdf-tools/edge.bin" in uris and "skill://pdf-tools/big.bin" not in uris
    assert "skill://pdf-tools/big.bin" not in {resource["uri"] for resource in client.list_resources()}
    assert client.error("resources/read", {"uri": "skill://pdf-tools/big.bin"})["code"] == -32602
    assert "big.bin is not served" in caplog.text and f"more than MCP_SKILL_FILE_MAX_BYTES ({BOUND})" in caplog.text


def test_a_skill_added_before_the_app_takes_the_apps_bound(tmp_path: Path, make_app: t.Any) -> None:
    folder = write_skill(tmp_path)
    (folder / "big.bin").write_bytes(b"x" * (BOUND + 1))
    mcp = MCP(name="early")
    mcp.add_skill(folder)
    assert "big.bin" in {file.relative for file in mcp.skills["pdf-tools"].files}  # the default bound, for now
    make_app(mcp, MCP_SKILL_FILE_MAX_BYTES=BOUND)
    assert "big.bin" not in {file.relative for file in mcp.skills["pdf-tools"].files}
    assert "skill://pdf-tools/big.bin" not in mcp.resources
    with pytest.raises(RuntimeError, match="MCP_SKILL_FILE_MAX_BYTES"):
        make_app(mcp, MCP_SKILL_FILE_MAX_BYTES=BOUND * 2)


def test_a_skill_md_over_the_bound_is_no_skill(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    folder = write_skill(tmp_path / "skills")
    with (folder / "SKILL.md").open("a") as file:
        file.write("x" * BOUND)
    app = Flask("big-entry", root_path=str(tmp_path))
    app.config.update(TESTING=True, MCP_SKILL_FILE_MAX_BYTES=BOUND)
    mcp = MCP(name="big-entry")
    mcp.init_app(app)
    assert mcp.skills == {}
    assert "SKILL.md cannot be served" in caplog.text


@pytest.fixture
def served(tmp_path: Path, make_app: t.Any, make_client: t.Any) -> tuple[Path, t.Any]:
    """A served skill (bound: 1 KiB) and a modern client; a secret file lies beside the skills folder."""
    folder = write_skill(tmp_path / "skills")
    (tmp_path / "secret.txt").write_text("TOKEN=do-not-serve\n")
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "FORMS.md").write_text("TOKEN=do-not-serve\n")
    app = make_app(MCP(name="swapped"), MCP_SKILLS_FOLDER=str(tmp_path / "skills"), MCP_SKILL_FILE_MAX_BYTES=BOUND)
    return folder, make_client(app, era="modern")


def _refused(client: t.Any, uri: str, caplog: pytest.LogCaptureFixture, why: str) -> None:
    error = client.error("resources/read", {"uri": uri})
    assert error["code"] == -32602 and "do-not-serve" not in str(error)
    assert why in caplog.text


def test_a_file_replaced_by_a_link_out_of_the_skill_is_not_served(
    served: tuple[Path, t.Any], caplog: pytest.LogCaptureFixture
) -> None:
    folder, client = served
    (folder / "fill.py").unlink()
    os.symlink(folder.parent.parent / "secret.txt", folder / "fill.py")
    _refused(client, "skill://pdf-tools/fill.py", caplog, "fill.py cannot be opened without following a link")


def test_a_folder_replaced_by_a_link_out_of_the_skill_is_not_served(
    served: tuple[Path, t.Any], caplog: pytest.LogCaptureFixture
) -> None:
    folder, client = served
    shutil.rmtree(folder / "references")
    os.symlink(folder.parent.parent / "secrets", folder / "references")
    _refused(client, "skill://pdf-tools/references/FORMS.md", caplog, "'references' is no longer a folder")


def test_a_file_grown_past_the_bound_after_load_is_not_served(
    served: tuple[Path, t.Any], caplog: pytest.LogCaptureFixture
) -> None:
    folder, client = served
    (folder / "fill.py").write_bytes(b"#" * (BOUND + 1))
    _refused(client, "skill://pdf-tools/fill.py", caplog, "1025 bytes, more than MCP_SKILL_FILE_MAX_BYTES")


def test_a_file_replaced_by_a_named_pipe_is_not_served_and_does_not_block(
    served: tuple[Path, t.Any], caplog: pytest.LogCaptureFixture
) -> None:
    folder, client = served
    (folder / "fill.py").unlink()
    os.mkfifo(folder / "fill.py")
    _refused(client, "skill://pdf-tools/fill.py", caplog, "fill.py is not a regular file")


def test_a_skill_folder_replaced_after_load_is_not_served(
    served: tuple[Path, t.Any], caplog: pytest.LogCaptureFixture
) -> None:
    folder, client = served
    folder.rename(folder.parent / "moved")
    write_skill(folder.parent)  # another folder, at the same path
    _refused(client, "skill://pdf-tools/fill.py", caplog, "the skill's folder was replaced")


def test_a_link_inside_the_skill_is_read_where_it_leads(tmp_path: Path) -> None:
    folder = write_skill(tmp_path)
    os.symlink(folder / "references" / "FORMS.md", folder / "forms.md")
    skill = load_skill(folder)
    forms = next(file for file in skill.files if file.relative == "forms.md")
    assert forms.location == "references/FORMS.md"
    assert skill.read(forms) == b"Fields: name, date.\n"


def test_reading_stops_at_the_bound(tmp_path: Path) -> None:
    (tmp_path / "data.bin").write_bytes(b"x" * 100)
    root_id = folder_id(tmp_path)
    assert read_file(tmp_path, root_id, "data.bin", 100) == b"x" * 100
    assert digest_file(tmp_path, root_id, "data.bin", 100)[0] == 100
    for location in ("../data.bin", "./data.bin", "", "a//b"):
        with pytest.raises(FileRefused, match="not a path inside the skill"):
            read_file(tmp_path, root_id, location, 100)
    with pytest.raises(FileRefused, match=r"more than MCP_SKILL_FILE_MAX_BYTES \(99\)"):
        read_file(tmp_path, root_id, "data.bin", 99)


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="needs /proc")
def test_a_file_larger_than_its_size_said_is_read_only_up_to_the_bound() -> None:
    # /proc files say they are empty and are not: a file that grows as it is read looks the same.
    proc = Path("/proc/self")
    with pytest.raises(FileRefused, match="grew past MCP_SKILL_FILE_MAX_BYTES"):
        read_file(proc, folder_id(proc), "status", 10)
