"""skills/list, skills/get and resources/directory/read show a caller only the skill files it could read."""

from __future__ import annotations

import json
import typing as t
from pathlib import Path

import pytest
from flask import Flask

from flask_mcp import MCP, ScopeRequired
from flask_mcp.components.skills import load_skill

from ...components.test_skills import write_skill

TOKENS = {
    "full": {"subject": "f", "scopes": ["secret"]},
    "plain": {"subject": "p", "scopes": []},
}
SECRET_URI = "skill://secret-plans/SKILL.md"


def _two_skills(root: Path) -> tuple[Path, Path]:
    public = write_skill(root, "open-notes")
    secret = write_skill(root, "secret-plans", "name: secret-plans\ndescription: The plans MARKER-7F3A\n")
    (secret / "ledger.csv").write_text("pin,1234\n")
    (secret / "fill.py").write_text("print('the plans')\n")
    (secret / "references" / "FORMS.md").write_text("Secret fields.\n")
    return public, secret


def _digests(folder: Path) -> set[str]:
    return {file.digest for file in load_skill(folder).files}


@pytest.fixture
def guarded(tmp_path: Path, make_app: t.Any) -> tuple[Flask, Path]:
    """``open-notes`` is public; ``secret-plans`` needs the scope ``secret``."""
    public, secret = _two_skills(tmp_path)
    mcp = MCP(name="guarded")
    mcp.add_skill(public)
    mcp.add_skill(secret, permissions=[ScopeRequired("secret")])
    return make_app(mcp, MCP_AUTH_TOKENS=TOKENS), secret


def _client(make_client: t.Any, app: Flask, era: str, token: str) -> t.Any:
    client = make_client(app, era=era, token=token)
    if era == "handshake":
        client.initialize()
    return client


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_a_caller_without_the_scope_sees_nothing_of_the_skill(
    guarded: tuple[Flask, Path], make_client: t.Any, era: str
) -> None:
    app, secret = guarded
    client = _client(make_client, app, era, "plain")
    listed = client.request("skills/list", {})
    assert [skill["uri"] for skill in listed["skills"]] == ["skill://open-notes/SKILL.md"]
    answers = [
        listed,
        client.error("skills/get", {"uri": SECRET_URI}),
        client.error("resources/directory/read", {"uri": "skill://secret-plans"}),
        client.error("resources/directory/read", {"uri": "skill://secret-plans/references"}),
    ]
    text = json.dumps(answers)
    assert "MARKER-7F3A" not in text and "ledger" not in text
    assert not any(digest in text for digest in _digests(secret))
    assert answers[1]["code"] == answers[2]["code"] == -32602
    # Exactly what a skill that does not exist gets.
    assert client.error("skills/get", {"uri": "skill://nothing/SKILL.md"})["code"] == answers[1]["code"]


@pytest.mark.parametrize("era", ["modern", "handshake"])
def test_a_caller_with_the_scope_sees_the_skill(guarded: tuple[Flask, Path], make_client: t.Any, era: str) -> None:
    app, secret = guarded
    client = _client(make_client, app, era, "full")
    assert len(client.request("skills/list", {})["skills"]) == 2
    got = client.request("skills/get", {"uri": SECRET_URI})["skill"]
    assert {resource["digest"] for resource in got["resources"]} == _digests(secret)
    children = client.request("resources/directory/read", {"uri": "skill://secret-plans"})["resources"]
    assert "ledger.csv" in [child["name"] for child in children]


def test_the_servers_default_permissions_guard_a_skill_given_none(
    tmp_path: Path, make_app: t.Any, make_client: t.Any
) -> None:
    _, secret = _two_skills(tmp_path)
    mcp = MCP(name="defaults", default_permissions=[ScopeRequired("secret")])
    mcp.add_skill(secret)
    app = make_app(mcp, MCP_AUTH_TOKENS=TOKENS)
    assert make_client(app, era="modern", token="plain").request("skills/list", {})["skills"] == []
    assert len(make_client(app, era="modern", token="full").request("skills/list", {})["skills"]) == 1


def test_a_skill_left_out_by_its_tags_is_not_there(tmp_path: Path, make_app: t.Any, make_client: t.Any) -> None:
    public, secret = _two_skills(tmp_path)
    mcp = MCP(name="tagged")
    mcp.add_skill(public)
    mcp.add_skill(secret, tags=["internal"])
    client = make_client(make_app(mcp, MCP_EXCLUDE_TAGS=["internal"]), era="modern")
    assert [skill["uri"] for skill in client.request("skills/list", {})["skills"]] == ["skill://open-notes/SKILL.md"]
    assert client.error("skills/get", {"uri": SECRET_URI})["code"] == -32602
    assert client.error("resources/directory/read", {"uri": "skill://secret-plans"})["code"] == -32602


def test_a_disabled_file_leaves_the_manifest_and_its_folder(
    tmp_path: Path, make_app: t.Any, make_client: t.Any
) -> None:
    public, _ = _two_skills(tmp_path)
    mcp = MCP(name="switched")
    mcp.add_skill(public)
    app = make_app(mcp)
    client = make_client(app, era="modern")
    forms = "skill://open-notes/references/FORMS.md"
    with app.app_context():
        mcp.disable(forms, "resource")
    (skill,) = client.request("skills/list", {})["skills"]
    assert forms not in {resource["uri"] for resource in skill["resources"]}
    root = client.request("resources/directory/read", {"uri": "skill://open-notes"})["resources"]
    assert "references" not in [child["name"] for child in root]  # a folder of nothing shown is no folder
    assert client.error("resources/directory/read", {"uri": "skill://open-notes/references"})["code"] == -32602
    with app.app_context():
        mcp.disable("skill://open-notes/SKILL.md", "resource")
    assert client.request("skills/list", {})["skills"] == []
    with app.app_context():
        mcp.enable("skill://open-notes/SKILL.md", "resource")
        mcp.enable(forms, "resource")
    (skill,) = client.request("skills/list", {})["skills"]
    assert forms in {resource["uri"] for resource in skill["resources"]}


def test_a_folder_is_read_a_page_at_a_time(tmp_path: Path, make_app: t.Any, make_client: t.Any) -> None:
    public, _ = _two_skills(tmp_path)
    for number in range(5):
        (public / f"note-{number}.md").write_text(f"Note {number}.\n")
    mcp = MCP(name="paged")
    mcp.add_skill(public)
    client = make_client(make_app(mcp, MCP_PAGE_SIZE=3), era="modern")
    seen: list[str] = []
    cursor: str | None = None
    while True:
        page = client.request(
            "resources/directory/read", {"uri": "skill://open-notes", **({"cursor": cursor} if cursor else {})}
        )
        seen += [child["name"] for child in page["resources"]]
        cursor = page.get("nextCursor")
        if cursor is None:
            break
    assert len(seen) == len(set(seen)) == 8  # SKILL.md, fill.py, references and five notes
    assert client.error("resources/directory/read", {"uri": "skill://open-notes", "cursor": "bogus"})["code"] == -32602
