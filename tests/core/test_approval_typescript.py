"""The TypeScript SDK's client answers the approval form of a tool marked ``confirm``, in both eras."""

from __future__ import annotations

import json
import subprocess
import typing as t
from pathlib import Path

import pytest
from flask import Flask

from tests.approval_app import delete_note_server
from tests.oauth.served_example import _Threaded
from tests.oauth.test_typescript_client import WAIT, installed_beside

SCRIPT = Path(__file__).with_name("typescript_approval.mjs")


@pytest.fixture(scope="module")
def typescript_client(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """``(node, script)``: the script beside its installed ``node_modules``."""
    return installed_beside(tmp_path_factory, SCRIPT)


@pytest.fixture
def deleted() -> list[int]:
    return []


@pytest.fixture
def served(make_app: t.Callable[..., Flask], deleted: list[int]) -> t.Iterator[str]:
    app = make_app(delete_note_server(deleted), MCP_SSE_KEEPALIVE=0.05)
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
