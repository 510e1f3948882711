"""The TypeScript SDK's client answers the approval form of a tool marked ``confirm``, in both eras."""

from __future__ import annotations

import json
import shutil
import subprocess
import typing as t
from pathlib import Path

import pytest
from flask import Flask

from flask_mcp import MCP
from tests.oauth.served_example import _Threaded
from tests.oauth.test_typescript_client import CLIENT_PACKAGE, WAIT, _cannot, node_and_npm

SCRIPT = Path(__file__).with_name("typescript_approval.mjs")


@pytest.fixture(scope="module")
def typescript_client(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """``(node, script)``: the script beside its installed ``node_modules``."""
    tools = node_and_npm()
    if isinstance(tools, str):
        _cannot(tools)
    node, npm = tools
    prefix = tmp_path_factory.mktemp("typescript-approval")
    command = [*npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error"]
    installed = subprocess.run(
        [*command, "--prefer-offline", CLIENT_PACKAGE], capture_output=True, text=True, timeout=WAIT
    )
    if installed.returncode != 0:
        _cannot(f"npm could not install {CLIENT_PACKAGE}: {installed.stderr.strip()[-500:]}")
    script = prefix / SCRIPT.name
    shutil.copyfile(SCRIPT, script)
    return node, script


@pytest.fixture
def deleted() -> list[int]:
    return []


@pytest.fixture
def served(make_app: t.Callable[..., Flask], deleted: list[int]) -> t.Iterator[str]:
    mcp = MCP(name="notes")

    @mcp.tool(confirm="Delete note {note_id}?")
    def delete_note(note_id: int) -> str:
        deleted.append(note_id)
        return f"deleted {note_id}"

    app = make_app(mcp, MCP_SSE_KEEPALIVE=0.05)
    server = _Threaded(app)
    server.start()
    try:
        yield server.base + "/mcp"
    finally:
        server.stop()
        app.extensions["mcp"].shutdown()


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
@pytest.mark.parametrize("action", ["accept", "decline"])
def test_the_typescript_client_answers_the_approval_form(
    typescript_client: tuple[str, Path], served: str, deleted: list[int], mode: str, action: str
) -> None:
    node, script = typescript_client
    done = subprocess.run(
        [node, str(script), served, mode, action], cwd=script.parent, capture_output=True, text=True, timeout=WAIT
    )
    printed = json.loads(done.stdout.strip().splitlines()[-1])
    assert done.returncode == 0, printed
    assert len(printed["asked"]) == 1 and printed["asked"][0].startswith("Delete note 7?")
    assert '"note_id":7' in printed["asked"][0]
    if action == "accept":
        assert printed == {**printed, "isError": False, "text": "deleted 7"} and deleted == [7]
    else:
        assert printed["isError"] is True and "declined" in printed["text"] and deleted == []
