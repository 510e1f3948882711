"""``flask mcp call`` of a tool marked ``confirm``: y/N on a terminal, --yes without one."""

from __future__ import annotations

import json
import typing as t

import pytest
from flask import Flask

from tests.approval_app import delete_note_server


@pytest.fixture
def deleted() -> list[int]:
    return []


@pytest.fixture
def app(make_app: t.Callable[..., Flask], deleted: list[int]) -> t.Iterator[Flask]:
    app = make_app(delete_note_server(deleted))
    yield app
    app.extensions["mcp"].server.tasks.runner.shutdown(wait=False)


def test_without_a_terminal_the_call_is_refused_and_nothing_runs(app: Flask, deleted: list[int]) -> None:
    result = app.test_cli_runner().invoke(args=["mcp", "call", "delete_note", "note_id=7"])
    assert result.exit_code == 1 and "--yes" in result.output and "approve" in result.output
    assert deleted == []


def test_yes_approves_the_call(app: Flask, deleted: list[int]) -> None:
    result = app.test_cli_runner().invoke(args=["mcp", "call", "delete_note", "note_id=7", "--yes"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["content"][0]["text"] == "deleted 7" and deleted == [7]


@pytest.mark.parametrize(("typed", "runs"), [("y\n", True), ("n\n", False), ("\n", False)])
def test_a_terminal_asks_y_or_n_showing_the_call(
    app: Flask, deleted: list[int], monkeypatch: pytest.MonkeyPatch, typed: str, runs: bool
) -> None:
    monkeypatch.setattr("flask_mcp.cli.client.on_terminal", lambda: True)
    result = app.test_cli_runner().invoke(args=["mcp", "call", "delete_note", "note_id=7"], input=typed)
    assert "Delete note 7?" in result.stderr and '"note_id":7' in result.stderr and "Run it? [y/N]" in result.stderr
    assert deleted == ([7] if runs else [])
    assert result.exit_code == (0 if runs else 1)
